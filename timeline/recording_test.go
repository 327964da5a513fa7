package timeline

import (
	"context"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/nightgen"
)

func TestRecordings(t *testing.T) {
	const s = int64(time.Second)
	at := func(id string, start, end int64, hz float64) Capture {
		return Capture{ID: id, Start: start, End: end, Hz: hz}
	}
	// At 50 Hz a sample every 20 ms; End is one interval after the last
	// sample.
	caps := []Capture{
		at("a", 0, 60*s, 50),
		at("b", 60*s+20e6, 120*s, 50),   // one sample lost: 40 ms from a's last sample
		at("c", 120*s+40e6, 180*s, 50),  // 60 ms: three intervals, a gap
		at("d", 183*s, 240*s, 50),       // 3 s later
		at("e", 240*s-100e6, 300*s, 50), // overlapping d
		at("f", 300*s+500e6, 360*s, 0),  // no rate: only touching counts
		at("g", 360*s, 420*s, 0),        // touching f
	}
	rs := Recordings(caps)
	var got [][]string
	for _, r := range rs {
		var ids []string
		for _, c := range r.Captures {
			ids = append(ids, c.ID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"a", "b"}, {"c"}, {"d", "e"}, {"f", "g"}}
	if len(got) != len(want) {
		t.Fatalf("Recordings = %v; want %v", got, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) || got[i][0] != want[i][0] || got[i][len(got[i])-1] != want[i][len(want[i])-1] {
			t.Errorf("Recordings = %v; want %v", got, want)
		}
	}
	if rs[0].Start != 0 || rs[0].End != 120*s {
		t.Errorf("first recording spans [%d, %d); want [0, 120 s)", rs[0].Start, rs[0].End)
	}
	for _, tc := range []struct {
		from, to, missing int64
	}{
		{10 * s, 100 * s, 0},       // across a's and b's rotation point
		{115 * s, 125 * s, 40e6},   // across the 40 ms between b and c
		{175 * s, 190 * s, 3 * s},  // across the 3 s pause
		{-5 * s, 5 * s, 5 * s},     // before the first
		{410 * s, 430 * s, 10 * s}, // after the last
		{238 * s, 242 * s, 0},      // across d and e's overlap
	} {
		if got := Missing(rs, tc.from, tc.to); got != tc.missing {
			t.Errorf("Missing(%d s, %d s) = %d; want %d", tc.from/s, tc.to/s, got, tc.missing)
		}
	}
	if p, ok := Recorded(rs, 175*s, 185*s); !ok || p.From != 175*s || p.To != 185*s || p.Missing != 3*s {
		t.Errorf("Recorded(175 s, 185 s) = %+v, %v; want all of it, 3 s missing", p, ok)
	}
	if p, ok := Recorded(rs, 415*s, 430*s); !ok || p.From != 415*s || p.To != 420*s || p.Missing != 0 {
		t.Errorf("Recorded(415 s, 430 s) = %+v, %v; want [415 s, 420 s), the recorded part", p, ok)
	}
	if _, ok := Recorded(rs, 500*s, 510*s); ok {
		t.Error("Recorded after every capture: ok; want none")
	}
}

// rotationNight is three one-minute captures of 4 CPUs at 49 Hz, back to
// back but for a 3 s pause before the third, with a burst on CPU 2 that
// starts 2 s before the first rotation point and runs 3 s into the second
// capture, and one on CPU 1 in the third capture, far from any marker.
func rotationNight(busy float64) *nightgen.Night {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 3, Length: time.Minute,
		Gaps: map[int]time.Duration{2: 3 * time.Second}, Unanchored: -1, Seed: 5, Busy: busy}
	c1, c2 := n.CaptureStart(1), n.CaptureStart(2)
	n.Bursts = []nightgen.Burst{
		{CPU: 2, Start: c1.Add(-2 * time.Second), End: c1.Add(3 * time.Second)},
		{CPU: 1, Start: c2.Add(30 * time.Second), End: c2.Add(34 * time.Second)},
	}
	return n
}

// planted counts the system samples the generator wrote on cpu: the
// bursts' alone.
func planted(counts nightgen.Counts, cpu int) int64 {
	var n int64
	for k, c := range counts {
		if k.CPU == cpu {
			n += c.System
		}
	}
	return n
}

