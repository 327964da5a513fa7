package timeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/query"
)

// rangeNight is three one-minute captures of 8 CPUs at 49 Hz, the third
// after a 3 s pause, with a 5 s kernel burst on CPU 3 across the first
// rotation point: from 2 s before the first capture's end to 3 s into the
// second.
func rangeNight() *nightgen.Night {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 8, Hz: 49, Start: start, Captures: 3, Length: time.Minute,
		Gaps: map[int]time.Duration{2: 3 * time.Second}, Unanchored: -1, Seed: 11}
	rot := n.CaptureStart(1)
	n.Bursts = []nightgen.Burst{{CPU: 3, Start: rot.Add(-2 * time.Second), End: rot.Add(3 * time.Second)}}
	return n
}

// written counts what the generator wrote in the whole seconds of [from,
// to) on cpus (none: all): every sample, or the busy ones.
func written(counts nightgen.Counts, from, to time.Time, busy bool, cpus ...int) int64 {
	var n int64
	for k, c := range counts {
		if k.Second < from.Unix() || k.Second >= to.Unix() {
			continue
		}
		if len(cpus) > 0 && !containsInt(cpus, k.CPU) {
			continue
		}
		if busy {
			n += c.Busy
		} else {
			n += c.Samples
		}
	}
	return n
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestHostRangeAcrossRotation checks the flame graph of the 10 s before a
// marker 2 s after a burst that crossed a rotation point: its total is the
// generator's count of that wall-clock window across both files, and so
// is the burst's kernel frame.
func TestHostRangeAcrossRotation(t *testing.T) {
	n := rangeNight()
	src, counts, ids := importNight(t, n)
	ctx := context.Background()
	marker := n.Bursts[0].End.Add(2 * time.Second)
	from, to := marker.Add(-10*time.Second), marker
	sel, err := Select(ctx, src, "node-1", from.UnixNano(), to.UnixNano(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Captures) != 2 || sel.Captures[0].ID != ids[0] || sel.Captures[1].ID != ids[1] {
		t.Fatalf("selection holds captures %+v; want the first two", sel.Captures)
	}
	if sel.Unrecorded != 0 {
		t.Errorf("the range across a rotation point has %d ns not recorded; want 0", sel.Unrecorded)
	}
	if want := written(counts, from, to, false); sel.Samples != want {
		t.Errorf("the summaries count %d samples in the range; the generator wrote %d", sel.Samples, want)
	}
	c, err := sel.Load(ctx, src, NewRangeCache(0))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: sel.From, End: sel.To})
	if err != nil {
		t.Fatal(err)
	}
	if want := written(counts, from, to, true); g.Total != want {
		t.Errorf("flame graph of the 10 s before the marker has %d samples; the generator wrote %d busy ones", g.Total, want)
	}
	burst := written(counts, n.Bursts[0].Start, n.Bursts[0].End, true, 3)
	var kernel int64
	for i := range g.Len() {
		if g.NameOf(i) == "mem_cgroup_nr_lru_pages" {
			kernel += g.TotalN[i]
		}
	}
	if kernel != burst || burst < 5*49-5 {
		t.Errorf("the burst's kernel frame holds %d samples; the generator wrote %d for the 5 s burst", kernel, burst)
	}
	// Idle included, and one CPU: the counts of every sample of that CPU.
	all, err := flame.Build(c, query.Filter{Idle: true, CPUs: []int32{3}}, subsecond.Range{Start: sel.From, End: sel.To})
	if err != nil {
		t.Fatal(err)
	}
	if want := written(counts, from, to, false, 3); all.Total != want {
		t.Errorf("CPU 3 with idle: %d samples; the generator wrote %d", all.Total, want)
	}
}

