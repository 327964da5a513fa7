package heatmap_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/capturefile"
	"github.com/subsecond/subsecond/query"
)

// peggedCapture reads ../testdata/perf/dd-pegged-cpu1.perf.txt.zst: 8 s of a
// 2-CPU machine, recorded with perf record -F 49 -a -g, while dd read
// /dev/urandom 64 bytes at a time pinned to CPU 1 (see the MANIFEST): CPU 1
// is ~100% busy, ~80% of it in the kernel.
func peggedCapture(t *testing.T) *subsecond.Capture {
	t.Helper()
	c, err := capturefile.Read(filepath.Join("..", "testdata", "perf", "dd-pegged-cpu1.perf.txt.zst"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ddSpot returns the episode of CPU 1 in rep, or nil.
func ddSpot(rep *heatmap.Report) *heatmap.Spot {
	for i := range rep.Spots {
		if rep.Spots[i].CPU == 1 {
			return &rep.Spots[i]
		}
	}
	return nil
}

// TestPeggedCoreSystemMeasure: measure=system finds the core pegged in the
// kernel as one episode spanning dd's run, with its busy, system and user
// shares, and finds no other core.
func TestPeggedCoreSystemMeasure(t *testing.T) {
	c := peggedCapture(t)
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Measure: heatmap.MeasureSystem})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Measure != "system" || rep.Threshold != query.DefaultThreshold || len(rep.Spots) != 1 {
		t.Fatalf("measure %q threshold %v, %d spots %+v; want CPU 1 alone", rep.Measure, rep.Threshold, len(rep.Spots), rep.Spots)
	}
	s := ddSpot(rep)
	if s == nil || s.Comm != "dd" || s.End-s.Start < 7e9 {
		t.Fatalf("spot %+v; want dd on CPU 1 for at least 7 s", rep.Spots[0])
	}
	if s.Busy < 0.95 || s.System < 0.75 || s.System > 0.9 || math.Abs(s.User-(s.Busy-s.System)) > 1e-9 {
		t.Errorf("busy %.2f system %.2f user %.2f; want busy ≥ 95%%, system 75–90%%, user = busy − system", s.Busy, s.System, s.User)
	}
	if !strings.Contains(s.Stack, "get_random_bytes_user") {
		t.Errorf("top stack %q; want dd reading /dev/urandom", s.Stack)
	}
	// The busy measure finds it too, beside CPU 0 (other work, mostly in
	// user space, which the system measure rightly leaves out).
	rep, err = heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ddSpot(rep); rep.Measure != "busy" || s == nil || s.Comm != "dd" {
		t.Errorf("busy measure: %+v; want dd's episode on CPU 1", rep.Spots)
	}
	for _, s := range rep.Spots {
		if s.CPU == 0 && s.System > 0.5 {
			t.Errorf("CPU 0 system %.2f; the recording's other work ran mostly in user space", s.System)
		}
	}
}

// TestPeggedCoreNotHiddenByOnlyKernel is the case: with only=kernel
// the pegged core keeps ~80% of its samples. The default threshold finds
// it; a stricter one hides it, and the report says so.
func TestPeggedCoreNotHiddenByOnlyKernel(t *testing.T) {
	c := peggedCapture(t)
	f := query.Filter{Only: "kernel"}
	rep, err := heatmap.Hotspots(c, f, heatmap.HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ddSpot(rep); s == nil || s.Comm != "dd" || s.Busy < 0.75 {
		t.Errorf("only=kernel, default threshold: %+v; want dd's episode on CPU 1", rep.Spots)
	}
	rep, err = heatmap.Hotspots(c, f, heatmap.HotOptions{Threshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if ddSpot(rep) != nil {
		t.Fatalf("only=kernel, threshold 0.9: CPU 1 found; the test needs it hidden")
	}
	hidden := false
	for _, cpu := range rep.Hidden {
		hidden = hidden || cpu == 1
	}
	if !hidden || !strings.Contains(rep.Note, "hidden by only=kernel") || !strings.Contains(rep.Note, "≥ 90%") {
		t.Errorf("only=kernel, threshold 0.9: hidden %v, note %q; want CPU 1 named as hidden by only=kernel", rep.Hidden, rep.Note)
	}
	// Without a narrowing filter there is nothing to say.
	rep, err = heatmap.Hotspots(c, query.Filter{CPUs: []int32{1}}, heatmap.HotOptions{Threshold: 0.9, Measure: heatmap.MeasureSystem})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Spots) != 0 || rep.Note != "" || len(rep.Hidden) != 0 {
		t.Errorf("cpu=1, system ≥ 90%%: %d spots, note %q; want none and no note", len(rep.Spots), rep.Note)
	}
}

// TestHotspotScore checks the documented score on a capture with a known
// answer: CPU 0 runs "a" for 10 s, "b" for 3 s, then "a" for 10 s, at
// 10 Hz, one sample per 0.1 s bucket. b's episode is unusual (usual 0, score = its samples); a's first
// episode has a's 100 samples of the second one outside, among 130
// measured samples outside plus one second (10 samples) counted as
// another command's: usual 100/140.
func TestHotspotScore(t *testing.T) {
	b := subsecond.NewBuilder()
	t0 := int64(100e9)
	add := func(comm string, from, to int) {
		for i := from; i < to; i++ {
			b.Add(&subsecond.Sample{Comm: comm, PID: 7, TID: 7, CPU: 0, Time: t0 + int64(i)*100e6, Event: "cpu-clock",
				Frames: []subsecond.Frame{{Symbol: "work", DSO: "/bin/" + comm, Kind: subsecond.KindUser}}})
		}
	}
	add("a", 0, 100)
	add("b", 100, 130)
	add("a", 130, 230)
	c := b.Capture(subsecond.Profile{})
	// A minimum of one bucket keeps the episodes' edges exact.
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Bucket: 100e6, Min: 100e6})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		comm         string
		start, score float64
	}{
		{"b", 10, 30},
		{"a", 0, 100 * (1 - 100.0/140)},
		{"a", 13, 100 * (1 - 100.0/140)},
	}
	if len(rep.Spots) != len(want) {
		t.Fatalf("%d spots %+v; want %d", len(rep.Spots), rep.Spots, len(want))
	}
	for i, w := range want {
		s := rep.Spots[i]
		if s.Comm != w.comm || float64(s.Start-t0)/1e9 != w.start || math.Abs(s.Score-w.score) > 1e-6 {
			t.Errorf("spot %d: %s from %v s, score %v (usual %v); want %s from %v s, score %v", i, s.Comm, float64(s.Start-t0)/1e9, s.Score, s.Usual, w.comm, w.start, w.score)
		}
	}
}

