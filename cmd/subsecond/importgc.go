package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// importGCPercent is GOGC during `subsecond import`, which runs alone,
// while the heap that survives a collection stays under importGCLive: the
// collector runs a quarter as often. Measured on the real 27 s capture
// (55.5 MB of text, 2 CPUs, load 4.7, medians of 20 runs alternated):
// task-clock 237 → 221 ms, peak RSS 69 → 77 MB; GOGC=200 gave 227 ms. The
// bundled incident: 1.33 → 1.30 s of CPU (within the noise), peak RSS 66
// → 98 MB.
const importGCPercent = 400

// importGCLive is the live heap past which an import's collector goes back
// to the GOGC it had, so that the heap grows past about five times this
// only as it would have anyway.
const importGCLive = 256 << 20

// tuneGC sets GOGC to pct until a collection leaves more than live bytes
// of live heap, or until stop is called; then it puts back the setting it
// replaced, unless something else has changed it since. With $GOGC set
// (getenv), it changes nothing.
func tuneGC(getenv func(string) string, pct int, live uint64) (stop func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	var mu sync.Mutex
	on := true
	prev := debug.SetGCPercent(pct)
	restore := func() {
		mu.Lock()
		defer mu.Unlock()
		if on {
			on = false
			if cur := debug.SetGCPercent(prev); cur != pct {
				debug.SetGCPercent(cur)
			}
		}
	}
	// A sentinel that only a collection frees: its cleanup runs after
	// each, reads what survived, and arms the next.
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var watch func()
	watch = func() {
		runtime.AddCleanup(&gcSentinel{}, func(struct{}) {
			mu.Lock()
			stopped := !on
			mu.Unlock()
			if stopped {
				return
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > live {
				restore()
				return
			}
			watch()
		}, struct{}{})
	}
	watch()
	return restore
}

// gcSentinel is an object the collector frees; its pointer keeps it out
// of the tiny allocator, whose blocks hold several objects.
type gcSentinel struct {
	_ *int
	_ [8]byte
}
