package timeline

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// storeSource reads the host views' input from a real store and the
// rollups it stores.
type storeSource struct{ *store.Store }

// night is the test's night: 8 CPUs at 49 Hz, six one-minute captures, a
// 90 s pause before the fourth, the fifth recorded without wall clock, and
// two bursts: CPU 5 for 6 s in the second capture, CPU 2 for 4 s in the
// sixth.
func testNight() *nightgen.Night {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 8, Hz: 49, Start: start, Captures: 6, Length: time.Minute,
		Gaps: map[int]time.Duration{3: 90 * time.Second}, Unanchored: 4, Boot: start.Add(-24 * time.Hour), Seed: 7}
	c1, c5 := n.CaptureStart(1), n.CaptureStart(5)
	n.Bursts = []nightgen.Burst{
		{CPU: 5, Start: c1.Add(20 * time.Second), End: c1.Add(26 * time.Second)},
		{CPU: 2, Start: c5.Add(30*time.Second + 500*time.Millisecond), End: c5.Add(34*time.Second + 500*time.Millisecond)},
	}
	return n
}

// importNight writes every capture of n straight into a store in a temporary
// directory, with no text on disk, and returns the store and the counts.
func importNight(t *testing.T, n *nightgen.Night) (storeSource, nightgen.Counts, []string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.OpenStore(ctx, filepath.Join(t.TempDir(), "night.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	counts := nightgen.Counts{}
	var ids []string
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, counts)) }()
		p, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: "capture-" + string(rune('a'+i)), Host: n.Host})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	return storeSource{s}, counts, ids
}

