package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
)

// explainNight imports a night of eight one-minute captures of 4 CPUs
// with the kubelet on CPU 2 in the 8 s before each of three "reset"
// markers, and stores the markers.
func explainNight(t *testing.T, e *testEnv) []subsecond.Marker {
	t.Helper()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 8, Length: time.Minute, Unanchored: -1, Seed: 5}
	var ms []subsecond.Marker
	for _, s := range []int{50, 200, 410} {
		m := start.Add(time.Duration(s) * time.Second)
		ms = append(ms, subsecond.Marker{Time: m.UnixNano(), Text: "mlx5_core 0000:3b:00.0: reset"})
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 2, Start: m.Add(-8 * time.Second), End: m.Add(-1 * time.Second)})
	}
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := e.st.Import(context.Background(), pr, store.ImportOptions{FileName: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.st.AddMarkers(context.Background(), "node-1", ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestExplainAPIAndPages(t *testing.T) {
	e := newEnv(t, Config{})
	ms := explainNight(t, e)

	var rep explain.Report
	e.getJSON("/api/hosts/node-1/explain?match=reset&before=10", &rep)
	if len(rep.Windows) != len(ms) || len(rep.Findings) == 0 {
		t.Fatalf("report: %d windows, %d findings; want %d windows and findings", len(rep.Windows), len(rep.Findings), len(ms))
	}
	top := rep.Findings[0]
	if top.Comm != "kubelet" || top.StoodOut != len(ms) || top.Of != len(ms) {
		t.Errorf("first finding = %+v; want the kubelet, standing out before all %d markers", top, len(ms))
	}

	// The page says it as a sentence and links the finding's diff.
	res, b := e.do("GET", "/hosts/node-1/explain?match=reset&before=10", nil)
	page := string(b)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "kubelet") || !strings.Contains(page, "before 3 of 3 marker windows") {
		t.Fatalf("explain page = %d; want the kubelet's sentence:\n%.3000s", res.StatusCode, page)
	}
	if !strings.Contains(page, "/hosts/node-1/explain/diff?") {
		t.Errorf("explain page has no link to its differential flame graph")
	}
	if !strings.Contains(page, "relabelings stop at the 20th as extreme as observed") {
		t.Errorf("explain page does not say how its relabelings stop")
	}
	if n := strings.Count(page, ">on the night</a>"); n != len(ms) || !strings.Contains(page, `href="/hosts/node-1?from=`) {
		t.Errorf("explain page: %d windows linked to the night; want %d", n, len(ms))
	}

	// The differential graph: the windows before the markers against the
	// control windows, each side the samples of its windows.
	var d flame.Graph
	e.getJSON("/api/hosts/node-1/explain/diff?idle=1&match=reset&before=10", &d)
	var before, control int64
	for _, w := range rep.Windows {
		before += w.Samples
	}
	for _, w := range rep.Controls {
		control += w.Samples
	}
	if d.Total != before || d.BaseTotal != control {
		t.Errorf("diff totals %d against %d; the windows hold %d and the controls %d", d.Total, d.BaseTotal, before, control)
	}
	v := url.Values{"match": {"reset"}, "before": {"10"}, "search": {"^kubelet$"}}
	if res, b := e.do("GET", "/hosts/node-1/explain/diff?"+v.Encode(), nil); res.StatusCode != http.StatusOK || !strings.Contains(string(b), "control windows") {
		t.Errorf("explain diff page = %d %.500s", res.StatusCode, b)
	}

	// No marker matches: the API says so; the page says it under its form.
	if res, b := e.do("GET", "/api/hosts/node-1/explain?match=watchdog", nil); res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "watchdog") {
		t.Errorf("no matching marker: %d %s; want 400 naming the expression", res.StatusCode, b)
	}
	res, b = e.do("GET", "/hosts/node-1/explain?match=watchdog", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `data-testid="explain-error"`) || !strings.Contains(string(b), `value="watchdog"`) {
		t.Errorf("explain page without a matching marker = %d; want the form kept and the reason:\n%.2000s", res.StatusCode, b)
	}
	for path, want := range map[string]int{
		"/api/hosts/node-1/explain?before=0.5": 400,
		"/api/hosts/node-1/explain?match=(":    400,
		"/api/hosts/nobody/explain":            404,
	} {
		if res, b := e.do("GET", path, nil); res.StatusCode != want {
			t.Errorf("GET %s = %d %s; want %d", path, res.StatusCode, b, want)
		}
	}
}

// TestCachedAnalysesTakeNoSlot: an explanation or a host's moves asked
// again are answered from the cache while every heavy slot is held; one
// not asked before waits for a slot, and is refused when none comes.
func TestCachedAnalysesTakeNoSlot(t *testing.T) {
	e := newEnv(t, Config{MaxHeavy: 2, HeavyWait: 300 * time.Millisecond})
	explainNight(t, e)
	addLoad(t, e)
	paths := []string{"/api/hosts/node-1/explain?match=reset&before=10", "/api/hosts/node-1/moves?name=load1", "/api/hosts/node-1/moves?comm=kubelet"}
	var first []string
	for _, p := range paths {
		res, b := e.do("GET", p, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", p, res.StatusCode, b)
		}
		first = append(first, string(b))
	}

	g := e.s.heavy
	for _, c := range []chan struct{}{g.long, g.moves} {
		for range cap(c) {
			c <- struct{}{}
		}
	}
	var slots []func()
	for range g.size {
		release, err := g.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, release)
	}
	defer func() {
		for _, c := range []chan struct{}{g.long, g.moves} {
			for range cap(c) {
				<-c
			}
		}
		for _, release := range slots {
			release()
		}
	}()
	for i, p := range paths {
		begin := time.Now()
		res, b := e.do("GET", p, nil)
		if res.StatusCode != http.StatusOK || string(b) != first[i] || time.Since(begin) >= 300*time.Millisecond {
			t.Errorf("GET %s again with every slot held = %d after %s; want the first answer at once:\n%.300s", p, res.StatusCode, time.Since(begin), b)
		}
	}
	for _, p := range []string{"/api/hosts/node-1/explain?match=reset&before=10&seed=2", "/api/hosts/node-1/moves?name=load1&to=2026-11-30T03:06:00Z"} {
		if res, b := e.do("GET", p, nil); res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET %s, not asked before, with every slot held = %d; want 503:\n%.300s", p, res.StatusCode, b)
		}
	}
}

