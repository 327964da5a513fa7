package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
	"github.com/subsecond/subsecond/timeline"
)

// TestRecordStateBesideRealPerf records this machine with the real perf
// for a few seconds while dd, pinned to the last CPU, reads /dev/zero in
// the kernel, and writes a line to /dev/kmsg meanwhile: the state
// sampler's kernel time of that CPU (sys, irq and soft) and the samples'
// system share agree within 10 points (or the samples' sampling error) in
// the seconds dd ran, on one clock, and the kernel log line is a marker. As root with perf only (CI runs it so).
func TestRecordStateBesideRealPerf(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs Linux and root: perf record -a and /dev/kmsg")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	if out, err := exec.Command(perf, "record", "-a", "-o", filepath.Join(t.TempDir(), "probe.data"), "--", "true").CombinedOutput(); err != nil {
		t.Skipf("perf record -a is not permitted here: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	cpu := runtime.NumCPU() - 1
	dir := t.TempDir()
	db := filepath.Join(dir, "rec.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"record", "--dir", filepath.Join(dir, "rec"), "--db", db, "--host", "state-test",
			"--switch", "3s", "--keep", "1h", "--freq", "99", "--state-interval", "1s"}, strings.NewReader(""), out, errOut)
	}()
	waitUntil(t, "perf to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "rec", "perf.data"))
		return err == nil
	})
	time.Sleep(1500 * time.Millisecond)
	ddFrom := time.Now()
	dd := exec.Command("taskset", "-c", strconv.Itoa(cpu), "dd", "if=/dev/zero", "of=/dev/null", "bs=1M")
	dd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // a killed test leaves no dd spinning
	if err := dd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	line := fmt.Sprintf("subsecond-test NETDEV WATCHDOG: transmit queue %d timed out", rand.IntN(1_000_000))
	wrote := time.Now()
	if f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); err == nil {
		fmt.Fprintf(f, "<6>%s\n", line)
		f.Close()
	} else {
		t.Logf("no /dev/kmsg to write to: %v", err)
		line = ""
	}
	time.Sleep(5 * time.Second)
	dd.Process.Kill()
	dd.Wait()
	ddTo := time.Now()
	time.Sleep(2 * time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("record: %v\n%s", err, errOut.String())
	}

	s, err := sqlite.OpenStore(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bctx := context.Background()
	if line != "" {
		ms, err := s.Markers(bctx, "state-test", 0, timeline.EndOfTime)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			if strings.Contains(m.Text, line) {
				found = true
				if d := time.Duration(m.Time - wrote.UnixNano()); d < -2*time.Second || d > 2*time.Second {
					t.Errorf("marker at %v, %v from the write; want within 2 s", time.Unix(0, m.Time), d)
				}
			}
		}
		if !found {
			t.Errorf("the kernel log line %q is no marker; markers: %+v\n%s", line, ms, errOut.String())
		}
	}
	// The seconds dd ran whole: its first and last are partial.
	from := ddFrom.Truncate(time.Second).Add(2 * time.Second).UnixNano()
	to := ddTo.Truncate(time.Second).Add(-time.Second).UnixNano()
	// A sample whose leaf is in the kernel is kernel time of any kind:
	// mpstat's %sys, %irq and %soft together.
	sys := map[int64]float64{} // by the second [t-1s, t) a point at t covers
	for _, kind := range []string{"cpu.sys", "cpu.irq", "cpu.soft"} {
		series, err := s.Series(bctx, "state-test", kind, from, to+int64(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range series {
			if x.CPU == int32(cpu) {
				for _, p := range x.Points {
					// A point taken late (a loaded machine) is the second its
					// interval ends in, as the lanes count it.
					sys[subsecond.FloorSecond(p.Time-1)] += p.Value
				}
			}
		}
	}
	g, err := timeline.Timeline(bctx, newNight(s), "state-test", timeline.Span{From: from, To: to, Bucket: int64(time.Second)})
	if err != nil {
		t.Fatalf("timeline: %v\n%s", err, errOut.String())
	}
	row := -1
	for r, c := range g.CPUs {
		if c == int32(cpu) {
			row = r
		}
	}
	if row < 0 {
		// Say what was stored, so that a failure on a loaded machine
		// tells a lost capture from a late one.
		var stored strings.Builder
		if ps, err := s.List(bctx); err == nil {
			for _, p := range ps {
				fmt.Fprintf(&stored, "\n  %s: %d samples, %s to %s (wall %s)", p.FileName, p.Samples,
					time.Unix(0, p.Wall.Wall(p.Start)).Format("15:04:05.000"), time.Unix(0, p.Wall.Wall(p.End)).Format("15:04:05.000"), p.Wall.Source)
			}
		}
		t.Fatalf("no samples of CPU %d in %s to %s; stored:%s\n%s", cpu, time.Unix(0, from).Format("15:04:05"), time.Unix(0, to).Format("15:04:05"), stored.String(), errOut.String())
	}
	frac := g.Fractions(heatmap.MeasureSystem)
	compared, close := 0, 0
	for b := range g.Buckets {
		at := g.From + int64(b)*g.Bucket
		v, ok := sys[at]
		if !ok || g.Samples[row][b] == 0 {
			t.Errorf("second %v: series point %v, %d samples; want both", time.Unix(0, at).UTC(), ok, g.Samples[row][b])
			continue
		}
		samples := 100 * frac[row][b]
		t.Logf("second %v: cpu.sys+irq+soft %.1f%%, samples' system share %.1f%% of %d", time.Unix(0, at).UTC().Format("15:04:05"), v, samples, g.Samples[row][b])
		// Both are sampled: perf at 99 Hz, the kernel's accounting at
		// each tick. Within 10 points, or three standard errors of the
		// samples' share where that is wider; a reading of /proc/stat
		// that a loaded machine delays covers a slightly different
		// second, so two thirds of the seconds must agree so, and none
		// be 25 points apart.
		p := samples / 100
		tol := max(10, 300*math.Sqrt(p*(1-p)/float64(g.Samples[row][b])))
		if d := math.Abs(v - samples); d > max(25, tol) {
			t.Errorf("second %v: kernel time %.1f%% but the samples' system share %.1f%%; want within %.0f points (25 at worst)", time.Unix(0, at).UTC(), v, samples, tol)
		} else if d <= tol {
			close++
		}
		compared++
	}
	if 3*close < 2*compared {
		t.Errorf("%d of %d seconds have kernel time within 10 points (or three standard errors) of the samples' system share; want two thirds at least", close, compared)
	}
	if compared < 2 {
		t.Errorf("compared %d seconds; want at least 2 of dd's", compared)
	}
}
