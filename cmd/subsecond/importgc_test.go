package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent returns GOGC's current setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestTuneGC: tuneGC raises GOGC until the live heap passes its bound,
// then puts back the setting it replaced; stop puts it back too; with
// $GOGC set it changes nothing.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	noEnv := func(string) string { return "" }

	stop := tuneGC(noEnv, 400, 1<<40)
	if got := gcPercent(); got != 400 {
		t.Fatalf("GOGC = %d while tuned; want 400", got)
	}
	runtime.GC()
	runtime.GC()
	if got := gcPercent(); got != 400 {
		t.Fatalf("GOGC = %d after collections under the bound; want 400", got)
	}
	stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC = %d after stop; want 100", got)
	}

	stop = tuneGC(noEnv, 400, 4<<20)
	defer stop()
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 256<<10) // 16 MiB in all
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d with 16 MiB live past a bound of 4 MiB; want 100 again", gcPercent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(live)

	stop = tuneGC(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}, 400, 1<<40)
	defer stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC = %d with $GOGC set; want 100", got)
	}
}
