package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

var resetMatch = regexp.MustCompile(`mlx5.*reset`)

// isPlanted reports whether f is (or folds in) the kubelet in
// mem_cgroup_nr_lru_pages.
func isPlanted(f *Finding) bool {
	for _, g := range append([]Feature{f.Feature}, f.Also...) {
		if g.Comm == "kubelet" && (g.Function == "mem_cgroup_nr_lru_pages" || slices.Contains(g.Stack, "mem_cgroup_nr_lru_pages")) {
			return true
		}
	}
	return false
}

// TestPlanted reads a night through a real store: the kubelet planted
// before each of six markers (one window across a rotation point, one
// recording after a pause) ranks first with q < 0.01, standing out in 6
// of 6 windows; the decoy, containerd pegging a core in the kernel at
// times near no marker, is tested and not significant.
func TestPlanted(t *testing.T) {
	n, ms, resets := plantedNight()
	src := importNight(t, n, ms)
	ctx := context.Background()
	rep, err := Explain(ctx, src, "node-1", Options{Match: resetMatch, Seed: 1, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	K := len(resets)
	if len(rep.Windows) != K || rep.Dropped != 0 {
		t.Fatalf("%d before-windows, %d dropped; want %d and 0", len(rep.Windows), rep.Dropped, K)
	}
	for i, w := range rep.Windows {
		if w.To != resets[i].UnixNano() || w.From != resets[i].Add(-10*time.Second).UnixNano() {
			t.Errorf("window %d is [%d, %d); want the 10 s before %v", i, w.From, w.To, resets[i])
		}
		if want := int64(10 * 8 * 49); w.Samples < want-16 || w.Samples > want+16 {
			t.Errorf("window %d holds %d samples; want about %d", i, w.Samples, want)
		}
	}
	for _, c := range rep.Controls {
		for _, m := range ms {
			if m.Time >= c.From-int64(time.Minute) && m.Time < c.To+int64(time.Minute) {
				t.Errorf("control window [%d, %d) is within a minute of marker %q at %d", c.From, c.To, m.Text, m.Time)
			}
		}
	}
	if len(rep.Controls) < 40 {
		t.Errorf("%d control windows; want the rest of the 25 min, at least 40", len(rep.Controls))
	}
	for _, f := range rep.Findings[:min(8, len(rep.Findings))] {
		t.Logf("%-11s %-10s %-24s %v cpu %d: %.4f vs %.4f, %d of %d, p %.2g q %.2g (+%d alike)",
			f.Kind, f.Comm, f.Function, f.Stack, f.CPU, f.BeforeShare, f.ControlShare, f.StoodOut, f.Of, f.P, f.Q, len(f.Also))
	}
	f := rep.Findings[0]
	if !isPlanted(&f) {
		t.Fatalf("first finding is %+v; want the kubelet in mem_cgroup_nr_lru_pages", f)
	}
	if f.Q >= 0.01 || f.StoodOut != K || f.Of != K || len(f.Markers) != K {
		t.Errorf("planted: q = %g, stood out in %d of %d windows (markers %v); want q < 0.01 and %d of %d", f.Q, f.StoodOut, f.Of, f.Markers, K, K)
	}
	if f.ControlShare != 0 || f.BeforeShare < 0.05 {
		t.Errorf("planted: %.4f before, %.4f in controls; want about 6 s of one CPU of 8 in 10 s (0.075) and 0", f.BeforeShare, f.ControlShare)
	}
	decoys := 0
	for _, f := range rep.Findings {
		for _, g := range append([]Feature{f.Feature}, f.Also...) {
			if g.Comm == "containerd" {
				decoys++
				if f.Q < 0.05 {
					t.Errorf("decoy %+v: q = %g; want not significant", g, f.Q)
				}
			}
		}
	}
	if decoys == 0 {
		t.Errorf("the decoy was not among the %d features tested", rep.Tested)
	}
	if rep.Exact || rep.Permutations != DefaultPermutations || rep.MinP != 1/float64(DefaultPermutations+1) {
		t.Errorf("exact %v, %d permutations, min p %g; want random relabelings, %d", rep.Exact, rep.Permutations, rep.MinP, DefaultPermutations)
	}

	// The same request again from a cache: the same report, a hit.
	cache := NewCache(0)
	opt := Options{Match: resetMatch, Seed: 1, Limit: 1000}
	first, hit, err := cache.Explain(ctx, src, "node-1", opt, nil)
	if err != nil || hit {
		t.Fatalf("first request: hit %v, %v", hit, err)
	}
	again, hit, err := cache.Explain(ctx, src, "node-1", opt, nil)
	if err != nil || !hit || again != first {
		t.Fatalf("second request: hit %v, %v; want the cached report", hit, err)
	}
	if !reflect.DeepEqual(first, rep) {
		t.Errorf("the cached report differs from Explain's")
	}
	// A marker added is another key.
	if _, err := src.AddMarkers(ctx, "node-1", []subsecond.Marker{{Time: resets[0].Add(time.Hour).UnixNano(), Text: "late"}}); err != nil {
		t.Fatal(err)
	}
	if _, hit, err = cache.Explain(ctx, src, "node-1", opt, nil); err != nil || hit {
		t.Errorf("after a marker was added: hit %v, %v; want a new report", hit, err)
	}

	// The windows load as captures for a differential flame graph.
	before, err := LoadWindows(ctx, src, "node-1", rep.Windows)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, w := range rep.Windows {
		total += w.Samples
	}
	if before.Profile.Samples != total {
		t.Errorf("the before-windows load %d samples; the report counts %d", before.Profile.Samples, total)
	}
}

// TestCrossingRotation checks that a window across a rotation point gives
// the findings the same samples give in one capture: the night written as
// twelve captures and as the same samples cut again at every marker's
// window and in the middle of control windows.
func TestCrossingRotation(t *testing.T) {
	n, ms, resets := plantedNight()
	whole := memNight(t, n, ms)
	var cuts []time.Time
	for _, m := range resets {
		cuts = append(cuts, m.Add(-5*time.Second))
	}
	cuts = append(cuts, n.Start.Add(1005*time.Second), n.Start.Add(1123*time.Second))
	split := memNight(t, n, ms, cuts...)
	if len(split.ps) <= len(whole.ps)+len(resets) {
		t.Fatalf("split night has %d captures, whole %d; want more cuts", len(split.ps), len(whole.ps))
	}
	ctx := context.Background()
	opt := Options{Match: resetMatch, Seed: 5, Limit: 1000}
	a, err := Explain(ctx, whole, "node-1", opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Explain(ctx, split, "node-1", opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Windows, b.Windows) || !reflect.DeepEqual(a.Controls, b.Controls) {
		t.Fatalf("windows differ:\n%+v\n%+v", a.Windows, b.Windows)
	}
	if !reflect.DeepEqual(a.Findings, b.Findings) {
		for i := range min(len(a.Findings), len(b.Findings)) {
			if !reflect.DeepEqual(a.Findings[i], b.Findings[i]) {
				t.Fatalf("finding %d: one capture %+v; split %+v", i, a.Findings[i], b.Findings[i])
			}
		}
		t.Fatalf("%d findings in one capture, %d split", len(a.Findings), len(b.Findings))
	}
	if !isPlanted(&a.Findings[0]) {
		t.Errorf("in memory the first finding is %+v; want the planted one", a.Findings[0])
	}
}

// TestOneMarker checks the one-marker case: its window against the rest
// of its session, the p-value exact over its M + 1 relabelings.
func TestOneMarker(t *testing.T) {
	n, ms, resets := plantedNight()
	src := memNight(t, n, ms)
	rep, err := Explain(context.Background(), src, "node-1", Options{Match: resetMatch, From: resets[3].UnixNano(), To: resets[3].UnixNano() + 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Windows) != 1 || !rep.Exact || rep.Permutations != 0 {
		t.Fatalf("%d windows, exact %v, %d permutations; want 1, exact", len(rep.Windows), rep.Exact, rep.Permutations)
	}
	M := len(rep.Controls)
	if want := 1 / float64(M+1); rep.MinP != want {
		t.Errorf("min p %g; want 1/(%d+1)", rep.MinP, M)
	}
	f := rep.Findings[0]
	if !isPlanted(&f) || f.P != rep.MinP || f.StoodOut != 1 || f.Of != 1 {
		t.Errorf("first finding %+v; want the planted one, p = 1/(M+1), 1 of 1", f)
	}
	// The controls are all of the session's but those near markers.
	if rep.Available != M {
		t.Errorf("%d controls of %d available; want all", M, rep.Available)
	}
}

// TestNoMarkers checks the errors that say what to do.
func TestNoMarkers(t *testing.T) {
	n, ms, _ := plantedNight()
	src := memNight(t, n, ms)
	ctx := context.Background()
	_, err := Explain(ctx, src, "node-1", Options{Match: regexp.MustCompile(`oom-kill`)})
	if !errors.Is(err, subsecond.ErrEmptyRange) || !strings.Contains(err.Error(), "no marker matching") || !strings.Contains(err.Error(), "markers add") {
		t.Errorf("no matching marker: %v; want ErrEmptyRange saying to post markers or change match", err)
	}
	// A marker long after the recordings: nothing recorded before it.
	src.markers = append(src.markers, subsecond.Marker{Time: n.Start.Add(5 * time.Hour).UnixNano(), Text: "oom-kill"})
	_, err = Explain(ctx, src, "node-1", Options{Match: regexp.MustCompile(`oom-kill`)})
	if !errors.Is(err, subsecond.ErrEmptyRange) || !strings.Contains(err.Error(), "record while the markers happen") {
		t.Errorf("unrecorded marker: %v; want ErrEmptyRange", err)
	}
	_, err = Explain(ctx, src, "node-1", Options{Before: time.Millisecond})
	var pe *query.ParamError
	if !errors.As(err, &pe) || pe.Name != "before" {
		t.Errorf("before = 1 ms: %v; want a ParamError on before", err)
	}
}

// seriesSource is a memSource that keeps series too.
type seriesSource struct {
	*memSource
	series map[string][]subsecond.Series
}

func (s seriesSource) Series(_ context.Context, host, name string, from, to int64) ([]subsecond.Series, error) {
	return s.series[name], nil
}

// TestSeries checks the host series: dying cgroups that pile up before
// each marker stand out; the IRQ rate, the same all night, does not.
func TestSeries(t *testing.T) {
	n, ms, resets := plantedNight()
	mem := memNight(t, n, ms)
	dying := subsecond.Series{Name: "cgroup.dying", CPU: subsecond.Unknown}
	var irq []subsecond.Series
	for cpu := range int32(2) {
		irq = append(irq, subsecond.Series{Name: "irq", CPU: cpu, Label: "45:mlx5_comp3"})
	}
	for s := int64(0); s < 1510; s++ {
		at := n.Start.Add(time.Duration(s) * time.Second)
		v := 100.0 + float64(s%7)
		for _, m := range resets {
			if at.After(m.Add(-10*time.Second)) && !at.After(m) {
				v += 50
			}
		}
		dying.Points = append(dying.Points, subsecond.Point{Time: at.UnixNano(), Value: v})
		for i := range irq {
			irq[i].Points = append(irq[i].Points, subsecond.Point{Time: at.UnixNano(), Value: 1000 + float64(s%5)})
		}
	}
	src := seriesSource{mem, map[string][]subsecond.Series{"cgroup.dying": {dying}, "irq": irq}}
	rep, err := Explain(context.Background(), src, "node-1", Options{Match: resetMatch, Seed: 2, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range rep.Findings {
		switch {
		case f.Series == "cgroup.dying":
			found++
			if f.Q >= 0.01 || f.StoodOut != len(resets) || f.Unit != "count" || f.Diff < 40 {
				t.Errorf("cgroup.dying: %+v; want q < 0.01, %d of %d, about 50 more", f, len(resets), len(resets))
			}
		case f.Series == "irq":
			found++
			if f.Q < 0.05 || f.CPU != subsecond.Unknown || math.Abs(f.ControlShare-2004) > 1 {
				t.Errorf("irq: %+v; want not significant, the two CPUs summed (2004/s)", f)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d series findings; want cgroup.dying and irq", found)
	}

	// Cached, the report is asked again after a series point was added in
	// one of its windows: another report, the new point's.
	cache := NewCache(0)
	opt := Options{Match: resetMatch, Seed: 2, Limit: 1000}
	first, _, err := cache.Explain(context.Background(), src, "node-1", opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, rep) {
		t.Errorf("the cached report differs from Explain's")
	}
	w := first.Windows[0]
	src.series["cgroup.dying"][0].Points = append(dying.Points, subsecond.Point{Time: w.To - 1, Value: 1e9})
	slices.SortFunc(src.series["cgroup.dying"][0].Points, func(a, b subsecond.Point) int { return cmp.Compare(a.Time, b.Time) })
	again, hit, err := cache.Explain(context.Background(), src, "node-1", opt, nil)
	if err != nil || hit {
		t.Fatalf("after a series point in a window: hit %v, %v; want a new report", hit, err)
	}
	fresh, err := Explain(context.Background(), src, "node-1", opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, fresh) || reflect.DeepEqual(again, first) {
		t.Errorf("after a series point in a window: the cached report is not the new one")
	}
}

// TestCacheReusesWindowCounts: explanations through a cache count each
// window once, across seeds and after a capture is added, and report
// what Explain does.
func TestCacheReusesWindowCounts(t *testing.T) {
	ctx := context.Background()
	n, ms, _ := plantedNight()
	src := memNight(t, n, ms)
	cache := NewCache(0)
	rows := func() int {
		hc, ok := cache.counts.Peek("node-1")
		if !ok {
			t.Fatal("no counts kept for the host")
		}
		return len(hc.cs.total)
	}
	ask := func(what string, seed uint64) *Report {
		t.Helper()
		opt := Options{Match: resetMatch, Seed: seed, Controls: 40, Limit: 1000}
		rep, hit, err := cache.Explain(ctx, src, "node-1", opt, nil)
		if err != nil || hit {
			t.Fatalf("%s: hit %v, %v", what, hit, err)
		}
		want, err := Explain(ctx, src, "node-1", opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("%s: the report differs from Explain's", what)
		}
		return rep
	}
	rep := ask("seed 1", 1)
	first := rows()
	if want := len(rep.Windows) + len(rep.Controls) + rep.Dropped; first < want {
		t.Errorf("seed 1: %d windows counted; want at least %d", first, want)
	}
	ask("seed 2", 2)
	second := rows()
	if second >= 2*first {
		t.Errorf("seed 2: %d windows counted in all, %d for seed 1; want the windows they share counted once", second, first)
	}
	cache.reports = NewCache(0).reports // forget the reports, not the counts
	ask("seed 1 again", 1)
	if rows() != second {
		t.Errorf("seed 1 again: %d windows counted; want %d, as before", rows(), second)
	}
	// A capture added: its windows counted, the others kept.
	n.Captures++
	ss, meta := samplesOf(t, n, n.Captures-1)
	src.add(n.Host, meta, ss)
	cache.reports = NewCache(0).reports
	ask("after a capture", 1)
	if r := rows(); r <= second || r > second+int(2*time.Minute/DefaultBefore)+1 {
		t.Errorf("after a capture: %d windows counted; want %d and at most its windows more", r, second)
	}
}

// TestCacheKeepsManyHostsCounts: a cache of bench/soak's shape (eight
// hosts, each explained, then sent a capture and explained again) keeps
// every host's window counts within a small budget (150 KB for the
// counts), so that the new capture costs only its own windows' counting
// on every host; the reports are Explain's. Before, the eight hosts'
// counts took 211 KB here, not 93 KB (and a window of the soak's 96-CPU
// captures 101 KB, not 5.5 KB), and hosts' counts were evicted and
// counted again.
func TestCacheKeepsManyHostsCounts(t *testing.T) {
	ctx := context.Background()
	n, ms, _ := plantedNight()
	hosts := []string{"node-1", "node-2", "node-3", "node-4", "node-5", "node-6", "node-7", "node-8"}
	src := &memSource{markers: ms}
	addCapture := func(i int) {
		ss, meta := samplesOf(t, n, i)
		for _, h := range hosts {
			src.add(h, meta, ss)
		}
	}
	for i := range n.Captures {
		addCapture(i)
	}
	cache := NewCache(200 << 10)
	opt := Options{Match: resetMatch, Seed: 1, Controls: 40, Limit: 1000}
	ask := func(host string) {
		t.Helper()
		rep, hit, err := cache.Explain(ctx, src, host, opt, nil)
		if err != nil || hit {
			t.Fatalf("%s: hit %v, %v", host, hit, err)
		}
		want, err := Explain(ctx, src, host, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("%s: the report differs from Explain's", host)
		}
	}
	type kept struct {
		hc   *hostCounts
		cs   *counts
		rows int
	}
	before := map[string]kept{}
	for _, h := range hosts {
		ask(h)
	}
	var bytes int64
	for _, h := range hosts {
		hc, ok := cache.counts.Peek(h)
		if !ok {
			t.Fatalf("%s: no counts kept after all eight hosts were explained", h)
		}
		before[h] = kept{hc, hc.cs, len(hc.cs.total)}
		bytes += hc.bytes.Load()
	}
	t.Logf("eight hosts' counts: %d bytes, %d windows each", bytes, before[hosts[0]].rows)
	n.Captures++
	addCapture(n.Captures - 1)
	cache.reports = NewCache(0).reports // forget the reports, not the counts
	perCapture := int(2*time.Minute/DefaultBefore) + 1
	for _, h := range hosts {
		ask(h)
		hc, ok := cache.counts.Peek(h)
		if !ok || hc != before[h].hc || hc.cs != before[h].cs {
			t.Errorf("%s: after a capture, its counts were dropped and counted again", h)
			continue
		}
		if r := len(hc.cs.total); r > before[h].rows+perCapture {
			t.Errorf("%s: after a capture, %d windows counted; want at most %d, the capture's windows more", h, r, before[h].rows+perCapture)
		}
	}
}

// TestControlSampleKeptAsHostRecords: the seeded sample of control
// windows changes, when a capture is added, by no more than the new
// capture's windows (a shuffle drew most of it anew, and every
// explanation of a host recording live counted its controls again);
// each window is about as likely to be chosen, over seeds.
func TestControlSampleKeptAsHostRecords(t *testing.T) {
	ctx := context.Background()
	n, ms, _ := plantedNight()
	n.Captures = 30
	src := memNight(t, n, ms)
	const controls = 100
	opt := Options{Match: resetMatch, Seed: 1, Controls: controls, Limit: 10}
	first, err := Explain(ctx, src, "node-1", opt)
	if err != nil {
		t.Fatal(err)
	}
	if first.Available < 2*controls {
		t.Fatalf("%d control windows available; the test wants more than %d", first.Available, 2*controls)
	}
	ss, meta := samplesOf(t, n, n.Captures)
	src.add("node-1", meta, ss)
	n.Captures++
	next, err := Explain(ctx, src, "node-1", opt)
	if err != nil {
		t.Fatal(err)
	}
	perCapture := int(2*time.Minute/DefaultBefore) + 1
	kept := 0
	for _, w := range first.Controls {
		if slices.ContainsFunc(next.Controls, func(x Window) bool { return x.From == w.From }) {
			kept++
		}
	}
	if next.Available <= first.Available || kept < controls-perCapture {
		t.Errorf("after a capture (%d → %d available), %d of the %d controls kept; want at least %d", first.Available, next.Available, kept, controls, controls-perCapture)
	}
	// Over 400 seeds, each available window is chosen about
	// controls/available of the time: none is never or always chosen,
	// and the counts spread as a binomial's do.
	chosen := map[int64]int{}
	const seeds = 400
	o := opt
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	in, err := gather(ctx, src, "node-1", &o)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(seeds) {
		o.Seed = seed + 1000
		pl, err := planWindows(in, &o)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range pl.controls {
			chosen[w.From]++
		}
	}
	p := float64(controls) / float64(next.Available)
	mean, sd := seeds*p, math.Sqrt(seeds*p*(1-p))
	if len(chosen) != next.Available {
		t.Errorf("%d of %d windows ever chosen", len(chosen), next.Available)
	}
	var ss2 float64
	for _, c := range chosen {
		ss2 += (float64(c) - mean) * (float64(c) - mean)
	}
	if got := math.Sqrt(ss2 / float64(len(chosen))); got > 1.3*sd || got < 0.7*sd {
		t.Errorf("choices per window spread with sd %.1f; a binomial's is %.1f (mean %.1f)", got, sd, mean)
	}
}

// TestReportBytesCountsWhatItHolds holds reports and movements as the
// cache does and checks that what their bytes count is what the heap
// keeps for them. A report of the first few of many findings kept the
// array of them all (up to MaxCandidates, each with what it points to):
// the cache of reports held about 70 MB under a budget of 8 MB in a soak.
func TestReportBytesCountsWhatItHolds(t *testing.T) {
	ctx := context.Background()
	n, ms, _ := plantedNight()
	// The planted night with its leaves drawn from 400 functions: many
	// candidate features, as a real host's night has.
	src := &memSource{markers: ms}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n.Captures {
		ss, meta := samplesOf(t, n, i)
		for j := range ss {
			if len(ss[j].Frames) > 0 {
				ss[j].Frames[0].Symbol = fmt.Sprintf("leaf_%03d", rng.IntN(400))
			}
		}
		src.add(n.Host, meta, ss)
	}
	opt := func(seed uint64) Options {
		return Options{Match: resetMatch, Seed: seed, Controls: 40, Limit: 3}
	}
	// What the captures derive once (their indexes) is built before the
	// heap is measured.
	if _, err := Explain(ctx, src, "node-1", opt(100)); err != nil {
		t.Fatal(err)
	}
	heap := func() int64 {
		runtime.GC()
		runtime.GC() // and what sync.Pools kept through one
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	const k = 8
	reps := make([]*Report, k)
	before := heap()
	var counted int64
	for i := range reps {
		rep, err := Explain(ctx, src, "node-1", opt(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Tested < 400 || len(rep.Findings) != 3 {
			t.Fatalf("%d features tested, %d findings; want many tested, 3 listed", rep.Tested, len(rep.Findings))
		}
		reps[i] = rep
		counted += rep.bytes()
	}
	held := heap() - before
	t.Logf("%d reports of %d findings (of %d tested): held %d bytes, counted %d", k, len(reps[0].Findings), reps[0].Tested, held, counted)
	if held > 2*counted+64<<10 {
		t.Errorf("%d reports hold %d bytes of heap; their bytes count %d", k, held, counted)
	}
	if counted > k*32<<10 {
		t.Errorf("%d reports of 3 findings hold %d bytes: more than the findings listed", k, counted)
	}
	runtime.KeepAlive(reps)

	msrc, _ := movingNight(t)
	kubelet := MoveOptions{Feature: &Feature{Kind: KindComm, Comm: "kubelet", CPU: subsecond.Unknown}, Limit: 3}
	mv0, err := Moves(ctx, msrc, "node-1", kubelet)
	if err != nil {
		t.Fatal(err)
	}
	mvs := make([]*Movement, k)
	before = heap()
	counted = 0
	for i := range mvs {
		mv, err := Moves(ctx, msrc, "node-1", kubelet)
		if err != nil {
			t.Fatal(err)
		}
		mvs[i] = mv
		counted += mv.bytes()
	}
	held = heap() - before
	t.Logf("%d movements of %d moving: held %d bytes, counted %d", k, len(mv0.Moving), held, counted)
	if held > 2*counted+64<<10 {
		t.Errorf("%d movements hold %d bytes of heap; their bytes count %d", k, held, counted)
	}
	runtime.KeepAlive(mvs)
	runtime.KeepAlive(src)
	runtime.KeepAlive(msrc)
}