// addLoad adds the series load1 over explainNight's first 8 minutes.
func addLoad(t *testing.T, e *testEnv) {
	t.Helper()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	load := subsecond.Series{Name: "load1", CPU: subsecond.Unknown}
	for s := 1; s <= 8*60; s++ {
		load.Points = append(load.Points, subsecond.Point{Time: start.Add(time.Duration(s) * time.Second).UnixNano(), Value: float64(s % 7)})
	}
	if _, err := e.st.AddSeries(context.Background(), "node-1", []subsecond.Series{load}); err != nil {
		t.Fatal(err)
	}
}

// TestMovesNotBehindExplanations: a host's moves are answered while
// explanations hold every slot their class may take and more wait for
// one. Before, moves shared the explanations' class and queued behind
// their misses (bench/soak: moves p99 23.9 s, and a 503 after 30 s).
func TestMovesNotBehindExplanations(t *testing.T) {
	e := newEnv(t, Config{MaxHeavy: 2, HeavyWait: 10 * time.Second})
	explainNight(t, e)
	addLoad(t, e)
	g := e.s.heavy
	var held []func()
	for range cap(g.long) {
		release, err := g.enterLong(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	// An explanation not asked before waits for the class's slot.
	waiting := make(chan int, 1)
	go func() {
		res, _ := e.do("GET", "/api/hosts/node-1/explain?match=reset&before=10&seed=3", nil)
		waiting <- res.StatusCode
	}()
	waitFor(t, "an explanation queued", func() bool { return g.waiting.Load() == 1 })
	for _, p := range []string{"/api/hosts/node-1/moves?name=load1", "/api/hosts/node-1/moves?comm=kubelet"} {
		if res, b := e.do("GET", p, nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s while explanations hold their slots = %d; want 200:\n%.300s", p, res.StatusCode, b)
		}
	}
	select {
	case code := <-waiting:
		t.Fatalf("the waiting explanation answered %d while its class's slots were held", code)
	default:
	}
	for _, release := range held {
		release()
	}
	if code := <-waiting; code != http.StatusOK {
		t.Errorf("the waiting explanation, once the slots were free = %d; want 200", code)
	}
}