// TestBurstAcrossRotation: a burst that crosses a rotation point is one
// hot spot with the planted bounds and every one of its samples, whatever
// the measure, and the hot spot just before a marker alone is marked;
// every hot spot names its command and function; the marker's 10 s
// before is one range across both captures, and a window across the pause
// says how much of it was not recorded.
func TestBurstAcrossRotation(t *testing.T) {
	n := rotationNight(0)
	src, counts, _ := importNight(t, n)
	ctx := context.Background()
	b := n.Bursts[0]
	mark := subsecond.Marker{Time: b.End.Add(2 * time.Second).UnixNano(), Text: "NETDEV WATCHDOG: eth0: transmit queue 3 timed out"}
	const bucket = 100 * time.Millisecond
	for _, measure := range []heatmap.Measure{"", heatmap.MeasureSystem} {
		rep, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: measure, Markers: []subsecond.Marker{mark}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Found != 2 || len(rep.Spots) != 2 {
			t.Fatalf("measure %q: %d hot spots %+v; want the 2 bursts", measure, rep.Found, rep.Spots)
		}
		s := rep.Spots[0]
		if s.CPU != 2 || time.Duration(s.Start-b.Start.UnixNano()).Abs() > bucket || time.Duration(s.End-b.End.UnixNano()).Abs() > bucket {
			t.Errorf("measure %q: first spot CPU %d [%v, %v); want CPU 2 [%v, %v)", measure, s.CPU,
				time.Unix(0, s.Start).UTC(), time.Unix(0, s.End).UTC(), b.Start, b.End)
		}
		if want := planted(counts, 2); s.Samples != want || s.Busy != 1 || s.System != 1 {
			t.Errorf("measure %q: the burst holds %d samples, busy %v, system %v; the generator wrote %d, all in the kernel", measure, s.Samples, s.Busy, s.System, want)
		}
		if s.Marker == nil || s.Before != mark.Time-s.End {
			t.Errorf("measure %q: the burst is %v before marker %v; want %v", measure, time.Duration(s.Before), s.Marker, time.Duration(mark.Time-s.End))
		}
		if far := rep.Spots[1]; far.CPU != 1 || far.Marker != nil || far.Before != 0 {
			t.Errorf("measure %q: second spot = CPU %d, marker %v; want CPU 1's burst, a minute from the marker, unmarked", measure, far.CPU, far.Marker)
		}
		for i, s := range rep.Spots {
			if s.Comm != "kubelet" || s.Function != "mem_cgroup_nr_lru_pages" {
				t.Errorf("measure %q: spot %d names %q in %q; want kubelet in mem_cgroup_nr_lru_pages", measure, i, s.Comm, s.Function)
			}
		}
	}

	// The marker's 10 s before crosses the rotation point: one range, all
	// recorded, whose samples on both captures are the generator's.
	late := subsecond.Marker{Time: n.CaptureStart(2).Add(2 * time.Second).UnixNano(), Text: "after the pause"}
	list, err := Markers(ctx, src, "node-1", []subsecond.Marker{mark, late})
	if err != nil {
		t.Fatal(err)
	}
	w := list.Markers[0].Before
	if w == nil || w.From != mark.Time-int64(Before) || w.To != mark.Time || w.Missing != 0 || list.Markers[0].URL != HostFlameURL("node-1", w.From, w.To, -1) {
		t.Fatalf("the marker's window = %+v, %s; want the 10 s before it, all recorded", w, list.Markers[0].URL)
	}
	caps, _, _ := HostCaptures(ctx, src, "node-1")
	if !(w.From < caps[1].Start && caps[1].Start < w.To) {
		t.Errorf("the window [%d, %d) does not cross the rotation point %d", w.From, w.To, caps[1].Start)
	}
	var got, want int64
	for cpu := range n.CPUs {
		tl := heatmap.NewTally(int32(cpu))
		for _, c := range caps[:2] {
			k, err := src.Capture(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.Add(k, subsecond.Range{Start: w.From - c.Offset, End: w.To - c.Offset}); err != nil {
				t.Fatal(err)
			}
		}
		got += tl.Samples
		for sec := w.From / 1e9; sec < w.To/1e9; sec++ {
			if c := counts[nightgen.Key{CPU: cpu, Second: sec}]; c != nil {
				want += c.Samples
			}
		}
	}
	if got != want {
		t.Errorf("the window holds %d samples across both captures; the generator wrote %d", got, want)
	}
	// Across the pause: 3 s not recorded, less the sampling interval by
	// which a capture's end follows its last sample.
	if w := list.Markers[1].Before; w == nil || time.Duration(w.Missing-int64(3*time.Second)).Abs() > 2*time.Second/49 {
		t.Errorf("the window across the pause = %+v; want 3 s missing", w)
	}
}

// TestAllBusyHostFindsKernelBursts: on a host whose every core is busy
// all night, the default measure finds every kernel burst, the one across
// a rotation point too.
func TestAllBusyHostFindsKernelBursts(t *testing.T) {
	n := rotationNight(1)
	c0 := n.CaptureStart(0)
	n.Bursts = append(n.Bursts,
		nightgen.Burst{CPU: 0, Start: c0.Add(10 * time.Second), End: c0.Add(13 * time.Second)},
		nightgen.Burst{CPU: 3, Start: c0.Add(40 * time.Second), End: c0.Add(42 * time.Second)})
	src, _, _ := importNight(t, n)
	rep, err := Hotspots(context.Background(), src, "node-1", HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Measure != "busy" {
		t.Errorf("default measure %q; want busy", rep.Measure)
	}
	for _, b := range n.Bursts {
		found := false
		for _, s := range rep.Spots {
			if s.CPU == int32(b.CPU) && time.Duration(s.Start-b.Start.UnixNano()).Abs() <= 100*time.Millisecond &&
				time.Duration(s.End-b.End.UnixNano()).Abs() <= 100*time.Millisecond {
				found = true
				if s.Measure != "system" || s.Comm != "kubelet" {
					t.Errorf("burst on CPU %d found on %s time, comm %q; want system time, kubelet", b.CPU, s.Measure, s.Comm)
				}
			}
		}
		if !found {
			t.Errorf("the burst on CPU %d at %v was not found: %+v", b.CPU, b.Start, rep.Spots)
		}
	}
	if rep.Found != len(n.Bursts) {
		t.Errorf("%d hot spots; want the %d bursts", rep.Found, len(n.Bursts))
	}
}
