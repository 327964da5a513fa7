package explain

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// movingNight is 20 one-minute captures of 4 CPUs with the kubelet on
// CPU 1 for 20 s every 2 minutes, and two series: memory cgroups that
// climb while it runs (5000 in its seconds, 200 elsewhere, with noise),
// and a load1 of pure noise.
func movingNight(t *testing.T) (storeSource, *nightgen.Night) {
	t.Helper()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 20, Length: time.Minute, Unanchored: -1, Seed: 9}
	for k := 0; k < 10; k++ {
		a := start.Add(time.Duration(k)*2*time.Minute + 30*time.Second)
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 1, Start: a, End: a.Add(20 * time.Second)})
	}
	src := importNight(t, n, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	mem := subsecond.Series{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}
	load := subsecond.Series{Name: "load1", CPU: subsecond.Unknown}
	for s := 1; s <= 20*60; s++ {
		at := start.Add(time.Duration(s) * time.Second)
		v := 200 + rng.Float64()*50
		for _, b := range n.Bursts {
			if !at.Add(-time.Second).Before(b.Start) && at.Add(-time.Second).Before(b.End) {
				v = 5000 + rng.Float64()*50
			}
		}
		mem.Points = append(mem.Points, subsecond.Point{Time: at.UnixNano(), Value: math.Round(v)})
		load.Points = append(load.Points, subsecond.Point{Time: at.UnixNano(), Value: math.Round(rng.Float64()*400) / 100})
	}
	if _, err := src.AddSeries(context.Background(), n.Host, []subsecond.Series{mem, load}); err != nil {
		t.Fatal(err)
	}
	return src, n
}