// TestHostRangeUnrecorded checks that the 3 s pause before the third
// capture, and the time before the first and after the last, are reported
// as not recorded, and a range no capture overlaps is refused.
func TestHostRangeUnrecorded(t *testing.T) {
	n := rangeNight()
	src, _, _ := importNight(t, n)
	ctx := context.Background()
	c2 := n.CaptureStart(2)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     time.Duration
	}{
		{"the pause", c2.Add(-10 * time.Second), c2.Add(10 * time.Second), 3 * time.Second},
		{"a rotation", n.CaptureStart(1).Add(-5 * time.Second), n.CaptureStart(1).Add(5 * time.Second), 0},
		{"before the first", n.Start.Add(-2 * time.Second), n.Start.Add(8 * time.Second), 2 * time.Second},
		{"after the last", c2.Add(55 * time.Second), c2.Add(65 * time.Second), 5 * time.Second},
	} {
		sel, err := Select(ctx, src, "node-1", tc.from.UnixNano(), tc.to.UnixNano(), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A capture ends one sampling period after its last sample, which
		// the generator writes up to a period before the capture's end and
		// jitters by up to 0.4 ms: the pause is 3 s within a period.
		period := time.Second / time.Duration(n.Hz)
		if d := time.Duration(sel.Unrecorded) - tc.want; d < -period-time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: %v not recorded; want %v", tc.name, time.Duration(sel.Unrecorded), tc.want)
		}
	}
	_, err := Select(ctx, src, "node-1", c2.Add(-2*time.Second).UnixNano(), c2.Add(-time.Second).UnixNano(), nil)
	if !errors.Is(err, subsecond.ErrEmptyRange) {
		t.Errorf("a range inside the pause: %v; want ErrEmptyRange", err)
	}
}

// TestHostRangeDiff checks the differential graph of two host ranges on
// different captures against the two ranges' graphs computed on their
// own: every frame's counts on each side.
func TestHostRangeDiff(t *testing.T) {
	n := rangeNight()
	src, _, _ := importNight(t, n)
	ctx := context.Background()
	rot := n.CaptureStart(1)
	q := &query.Query{From: query.WallTime{NS: rot.Add(-5 * time.Second).UnixNano(), Set: true}, To: query.WallTime{NS: rot.Add(5 * time.Second).UnixNano(), Set: true},
		From2: query.WallTime{NS: rot.Add(75 * time.Second).UnixNano(), Set: true}, To2: query.WallTime{NS: rot.Add(85 * time.Second).UnixNano(), Set: true}}
	target, base, err := SelectQuery(ctx, src, "node-1", q, true)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewRangeCache(0)
	tc, err := target.Load(ctx, src, cache)
	if err != nil {
		t.Fatal(err)
	}
	bc, err := base.Load(ctx, src, cache)
	if err != nil {
		t.Fatal(err)
	}
	d, err := flame.DiffProfiles(tc, bc, q.Filter, q.Range2, q.Range)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: each side's samples by their stack of names.
	side := func(c *subsecond.Capture) map[string]int64 {
		m := map[string]int64{}
		idle := subsecond.ClassesOf(c)
		for i := range c.Samples.Len() {
			if idle.Idle(i) {
				continue
			}
			path := c.Strings[c.Samples.Comm[i]]
			m[path]++
			for _, f := range reversed(c.Stack(nil, c.Samples.Stack[i])) {
				path += ";" + c.Strings[c.Frames[f].Symbol]
				m[path]++
			}
		}
		return m
	}
	wantT, wantB := side(tc), side(bc)
	got := 0
	for i := 1; i < d.Len(); i++ {
		path := ""
		for j, name := range d.Path(i) {
			if j > 0 {
				path += ";"
			}
			path += name
		}
		if d.TotalN[i] != wantT[path] || d.BaseN[i] != wantB[path] {
			t.Errorf("%s: %d target, %d base; by hand %d, %d", path, d.TotalN[i], d.BaseN[i], wantT[path], wantB[path])
		}
		got++
	}
	union := map[string]bool{}
	for k := range wantT {
		union[k] = true
	}
	for k := range wantB {
		union[k] = true
	}
	if got != len(union) {
		t.Errorf("the diff has %d frames; the two sides by hand %d", got, len(union))
	}
	if d.Total == 0 || d.BaseTotal == 0 {
		t.Errorf("diff totals %d and %d; want both sides counted", d.Total, d.BaseTotal)
	}
}

func reversed(s []int32) []int32 {
	for a, b := 0, len(s)-1; a < b; a, b = a+1, b-1 {
		s[a], s[b] = s[b], s[a]
	}
	return s
}
