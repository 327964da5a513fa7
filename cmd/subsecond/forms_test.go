package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// formFile is one of the real captures in ../../testdata/perf.
func formFile(name string) string { return filepath.Join("..", "..", "testdata", "perf", name) }

// TestTracepointFirstCLI imports a capture whose first sample is a
// tracepoint: info lists both events with their counts and names the
// default, and collapse keeps the sampling event.
func TestTracepointFirstCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cli.db")
	file := formFile("tracepoint-first.perf.txt.gz")
	out, errOut, err := runStoreCmd(t, "", "import", "--db", db, file)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	id := idRE.FindString(out)
	out, _, err = runStoreCmd(t, "", "info", "--db", db, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Events:\n  sched:sched_switch: 282 samples\n  cpu-clock: 656 samples (default)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	out, errOut, err = runStoreCmd(t, "", "collapse", file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sched_switch") || !strings.Contains(errOut, `kept event "cpu-clock"; skipped 282 samples of other events`) {
		t.Errorf("collapse: stderr %q; want cpu-clock kept and the 282 tracepoint samples skipped", errOut)
	}
}

// TestNoTimeCLI reads a capture printed by perf script -F
// comm,pid,ip,sym,dso: collapse and flamegraph use every sample, and the
// time views fail with a sentence saying why and how to record times.
func TestNoTimeCLI(t *testing.T) {
	file := formFile("no-time-callchain.perf.txt.gz")
	out, _, err := runStoreCmd(t, "", "collapse", file)
	if err != nil || !strings.Contains(out, "dd;read;entry_SYSCALL_64_after_hwframe;do_syscall_64") {
		t.Errorf("collapse = %v:\n%s", err, out)
	}
	out, _, err = runStoreCmd(t, "", "flamegraph", "--format", "folded", file)
	if err != nil || !strings.Contains(out, "dd;read;entry_SYSCALL_64_after_hwframe;do_syscall_64") {
		t.Errorf("flamegraph = %v:\n%.300s", err, out)
	}
	db := filepath.Join(t.TempDir(), "cli.db")
	out, _, err = runStoreCmd(t, "", "import", "--db", db, file)
	if err != nil || !strings.Contains(out, "242 samples, no time,") {
		t.Errorf("import = %q, %v; want 242 samples and no time", out, err)
	}
	id := idRE.FindString(out)
	out, _, err = runStoreCmd(t, "", "info", "--db", db, id)
	if err != nil || !strings.Contains(out, "Duration:") || !strings.Contains(out, "none: the capture has no timestamps") ||
		strings.Contains(out, "First sample") || !strings.Contains(out, "(no name: perf script printed no event field): 242 samples") {
		t.Errorf("info = %v:\n%s", err, out)
	}
	for _, args := range [][]string{{"heatmap", file}, {"cpus", file}, {"hotspots", file}, {"flamegraph", "--start", "1", file}} {
		_, _, err := runStoreCmd(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "no timestamps") || strings.HasSuffix(err.Error(), "invalid") {
			t.Errorf("%v: error %v; want one saying the capture has no timestamps", args, err)
		}
	}
}

// TestNoTimeHasNoWallClock imports, beside a realtime capture of the same
// host, a capture recorded on the realtime clock whose perf script -F list
// left out time: its samples have no time, so it has no wall-clock time
// either. It must not stretch the host's night back to 1970, come first in
// a folder's import order, or look old enough to prune.
func TestNoTimeHasNoWallClock(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{"no-time-realtime.perf.txt.gz": "a-untimed.txt.gz", "realtime-2cpu-1s.perf.txt.gz": "b-timed.txt.gz"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wallclock", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(t.TempDir(), "cli.db")
	out, _, err := runStoreCmd(t, "", "import", "--db", db, dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], "b-timed") || !strings.Contains(lines[1], "a-untimed.txt.gz: 45 samples, no time,") {
		t.Fatalf("import DIR = %v:\n%s\nwant the timed capture first, then the untimed one", err, out)
	}
	untimed := idRE.FindString(lines[1])

	out, _, err = runStoreCmd(t, "", "info", "--db", db, untimed)
	if err != nil || !strings.Contains(out, "Wall clock:   none (no timestamps)\n") || !strings.Contains(out, "Frequency:    unknown (no timestamps)\n") {
		t.Errorf("info = %v:\n%s\nwant no wall clock and no frequency, for want of timestamps", err, out)
	}
	out, _, err = runStoreCmd(t, "", "hosts", "--db", db)
	if want := "vm    2         143      2026-11-30T17:11:05.039Z  2026-11-30T17:11:06.039Z  1"; err != nil || !strings.Contains(out, want) {
		t.Errorf("hosts = %v:\n%s\nwant the night of the timed capture alone, one capture without a wall clock:\n%s", err, out, want)
	}
	out, _, err = runStoreCmd(t, "", "prune", "--db", db, "--older-than", "1h", "--dry-run")
	if err != nil || strings.Contains(out, untimed) {
		t.Errorf("prune --dry-run = %v:\n%s\nwant the untimed capture %s kept", err, out, untimed)
	}
}