// TestHotspotsInRange: a search of a range lists the pegged core's episode
// cut to the range (at the buckets wholly inside it, for a range that
// does not fall on them), only cells inside it, and says what it searched;
// a search of the whole capture by its bounds is the plain search.
func TestHotspotsInRange(t *testing.T) {
	c := peggedCapture(t)
	whole, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := ddSpot(whole)
	if all == nil {
		t.Fatal("no episode on CPU 1")
	}
	t0 := whole.T0
	byBounds, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Range: subsecond.Range{Start: t0, End: c.Profile.End + 1}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(byBounds) != fmt.Sprint(whole) {
		t.Errorf("search of [T0, end] = %+v; want the whole capture's %+v", byBounds, whole)
	}
	for _, tc := range []struct {
		r          subsecond.Range
		start, end int64 // the episode's, from T0
	}{
		{subsecond.Range{Start: t0 + 3e9, End: t0 + 6e9}, 3e9, 6e9},
		{subsecond.Range{Start: t0 + 2_950_000_000, End: t0 + 6_040_000_000}, 3e9, 6e9},
	} {
		rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Range: tc.r})
		if err != nil {
			t.Fatal(err)
		}
		s := ddSpot(rep)
		if s == nil || s.Comm != "dd" || s.Start-t0 != tc.start || s.End-t0 != tc.end {
			t.Errorf("range [%d, %d) ns: CPU 1's episode %+v; want dd in [%d, %d) ns", tc.r.Start-t0, tc.r.End-t0, s, tc.start, tc.end)
		}
		if s != nil && (s.Samples >= all.Samples || s.Samples < 140) {
			t.Errorf("range [%d, %d) ns: %d samples in 3 s at 49 Hz; the whole episode has %d", tc.r.Start-t0, tc.r.End-t0, s.Samples, all.Samples)
		}
		for _, sp := range rep.Spots {
			if sp.Start < tc.r.Start || sp.End > tc.r.End {
				t.Errorf("range [%d, %d) ns: episode [%d, %d) ns reaches outside it", tc.r.Start-t0, tc.r.End-t0, sp.Start-t0, sp.End-t0)
			}
		}
		if len(rep.Cells) == 0 {
			t.Errorf("range [%d, %d) ns: no cells", tc.r.Start-t0, tc.r.End-t0)
		}
		for _, cell := range rep.Cells {
			if cell.Start < tc.r.Start || cell.End > tc.r.End {
				t.Errorf("range [%d, %d) ns: cell [%d, %d) ns reaches outside it", tc.r.Start-t0, tc.r.End-t0, cell.Start-t0, cell.End-t0)
			}
		}
		if rep.Start != tc.r.Start || rep.End != tc.r.End {
			t.Errorf("report's range [%d, %d); want [%d, %d)", rep.Start, rep.End, tc.r.Start, tc.r.End)
		}
	}
	// A range shorter than the episode's minimum finds none.
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Range: subsecond.Range{Start: t0 + 3e9, End: t0 + 3_500_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Spots) != 0 || rep.Found != 0 {
		t.Errorf("half a second: %d episodes %+v; want none shorter than min (1 s)", rep.Found, rep.Spots)
	}
}