func TestMovesWithASeries(t *testing.T) {
	src, _ := movingNight(t)
	ctx := context.Background()
	mv, err := Moves(ctx, src, "node-1", MoveOptions{Series: &subsecond.SeriesKey{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mv.Windows) < 100 || len(mv.Moving) == 0 {
		t.Fatalf("%d windows, %d moving; want about 120 windows and findings", len(mv.Windows), len(mv.Moving))
	}
	top := mv.Moving[0]
	// The kubelet runs in a sixth of the windows and not at all in the
	// others, a tie: √(3·p·(1−p)) ≈ 0.65 is the most a rank correlation
	// can then reach.
	if top.Comm != "kubelet" || top.Rho < 0.5 || top.N < 100 {
		t.Errorf("first to move with memory cgroups = %s (rho %.2f over %d); want the kubelet, rho > 0.5", top.Feature, top.Rho, top.N)
	}
	// A series of noise: nothing moves with it much.
	mv, err = Moves(ctx, src, "node-1", MoveOptions{Series: &subsecond.SeriesKey{Name: "load1", CPU: subsecond.Unknown}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mv.Moving {
		if math.Abs(m.Rho) > 0.4 {
			t.Errorf("%s moves with noise: rho %.2f over %d", m.Feature, m.Rho, m.N)
		}
	}
}

func TestSeriesMovingWithAFeature(t *testing.T) {
	src, _ := movingNight(t)
	mv, err := Moves(context.Background(), src, "node-1", MoveOptions{Feature: &Feature{Kind: KindFunction, Comm: "kubelet", Function: "mem_cgroup_nr_lru_pages"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mv.Moving) != 2 || mv.Moving[0].Series != "cgroups" || mv.Moving[0].Rho < 0.5 || math.Abs(mv.Moving[1].Rho) > 0.4 {
		t.Errorf("series moving with the kubelet's walk = %+v; want memory cgroups first (rho > 0.5), load1 near 0", mv.Moving)
	}
	if !strings.Contains(mv.Of.String(), "mem_cgroup_nr_lru_pages") {
		t.Errorf("Of = %s", mv.Of)
	}
	if _, err := Moves(context.Background(), src, "node-1", MoveOptions{Feature: &Feature{Kind: KindComm, Comm: "nobody"}}); err == nil {
		t.Error("Moves of a command never seen: no error")
	}
}

func TestMovesCache(t *testing.T) {
	src, n := movingNight(t)
	ctx := context.Background()
	cache := NewCache(0)
	from, to := n.Start.Add(2*time.Minute).UnixNano(), n.Start.Add(10*time.Minute).UnixNano()
	mem := MoveOptions{From: from, To: to, Series: &subsecond.SeriesKey{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}}
	kubelet := MoveOptions{From: from, To: to, Feature: &Feature{Kind: KindComm, Comm: "kubelet", CPU: subsecond.Unknown}}
	ask := func(what string, opt MoveOptions, wantHit bool) *Movement {
		t.Helper()
		mv, hit, err := cache.Moves(ctx, src, "node-1", opt, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if hit != wantHit {
			t.Errorf("%s: hit %v; want %v", what, hit, wantHit)
		}
		fresh, err := Moves(ctx, src, "node-1", opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mv, fresh) {
			t.Errorf("%s: the cached movement differs from Moves':\n%+v\n%+v", what, mv, fresh)
		}
		return mv
	}
	first := ask("first", mem, false)
	if again := ask("again", mem, true); again != first {
		t.Errorf("again: another movement than the one cached")
	}
	ask("a command, first", kubelet, false)
	ask("a command, again", kubelet, true)

	// A capture after the span changes neither.
	n.Captures++
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(n.Write(pw, n.Captures-1, nil)) }()
	if _, _, err := src.Import(ctx, pr, store.ImportOptions{FileName: "late", Host: n.Host}); err != nil {
		t.Fatal(err)
	}
	ask("after a capture outside the span", mem, true)
	ask("a command, after a capture outside the span", kubelet, true)

	// A series point in a window changes the series' movement, not the
	// command's, which the new point's series does not move with.
	at := n.Start.Add(5*time.Minute + 30*time.Second + 500*time.Millisecond).UnixNano()
	if _, err := src.AddSeries(ctx, n.Host, []subsecond.Series{{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory", Points: []subsecond.Point{{Time: at, Value: 1e6}}}}); err != nil {
		t.Fatal(err)
	}
	if mv := ask("after a point of the series", mem, false); reflect.DeepEqual(mv, first) {
		t.Errorf("after a point of the series: the same movement as before it")
	}
	ask("a command, after a point of a series", kubelet, false)
	// A new series: the command's movement lists it.
	if _, err := src.AddSeries(ctx, n.Host, []subsecond.Series{{Name: "mem.available", CPU: subsecond.Unknown, Points: []subsecond.Point{{Time: at, Value: 1}, {Time: at + int64(time.Minute), Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	ask("a command, after a new series", kubelet, false)
	ask("after another series", mem, true)

	// A span that the new capture extends: another key.
	wide := mem
	wide.To = n.Start.Add(time.Duration(n.Captures+1) * time.Minute).UnixNano()
	wide.From = n.Start.Add(12 * time.Minute).UnixNano()
	ask("wide, first", wide, false)
	n.Captures++
	pr, pw = io.Pipe()
	go func() { pw.CloseWithError(n.Write(pw, n.Captures-1, nil)) }()
	if _, _, err := src.Import(ctx, pr, store.ImportOptions{FileName: "later", Host: n.Host}); err != nil {
		t.Fatal(err)
	}
	ask("wide, after a capture in its span", wide, false)
}

// TestMovesCacheSharesOneComputation: concurrent requests for one
// movement compute it once, and only that computation enters.
func TestMovesCacheSharesOneComputation(t *testing.T) {
	src, _ := movingNight(t)
	cache := NewCache(0)
	var entered atomic.Int32
	open := make(chan struct{})
	enter := func(ctx context.Context) (func(), error) {
		entered.Add(1)
		<-open
		return func() {}, nil
	}
	opt := MoveOptions{Series: &subsecond.SeriesKey{Name: "load1", CPU: subsecond.Unknown}}
	var wg sync.WaitGroup
	got := make([]*Movement, 6)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mv, _, err := cache.Moves(context.Background(), src, "node-1", opt, enter)
			if err != nil {
				t.Error(err)
			}
			got[i] = mv
		}()
	}
	for entered.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(open)
	wg.Wait()
	if n := entered.Load(); n != 1 {
		t.Errorf("%d computations entered; want 1", n)
	}
	for _, mv := range got {
		if mv != got[0] {
			t.Errorf("the requests got different movements")
		}
	}
}

// movesPlan returns movingNight's store and the input and plan of its
// moves with load1.
func movesPlan(t *testing.T) (storeSource, *input, *movePlan) {
	t.Helper()
	src, _ := movingNight(t)
	pl, err := planMoves(context.Background(), src, "node-1", MoveOptions{Series: &subsecond.SeriesKey{Name: "load1", CPU: subsecond.Unknown}})
	if err != nil {
		t.Fatal(err)
	}
	return src, &input{host: "node-1", caps: pl.caps}, pl
}

// TestCommsOnlyCounts: the counts Moves reads (commands and functions
// alone) are those of a whole count.
func TestCommsOnlyCounts(t *testing.T) {
	src, in, pl := movesPlan(t)
	ctx := context.Background()
	all, err := countWindows(ctx, src, in, pl.wins, false)
	if err != nil {
		t.Fatal(err)
	}
	some, err := countWindows(ctx, src, in, pl.wins, true)
	if err != nil {
		t.Fatal(err)
	}
	byFeature := func(cs *counts, w int) map[string]int64 {
		out := map[string]int64{}
		feats, _ := cs.expand(w)
		for _, c := range feats {
			if k := cs.keys[c.id]; k.kind == kComm || k.kind == kFunction {
				out[cs.describe(k).String()] = c.n
			}
		}
		return out
	}
	n := 0
	for w := range pl.wins {
		if all.total[w] != some.total[w] {
			t.Fatalf("window %d: %d samples; want %d", w, some.total[w], all.total[w])
		}
		want, got := byFeature(all, w), byFeature(some, w)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("window %d: commands and functions counted alone = %v; want %v", w, got, want)
		}
		n += len(got)
	}
	if n == 0 {
		t.Fatal("no command or function counted")
	}
}

// loadCounter counts the windows of captures a source is asked for.
type loadCounter struct {
	storeSource
	loads atomic.Int64
}

func (c *loadCounter) CaptureWindow(ctx context.Context, id string, r subsecond.Range) (*subsecond.Capture, error) {
	c.loads.Add(1)
	return c.storeSource.CaptureWindow(ctx, id, r)
}

// TestBatchedCounts: a count reads back-to-back windows of a capture in a
// few loads (batches), not one a window, and counts what whole captures
// give. Before, Moves' 120 windows here took 139 loads (78 now: windows
// 10 s apart in one-minute captures), each decoding its captures' tables
// and asking the store again.
func TestBatchedCounts(t *testing.T) {
	src, in, pl := movesPlan(t)
	ctx := context.Background()
	counter := &loadCounter{storeSource: src}
	got, err := countWindows(ctx, counter, in, pl.wins, false)
	if err != nil {
		t.Fatal(err)
	}
	want, err := countWindows(ctx, struct{ timeline.Source }{src}, in, pl.wins, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.loads.Load(); n == 0 || n > 2*int64(len(pl.wins))/3 {
		t.Errorf("%d windows read in %d loads; want at most two thirds as many", len(pl.wins), n)
	}
	byFeature := func(cs *counts, w int) map[string]int64 {
		out := map[string]int64{}
		feats, nodes := cs.expand(w)
		for _, c := range feats {
			out[cs.describe(cs.keys[c.id]).String()] = c.n
		}
		for _, c := range nodes {
			out["node "+cs.describe(fkey{kind: kStack, a: c.id}).String()] = c.n
		}
		return out
	}
	for w := range pl.wins {
		if got.total[w] != want.total[w] || !reflect.DeepEqual(byFeature(got, w), byFeature(want, w)) {
			t.Fatalf("window %d: %d samples and counts %v;\nwant %d and %v", w, got.total[w], byFeature(got, w), want.total[w], byFeature(want, w))
		}
	}
}

// TestSpreadKeepsWindows: as a recording grows two minutes at a time,
// from 10 minutes to 6 hours, the windows stay on one grid: a span's
// windows are the last span's and new ones after it, or (the step
// doubled) every other one of the last span's and new ones; there are n/2
// to n of them, each whole in a recording, none overlapping.
func TestSpreadKeepsWindows(t *testing.T) {
	const n, length = 120, int64(5 * time.Second)
	start := time.Date(2026, 11, 30, 3, 0, 7, 0, time.UTC).UnixNano()
	var last []Window
	for end := start + int64(10*time.Minute); end <= start+int64(6*time.Hour); end += int64(2 * time.Minute) {
		// Two recordings, 90 s apart.
		gap := start + int64(7*time.Minute)
		recs := []timeline.Recording{{Start: start, End: gap}, {Start: gap + int64(90*time.Second), End: end}}
		wins := spread(recs, 0, timeline.EndOfTime, n, length)
		if len(wins) > n || len(wins) < n/2 {
			t.Fatalf("to %v: %d windows; want %d to %d", time.Duration(end-start), len(wins), n/2, n)
		}
		for i, w := range wins {
			in := w.From >= recs[0].Start && w.To <= recs[0].End || w.From >= recs[1].Start && w.To <= recs[1].End
			if w.To-w.From != length || !in || i > 0 && w.From < wins[i-1].To {
				t.Fatalf("to %v: window %d [%d, %d) is not a whole window in a recording after the one before", time.Duration(end-start), i, w.From, w.To)
			}
		}
		kept := 0
		for _, w := range last {
			if slices.ContainsFunc(wins, func(x Window) bool { return x.From == w.From }) {
				kept++
			}
		}
		if last != nil && kept != len(last) && kept < len(last)/2 {
			t.Errorf("to %v: %d of the last span's %d windows kept; want all or every other one", time.Duration(end-start), kept, len(last))
		}
		last = wins
	}
}

// TestMovesCountOnlyNewWindows: moves asked again after a capture was
// added count only the windows they had not counted (the windows stay on
// their grid, and the cache keeps the host's counts), and answer what
// Moves does.
func TestMovesCountOnlyNewWindows(t *testing.T) {
	src, n := movingNight(t)
	ctx := context.Background()
	cache := NewCache(0)
	opt := MoveOptions{Series: &subsecond.SeriesKey{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}}
	ask := func() {
		t.Helper()
		mv, hit, err := cache.Moves(ctx, src, "node-1", opt, nil)
		if err != nil || hit {
			t.Fatalf("hit %v, %v", hit, err)
		}
		fresh, err := Moves(ctx, src, "node-1", opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mv, fresh) {
			t.Errorf("the cached counts' movement differs from Moves'")
		}
	}
	rows := func() int {
		t.Helper()
		hc, ok := cache.counts.Peek(movesCounts + "node-1")
		if !ok {
			t.Fatal("no counts kept for the host's moves")
		}
		return len(hc.cs.total)
	}
	ask()
	for range 4 {
		before := rows()
		n.Captures++
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, n.Captures-1, nil)) }()
		if _, _, err := src.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprint("late-", n.Captures), Host: n.Host}); err != nil {
			t.Fatal(err)
		}
		ask()
		// A one-minute capture holds at most 12 windows of 5 s.
		if got := rows(); got > before+12 {
			t.Errorf("after capture %d: %d windows counted, %d before; want at most the new capture's 12 more", n.Captures, got, before)
		}
	}
}