func TestTimelineCountsEqualTheGenerator(t *testing.T) {
	n := testNight()
	src, counts, ids := importNight(t, n)
	ctx := context.Background()
	g, err := Timeline(ctx, src, "node-1", Span{Bucket: int64(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Unplaced != 1 || len(g.Captures) != 5 {
		t.Fatalf("%d captures placed, %d without wall clock; want 5 and 1", len(g.Captures), g.Unplaced)
	}
	if g.From != n.Start.UnixNano() || len(g.CPUs) != 8 {
		t.Errorf("grid from %d over %d CPUs; want %d over 8", g.From, len(g.CPUs), n.Start.UnixNano())
	}
	var total int64
	for r, cpu := range g.CPUs {
		for b := 0; b < g.Buckets; b++ {
			sec := (g.From + int64(b)*g.Bucket) / 1e9
			want := counts[nightgen.Key{CPU: int(cpu), Second: sec}]
			if want == nil {
				want = &subsecond.Counts{}
			}
			got := g.Samples[r][b]
			busy := int64(math.Round(g.Busy[r][b] * float64(got)))
			sys := int64(math.Round(g.System[r][b] * float64(got)))
			if got != want.Samples || busy != want.Busy || sys != want.System {
				t.Fatalf("CPU %d, second %d: %d samples, %d busy, %d system; the generator wrote %d, %d, %d",
					cpu, sec, got, busy, sys, want.Samples, want.Busy, want.System)
			}
			total += got
		}
	}
	var written int64
	for _, c := range counts {
		written += c.Samples
	}
	if total != written {
		t.Errorf("grid holds %d samples; the generator wrote %d with a wall clock", total, written)
	}
	// The pause before the fourth capture is a gap, and so is the place of
	// the capture without wall clock; within captures every second is covered.
	gapAt := func(t time.Time) float64 { return g.Covered[(t.UnixNano()-g.From)/g.Bucket] }
	if c := gapAt(n.CaptureStart(3).Add(-45 * time.Second)); c != 0 {
		t.Errorf("the pause before capture 3 is %v covered; want 0", c)
	}
	if c := gapAt(n.CaptureStart(4).Add(30 * time.Second)); c != 0 {
		t.Errorf("the unanchored capture's minute is %v covered; want 0", c)
	}
	if c := gapAt(n.CaptureStart(1).Add(30 * time.Second)); c != 1 {
		t.Errorf("capture 1's middle is %v covered; want 1", c)
	}
	if g.Captures[1].ID != ids[1] || g.Captures[1].Start < n.CaptureStart(1).UnixNano() || g.Captures[1].Start > n.CaptureStart(1).Add(time.Millisecond).UnixNano() {
		t.Errorf("second capture placed %+v; want %s from %v", g.Captures[1], ids[1], n.CaptureStart(1))
	}

	// Wider buckets sum the same samples.
	g10, err := Timeline(ctx, src, "node-1", Span{Bucket: int64(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var total10 int64
	for _, row := range g10.Samples {
		for _, v := range row {
			total10 += v
		}
	}
	if total10 != total {
		t.Errorf("10 s buckets hold %d samples; 1 s buckets %d", total10, total)
	}
	if _, err := Timeline(ctx, src, "node-1", Span{Bucket: int64(time.Second / 10)}); err == nil {
		t.Error("a 0.1 s bucket: no error; want one sending the user to the capture's views")
	}
	if _, err := Timeline(ctx, src, "nobody", Span{}); err == nil {
		t.Error("unknown host: no error")
	}
}

func TestHotspotsAcrossTheNight(t *testing.T) {
	n := testNight()
	src, _, ids := importNight(t, n)
	ctx := context.Background()
	for _, measure := range []heatmap.Measure{heatmap.MeasureBusy, heatmap.MeasureSystem} {
		system := measure == heatmap.MeasureSystem
		rep, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: measure})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Found != 2 || len(rep.Spots) != 2 {
			t.Fatalf("system %v: %d hot spots: %+v; want the two planted bursts", system, rep.Found, rep.Spots)
		}
		for i, want := range []struct {
			b  nightgen.Burst
			id string
		}{{n.Bursts[0], ids[1]}, {n.Bursts[1], ids[5]}} {
			s := rep.Spots[i]
			if s.CPU != int32(want.b.CPU) || s.Capture != want.id || s.Comm != "kubelet" || s.Function != "mem_cgroup_nr_lru_pages" {
				t.Errorf("system %v, spot %d = CPU %d in %s, %s in %s; want CPU %d in %s, kubelet in mem_cgroup_nr_lru_pages",
					system, i, s.CPU, s.Capture, s.Comm, s.Function, want.b.CPU, want.id)
			}
			if d := time.Duration(s.Start - want.b.Start.UnixNano()).Abs(); d > 150*time.Millisecond {
				t.Errorf("system %v, spot %d starts %v from the burst", system, i, d)
			}
			if d := time.Duration(s.End - want.b.End.UnixNano()).Abs(); d > 150*time.Millisecond {
				t.Errorf("system %v, spot %d ends %v from the burst", system, i, d)
			}
		}
		if rep.Spots[0].Score <= rep.Spots[1].Score {
			t.Errorf("scores %v, %v; want the longer burst first", rep.Spots[0].Score, rep.Spots[1].Score)
		}
		// A limit keeps the best and still counts them all.
		one, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: measure, Limit: 1})
		if err != nil || one.Found != 2 || len(one.Spots) != 1 || one.Spots[0].Start != rep.Spots[0].Start || one.Spots[0].CPU != rep.Spots[0].CPU {
			t.Errorf("system %v, limit 1: %v, %+v; want found 2 and the first of %+v", system, err, one, rep.Spots[0])
		}
	}
	// A marker 8 s after the shorter burst ranks it first.
	m := subsecond.Marker{Time: n.Bursts[1].End.Add(8 * time.Second).UnixNano(), Text: "NETDEV WATCHDOG: eth0: transmit queue 3 timed out"}
	rep, err := Hotspots(ctx, src, "node-1", HotOptions{Markers: []subsecond.Marker{m}})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Spots[0]; s.CPU != 2 || s.Marker == nil || s.Marker.Text != m.Text || time.Duration(s.Before) < 7*time.Second || time.Duration(s.Before) > 9*time.Second {
		t.Errorf("with a marker, first spot = %+v; want CPU 2's burst, 8 s before the marker", s)
	}
}

// TestMarkerWindowsAndComms: each marker's "10 s before" window lies in the
// right capture and holds its burst; the kubelet is the command that jumps
// furthest above its baseline.
func TestMarkerWindowsAndComms(t *testing.T) {
	n := testNight()
	src, _, ids := importNight(t, n)
	ctx := context.Background()
	caps, _, err := HostCaptures(ctx, src, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{ids[1], ids[5]} {
		b := n.Bursts[i]
		mark := b.End.Add(3 * time.Second).UnixNano()
		w, ok := Locate(caps, mark-int64(10*time.Second), mark)
		if !ok || w.Capture != want {
			t.Fatalf("marker %d: window %+v; want capture %s", i, w, want)
		}
		c, err := src.Capture(ctx, w.Capture)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := c.Window(subsecond.Range{Start: c.Profile.T0() + w.Start, End: c.Profile.T0() + w.End})
		kubelet := 0
		for k := lo; k < hi; k++ {
			if c.Strings[c.Samples.Comm[k]] == "kubelet" && c.Samples.CPU[k] == int32(b.CPU) {
				kubelet++
			}
		}
		if want := int(b.End.Sub(b.Start).Seconds() * 49); kubelet < want-2 {
			t.Errorf("marker %d: the 10 s before it hold %d kubelet samples on CPU %d; want the burst's %d", i, kubelet, b.CPU, want)
		}
	}
	if _, ok := Locate(caps, n.CaptureStart(3).Add(-80*time.Second).UnixNano(), n.CaptureStart(3).Add(-70*time.Second).UnixNano()); ok {
		t.Error("a window in the pause between captures was located in a capture")
	}

	rep, err := Comms(ctx, src, "node-1", Span{Bucket: int64(10 * time.Second)}, "kubelet", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Jumps) == 0 || rep.Jumps[0].Comm != "kubelet" || rep.Jumps[0].Baseline != 0 || rep.Jumps[0].Score < 10 {
		t.Fatalf("jumps = %+v; want kubelet first, from a baseline of 0", rep.Jumps)
	}
	if at := rep.Jumps[0].PeakAt; at > n.Bursts[0].Start.UnixNano() || at+rep.Bucket < n.Bursts[0].End.UnixNano() {
		t.Errorf("kubelet peaks in the bucket at %v; want the one holding the first burst at %v", time.Unix(0, at).UTC(), n.Bursts[0].Start)
	}
	// Series: 6 s × 49 samples of 10 s × 49 × 8 in the first burst's bucket.
	b := (n.Bursts[0].Start.UnixNano() - rep.From) / rep.Bucket
	if v := rep.Series[b]; v == nil || math.Abs(*v-6.0/80) > 0.01 {
		t.Errorf("kubelet's share in the burst's bucket = %v; want about 7.5%%", v)
	}
	// Without a command, the series follows the one that jumps furthest.
	top, err := Comms(ctx, src, "node-1", Span{Bucket: int64(10 * time.Second)}, "", 3)
	if err != nil || top.Comm != "kubelet" || len(top.Series) != top.Buckets || *top.Series[b] != *rep.Series[b] {
		t.Errorf("comms without a command: %v, comm %q; want kubelet's series", err, top.Comm)
	}
	gap := (n.CaptureStart(3).Add(-45*time.Second).UnixNano() - rep.From) / rep.Bucket
	if rep.Series[gap] != nil {
		t.Errorf("the share in the pause = %v; want null", *rep.Series[gap])
	}
}

// TestSmallNight runs the benchmark's path on the night CI can afford: 8
// CPUs at 49 Hz for an hour in 30 two-minute captures (1.4 million
// samples), a pause, a capture without wall clock, bursts every 40 minutes
// and a marker after each: the grid matches the generator's count, the top
// hot spots are the bursts, before their markers, and each marker's 10 s
// before holds its burst's capture.
func TestSmallNight(t *testing.T) {
	if testing.Short() {
		t.Skip("an hour of 8 CPUs takes a few seconds to import; make test runs it")
	}
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 8, Hz: 49, Start: start, Captures: 30, Length: 2 * time.Minute,
		Gaps: map[int]time.Duration{12: 5 * time.Minute}, Unanchored: 20, Boot: start.Add(-time.Hour), Seed: 11}
	// The second burst is a fifth user code: still a system episode.
	for i, at := range []time.Duration{17 * time.Minute, 57 * time.Minute} {
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 6, Start: start.Add(at), End: start.Add(at + 5*time.Second), User: 0.2 * float64(i)})
	}
	src, counts, _ := importNight(t, n)
	ctx := context.Background()
	g, err := Timeline(ctx, src, "node-1", Span{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Unplaced != 1 || len(g.Captures) != 29 || g.Buckets > 1000 {
		t.Fatalf("%d captures placed, %d not, %d buckets; want 29, 1, at most 1000", len(g.Captures), g.Unplaced, g.Buckets)
	}
	want := map[[2]int64]int64{} // (cpu, bucket) → samples
	for k, c := range counts {
		want[[2]int64{int64(k.CPU), (k.Second*1e9 - g.From) / g.Bucket}] += c.Samples
	}
	for r, cpu := range g.CPUs {
		for b, got := range g.Samples[r] {
			if w := want[[2]int64{int64(cpu), int64(b)}]; got != w {
				t.Fatalf("CPU %d, bucket %d: %d samples; the generator wrote %d", cpu, b, got, w)
			}
		}
	}
	var ms []subsecond.Marker
	for _, b := range n.Bursts {
		ms = append(ms, subsecond.Marker{Time: b.End.Add(6 * time.Second).UnixNano(), Text: "eth0: reset"})
	}
	rep, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: heatmap.MeasureSystem, Markers: ms})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found != 2 {
		t.Fatalf("%d hot spots; want the 2 bursts: %+v", rep.Found, rep.Spots)
	}
	caps, _, _ := HostCaptures(ctx, src, "node-1")
	for i, s := range rep.Spots {
		b := n.Bursts[i]
		if s.CPU != 6 || s.Marker == nil || time.Duration(s.Start-b.Start.UnixNano()).Abs() > 150*time.Millisecond {
			t.Errorf("spot %d = CPU %d from %v, marker %v; want CPU 6 from %v before its marker", i, s.CPU, time.Unix(0, s.Start).UTC(), s.Marker, b.Start)
		}
		w, ok := Locate(caps, ms[i].Time-int64(10*time.Second), ms[i].Time)
		if !ok || w.Capture != s.Capture {
			t.Errorf("marker %d's 10 s before = %+v; want in capture %s", i, w, s.Capture)
		}
	}
}

// TestSummariesFromChunks: the store's rollups, and its chunk summaries
// as FromChunks reads them, both read without decoding samples, say what
// Summarize counts in the capture's samples.
func TestSummariesFromChunks(t *testing.T) {
	n := testNight()
	src, _, ids := importNight(t, n)
	ctx := context.Background()
	for _, id := range ids {
		sums, err := src.Summaries(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		r, err := src.Rollup(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.Summaries(), FromChunks(sums); !reflect.DeepEqual(got, want) {
			t.Errorf("capture %s: the rollup's %d seconds differ from the chunk summaries' %d", id, len(got), len(want))
		}
		got := FromChunks(sums)
		c, err := src.Capture(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := Summarize(c)
		if len(got) != len(want) || len(got) < 60 {
			t.Fatalf("capture %s: %d summaries from chunks, %d from samples", id, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("capture %s, second %d: chunks say %+v; samples %+v", id, i, got[i], want[i])
			}
		}
	}
}
