package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// TestCostBounds: a view whose size the parameters make too large is
// refused before any work, naming the parameter and a value that fits.
func TestCostBounds(t *testing.T) {
	// 2 CPUs from 5086.05 s to 5089.04 s: T0 5086 s, a span of 3.04 s.
	e := newEnv(t, Config{MaxCells: 1000, MaxNodes: 8})
	p := e.upload(perfText(2, 100, 3), "web-1")
	api := "/api/profiles/" + p.ID
	for _, tc := range []struct{ path, want string }{
		{"/cpus?bucket=0.001", "bucket: 0.001 s makes 3041 columns × 2 CPUs = 6082 cells, more than this server's limit of 1000; use bucket ≥ 0.0061 s"},
		{"/hotspots?bucket=0.005", "bucket ≥ 0.0061 s"},
		{"/heatmap?rows=1000", "col: 1 s makes 4 columns × 1000 rows = 4000 cells"},
		{"/heatmap?rows=1000", "col ≥ 3.1 s"},
		{"/heatmap?col=0.1&rows=50", "col ≥ 0.16 s"},
	} {
		res, b := e.do("GET", api+tc.path, nil)
		wantError(t, res, b, http.StatusBadRequest, tc.want)
	}
	// What fits is served: the suggested values, and one CPU at a finer
	// bucket than two could have.
	for _, path := range []string{"/cpus?bucket=0.0061", "/cpus?bucket=0.004&cpu=1", "/heatmap?col=0.16&rows=50", "/heatmap?col=3.1&rows=1000", "/hotspots?bucket=0.0061"} {
		if res, b := e.do("GET", api+path, nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s; want 200", path, res.StatusCode, b)
		}
	}
	// The page shows the refusal instead of hot spots.
	if _, b := e.do("GET", "/p/"+p.ID+"?bucket=0.001", nil); !strings.Contains(string(b), "bucket ≥ 0.0061 s") {
		t.Errorf("profile page with bucket=0.001 does not say which bucket fits")
	}
	// Fewer cells than rows: no column width helps.
	tiny := newEnv(t, Config{MaxCells: 40})
	p2 := tiny.upload(perfText(2, 100, 3), "web-1")
	res, b := tiny.do("GET", "/api/profiles/"+p2.ID+"/heatmap?rows=50", nil)
	wantError(t, res, b, http.StatusBadRequest, "col: 50 rows make more than this server's limit of 40 cells")

	// The flame graph of [0, 0.5) has 9 nodes: the root, two commands and
	// three frames under each; web's alone, 5.
	if res, b := e.do("GET", api+"/flamegraph?start=0&end=0.5&comm=web", nil); res.StatusCode != http.StatusOK {
		t.Errorf("small flame graph: %d %s", res.StatusCode, b)
	}
	res, b = e.do("GET", api+"/flamegraph?start=0&end=0.5&format=svg", nil)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "9 nodes, more than this server's limit of 8")
	res, b = e.do("GET", api+"/flamegraph?start=0&end=0.5&comm=web&format=pprof", nil)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "limit of 1 for pprof")
	if cd := res.Header.Get("Content-Disposition"); cd != "" {
		t.Errorf("refused export has Content-Disposition %q", cd)
	}
}

// blockingEngine holds every cores map until release is closed, telling
// started when one begins.
type blockingEngine struct {
	countEngine
	started chan struct{}
	release chan struct{}
	running atomic.Int32
}

func (b *blockingEngine) Cores(c *subsecond.Capture, q *Query) (any, error) {
	b.running.Add(1)
	defer b.running.Add(-1)
	b.started <- struct{}{}
	<-b.release
	return b.countEngine.Cores(c, q)
}

// TestHeavyLimit: past the slots, heavy requests wait while their clients
// do; past the queue they get 503 with Retry-After at once, and so does
// one that waited too long. Light requests are never held.
func TestHeavyLimit(t *testing.T) {
	eng := &blockingEngine{started: make(chan struct{}, 8), release: make(chan struct{})}
	e := newEnv(t, Config{Engine: eng, MaxHeavy: 1, HeavyQueue: 1, HeavyWait: time.Hour})
	p := e.upload(perfText(2, 20, 1), "x")
	cores := "/api/profiles/" + p.ID + "/cpus"

	type result struct {
		code int
		err  error
	}
	get := func(ctx context.Context, path string) chan result {
		out := make(chan result, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- result{err: err}
				return
			}
			res.Body.Close()
			out <- result{code: res.StatusCode}
		}()
		return out
	}
	first := get(context.Background(), cores)
	<-eng.started // the one slot is taken
	waitCtx, abandon := context.WithCancel(context.Background())
	waiting := get(waitCtx, cores+"?bucket=0.2")
	srv := e.server()
	waitFor(t, "a request queued", func() bool { return srv.heavy.waiting.Load() == 1 })

	res, b := e.do("GET", cores+"?bucket=0.3", nil)
	wantError(t, res, b, http.StatusServiceUnavailable, "busy")
	if ra := res.Header.Get("Retry-After"); ra == "" {
		t.Errorf("503 without Retry-After")
	}
	// Light requests pass while the heavy ones are held.
	if res, _ := e.do("GET", "/api/profiles", nil); res.StatusCode != http.StatusOK {
		t.Errorf("list while busy: %d", res.StatusCode)
	}
	// The queued client leaves: its request leaves the queue without
	// ever computing.
	abandon()
	if r := <-waiting; r.err == nil {
		t.Errorf("abandoned request answered %d", r.code)
	}
	waitFor(t, "the queue to empty", func() bool { return srv.heavy.waiting.Load() == 0 })
	close(eng.release)
	if r := <-first; r.code != http.StatusOK {
		t.Errorf("first request = %d, %v; want 200", r.code, r.err)
	}
	if n := len(eng.started); n != 0 {
		t.Errorf("%d more cores maps started; want none (the abandoned one never ran)", n)
	}

	// A request that waits longer than HeavyWait is refused.
	eng2 := &blockingEngine{started: make(chan struct{}, 8), release: make(chan struct{})}
	e2 := newEnv(t, Config{Engine: eng2, MaxHeavy: 1, HeavyWait: 50 * time.Millisecond})
	p2 := e2.upload(perfText(2, 20, 1), "x")
	held := make(chan int, 1)
	go func() {
		res, _ := e2.do("GET", "/api/profiles/"+p2.ID+"/cpus", nil)
		held <- res.StatusCode
	}()
	<-eng2.started
	res, b = e2.do("GET", "/api/profiles/"+p2.ID+"/cpus?bucket=0.2", nil)
	wantError(t, res, b, http.StatusServiceUnavailable, "busy")
	close(eng2.release)
	if code := <-held; code != http.StatusOK {
		t.Errorf("held request = %d; want 200", code)
	}
}

// TestHeavyFair: the views of one capture hold at most half the heavy
// slots, so a view of another capture, queued behind many of them, runs
// at once in the slot they leave. Before, the queue was first come first
// served and the hostile capture's views took every slot: the small
// capture's view ran last.
func TestHeavyFair(t *testing.T) {
	eng := &blockingEngine{started: make(chan struct{}, 8), release: make(chan struct{})}
	e := newEnv(t, Config{Engine: eng, MaxHeavy: 2, HeavyQueue: 16, HeavyWait: time.Hour})
	hostile := e.upload(perfText(2, 20, 1), "hostile")
	small := e.upload(perfText(2, 20, 2), "small")
	srv := e.server()

	done := make(chan string, 8)
	view := func(p subsecond.Profile, name string, bucket int) {
		go func() {
			res, b := e.do("GET", fmt.Sprintf("/api/profiles/%s/cpus?bucket=0.%d", p.ID, bucket), nil)
			if res.StatusCode != http.StatusOK {
				done <- fmt.Sprintf("%s: %d %s", name, res.StatusCode, b)
				return
			}
			done <- name
		}()
	}
	view(hostile, "hostile 1", 1)
	<-eng.started // it holds one slot of two
	for i := 2; i <= 5; i++ {
		view(hostile, fmt.Sprintf("hostile %d", i), i)
		waitFor(t, "the hostile views to queue", func() bool { return srv.heavy.waiting.Load() == int64(i-1) })
	}
	if n := eng.running.Load(); n != 1 {
		t.Errorf("%d of the hostile capture's views computed at once; want 1 (half the slots)", n)
	}
	view(small, "small", 1)
	select {
	case <-eng.started:
	case <-time.After(10 * time.Second):
		t.Fatalf("the small capture's view did not start while the hostile capture's five held one slot of two and waited (waiting %d)", srv.heavy.waiting.Load())
	}
	eng.release <- struct{}{}
	eng.release <- struct{}{}
	first := []string{<-done, <-done}
	slices.Sort(first)
	if want := []string{"hostile 1", "small"}; !slices.Equal(first, want) {
		t.Errorf("answered first %q; want %q", first, want)
	}
	for i := 2; i <= 5; i++ {
		<-eng.started
		eng.release <- struct{}{}
		if got, want := <-done, fmt.Sprintf("hostile %d", i); got != want {
			t.Errorf("answered %q; want %q (the hostile capture's views in their order)", got, want)
		}
	}
	if n := srv.heavy.runningNow(); n != 0 {
		t.Errorf("%d slots held after all were answered", n)
	}
}

// TestHeavyFairLeaving: a freed slot goes to the oldest waiter whose key
// holds less than its share, past those whose key holds it; requests of no
// key (a host's or the fleet's views) are bounded by no share; and
// waiters that leave the queue leave no slot taken and no count behind.
func TestHeavyFairLeaving(t *testing.T) {
	g := newGate(2, 16, time.Minute)
	holdB, err := g.enter(withFairKey(context.Background(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	holdA, err := g.enter(withFairKey(context.Background(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	cancels := map[string]context.CancelFunc{}
	releases := map[string]chan struct{}{}
	wait := func(key, name string) {
		ctx, cancel := context.WithCancel(withFairKey(context.Background(), key))
		cancels[name] = cancel
		releases[name] = make(chan struct{})
		n := g.waiting.Load()
		go func() {
			release, err := g.enter(ctx)
			if err != nil {
				got <- name + " left"
				return
			}
			got <- name
			<-releases[name]
			release()
		}()
		waitFor(t, name+" to queue", func() bool { return g.waiting.Load() == n+1 })
	}
	wait("a", "a2")
	wait("a", "a3")
	wait("b", "b2")
	wait("c", "c1")
	wait("", "u1")
	wait("", "u2")
	cancels["a2"]()
	if s := <-got; s != "a2 left" {
		t.Fatalf("after a2 was cancelled: %q", s)
	}
	cancels["c1"]()
	if s := <-got; s != "c1 left" {
		t.Fatalf("after c1 was cancelled: %q", s)
	}
	holdA()
	if s := <-got; s != "a3" {
		t.Fatalf("a's slot freed: %q took it; want a3, the oldest", s)
	}
	close(releases["a3"])
	// b holds its share (holdB): b2 waits, and the requests of no key
	// pass it.
	if s := <-got; s != "u1" {
		t.Fatalf("a3's slot freed: %q took it; want u1 (b2's key holds its share)", s)
	}
	close(releases["u1"])
	if s := <-got; s != "u2" {
		t.Fatalf("u1's slot freed: %q took it; want u2, a key of its own", s)
	}
	close(releases["u2"])
	waitFor(t, "a slot free", func() bool { return g.runningNow() == 1 })
	holdB()
	if s := <-got; s != "b2" {
		t.Fatalf("b's slot freed: %q took it; want b2", s)
	}
	close(releases["b2"])
	waitFor(t, "every slot free", func() bool { return g.runningNow() == 0 && g.waiting.Load() == 0 })
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.line) != 0 || len(g.held) != 0 {
		t.Errorf("waiters %v and counts %v left after every request went", g.line, g.held)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// heapSampler records the peak of the heap's object bytes, read with
// runtime/metrics every millisecond.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			h.peak = max(h.peak, heapObjects())
			select {
			case <-h.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) Peak() uint64 {
	close(h.stop)
	<-h.done
	return h.peak
}

// TestAbandonedHeavyRequests: ten heavy requests whose clients leave at
// once leave the heap under a stated bound: the heavy slots' worth of
// computations (and one spare), not ten. Half are the attack of issue 14,
// hot-spot searches at bucket=0.0015 s and nearby (7.7 million cells each,
// 500 MB of heap), which before the fix ran detached from their requests,
// all at once; half are the finest views the cell limit allows, each for
// a different bucket so that none is shared.
func TestAbandonedHeavyRequests(t *testing.T) {
	st, err := sqlite.OpenStore(context.Background(), t.TempDir()+"/test.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, _, err := st.Import(context.Background(), sampledata.IncidentCompressed(), store.ImportOptions{Name: "incident"})
	if err != nil {
		t.Fatal(err)
	}
	const slots = 2
	srv := New(Config{Store: sqliteStore{st}, Engine: engine.Engine{}, MaxHeavy: slots})
	srv.hot.linger = 20 * time.Millisecond
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	api := ts.URL + "/api/profiles/" + p.ID
	get := func(ctx context.Context, path string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", api+path, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
	// Warm the capture cache; its memory is not the requests'.
	get(context.Background(), "/cpus")

	// One computation's heap: the finest hot-spot search that fits.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapObjects()
	h := sampleHeap()
	get(context.Background(), "/hotspots?bucket=0.0116")
	one := h.Peak() - base
	t.Logf("one hot-spot search at 1M cells: %d MB of heap", one>>20)

	runtime.GC()
	base = heapObjects()
	h = sampleHeap()
	ctx, abandon := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 10 {
		path := fmt.Sprintf("/hotspots?bucket=0.00%d", 15+i) // the attack
		switch {
		case i%4 == 1:
			path = fmt.Sprintf("/hotspots?bucket=0.0%d", 12+i)
		case i%4 == 3:
			path = fmt.Sprintf("/cpus?bucket=0.0%d", 12+i)
		}
		wg.Add(1)
		go func() { defer wg.Done(); get(ctx, path) }()
	}
	time.Sleep(50 * time.Millisecond)
	abandon()
	wg.Wait()
	// The computations that had a slot finish; the others leave the queue.
	waitFor(t, "the heavy slots to empty", func() bool { return srv.heavy.runningNow() == 0 && srv.heavy.waiting.Load() == 0 })
	peak := h.Peak() - base
	bound := (slots + 1) * one
	t.Logf("ten abandoned heavy requests: peak %d MB of heap above the start; bound %d MB", peak>>20, bound>>20)
	if peak > bound {
		t.Errorf("ten abandoned heavy requests took %d MB of heap; want at most %d MB (%d slots and one spare, of %d MB each)",
			peak>>20, bound>>20, slots, one>>20)
	}
	runtime.GC()
	if after := heapObjects(); after > base+one/2 {
		t.Errorf("heap %d MB after the requests ended; want back near %d MB", after>>20, base>>20)
	}
}

// repeated returns a capture of one short sample repeated n times: one
// CPU, one instant, one stack, as a hostile upload amplifies it.
func repeated(n int) string {
	return strings.Repeat("a 1 [000] 1.000000: 1 cpu-clock: \n\tffff f (k)\n\n", n)
}

// TestViewSamples: a view that would read more samples than the server's
// budget is refused (413 naming the limit and how to narrow) before any is
// loaded; a flame graph or stack chart of a range within the budget reads
// only that range's seconds and answers as from the whole capture; small
// profiles are served as before. Before, the views of a capture of 49 M
// identical samples loaded all of them (1.9 GB).
func TestViewSamples(t *testing.T) {
	e := newEnv(t, Config{MaxViewSamples: 250})
	hostile := e.upload(repeated(5000), "hostile")
	small := e.upload(perfText(1, 100, 1), "small")
	big := e.upload(perfText(2, 100, 3), "big") // 200 samples a second over 4 seconds
	whole := newEnv(t, Config{})
	ref := whole.upload(perfText(2, 100, 3), "big")

	for _, path := range []string{"/heatmap", "/cpus", "/hotspots"} {
		res, b := e.do("GET", "/api/profiles/"+hostile.ID+path, nil)
		wantError(t, res, b, http.StatusRequestEntityTooLarge, "holds 5000 samples, more than the 250 one view may read on this server (--max-view-samples)")
	}
	for _, path := range []string{"/flamegraph", "/flamegraph?start=0&end=0.5&format=pprof", "/samples?start=0&end=0.001", "/diff?start2=0&end2=0.5"} {
		res, b := e.do("GET", "/api/profiles/"+hostile.ID+path, nil)
		wantError(t, res, b, http.StatusRequestEntityTooLarge, "more than the 250 one view may read")
	}
	res, b := e.do("GET", "/api/profiles/"+hostile.ID+"/flamegraph", nil)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "the range 0–0 s (<0.001 s) holds 5000 samples in the whole seconds it overlaps")
	if res, b := e.do("GET", "/p/"+hostile.ID, nil); res.StatusCode != http.StatusOK || !strings.Contains(string(b), "--max-view-samples") {
		t.Errorf("profile page of the hostile capture = %d; want 200 saying why its views are refused", res.StatusCode)
	}
	if res, b := e.do("GET", "/api/profiles/"+small.ID+"/heatmap", nil); res.StatusCode != http.StatusOK {
		t.Errorf("small profile's heatmap = %d %s; want 200", res.StatusCode, b)
	}

	res, b = e.do("GET", "/api/profiles/"+big.ID+"/heatmap", nil)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "open the flame graph of a shorter range (start, end)")
	res, b = e.do("GET", "/api/profiles/"+big.ID+"/flamegraph?start=0&end=2", nil)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "choose a shorter range (start, end)")
	for _, path := range []string{"/flamegraph?start=1&end=1.5", "/flamegraph?start=2&end=3&format=folded", "/samples?start=1.2&end=1.3&cpu=1"} {
		res, got := e.do("GET", "/api/profiles/"+big.ID+path, nil)
		_, want := whole.do("GET", "/api/profiles/"+ref.ID+path, nil)
		if res.StatusCode != http.StatusOK || string(got) != string(want) {
			t.Errorf("GET %s of a capture over the budget = %d %.200s; want 200 and the whole capture's answer %.200s", path, res.StatusCode, got, want)
		}
	}
}

// heldImports is the server's store with each import held until release
// says, counting the imports running at once.
type heldImports struct {
	sqliteStore
	release chan struct{}
	entered chan struct{}
	running atomic.Int64
	most    atomic.Int64
}

func (h *heldImports) Import(ctx context.Context, r io.Reader, u Upload) (*subsecond.Profile, bool, error) {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	h.entered <- struct{}{}
	<-h.release
	return h.sqliteStore.Import(ctx, r, u)
}

// TestImportSlots: uploads are imported MaxImports at a time; the others
// wait for a slot, unread, and are imported in turn, all of them stored.
// Before, every upload was imported at once: four uploads of the bundled
// capture held 576 MB of columns together and left the views a fraction
// of the cores.
func TestImportSlots(t *testing.T) {
	st, err := sqlite.OpenStore(context.Background(), t.TempDir()+"/test.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	held := &heldImports{sqliteStore: sqliteStore{st}, release: make(chan struct{}), entered: make(chan struct{}, 8)}
	s := New(Config{Store: held, Engine: engine.Engine{}, Night: sqliteNight{st}, State: st, MaxImports: 1, Metrics: true})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	const uploads = 3
	codes := make(chan int, uploads)
	for i := range uploads {
		go func() {
			res, err := http.Post(fmt.Sprintf("%s/api/profiles?name=u%d", srv.URL, i), "text/plain", strings.NewReader(perfText(2, 100+i, 2)))
			if err != nil {
				codes <- 0
				return
			}
			res.Body.Close()
			codes <- res.StatusCode
		}()
	}
	<-held.entered
	// The others wait for the slot: none enters while the first is held.
	deadline := time.Now().Add(5 * time.Second)
	for s.importsWaiting.Load() != uploads-1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.importsWaiting.Load(); n != uploads-1 {
		t.Fatalf("%d uploads wait for an import slot; want %d", n, uploads-1)
	}
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), fmt.Sprintf("subsecond_imports_waiting %d", uploads-1)) || !strings.Contains(string(b), "subsecond_imports_running 1") {
		t.Errorf("/metrics does not show 1 import running and %d waiting", uploads-1)
	}
	for i := range uploads {
		if i > 0 {
			<-held.entered
		}
		held.release <- struct{}{}
	}
	for range uploads {
		if c := <-codes; c != http.StatusCreated {
			t.Errorf("upload answered %d; want 201", c)
		}
	}
	if m := held.most.Load(); m != 1 {
		t.Errorf("%d imports ran at once; want 1 (MaxImports)", m)
	}
	if n := len(mustList(t, st)); n != uploads {
		t.Errorf("%d profiles stored; want %d", n, uploads)
	}
}

func mustList(t *testing.T, st *store.Store) []subsecond.Profile {
	t.Helper()
	list, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestRangeViewsByWindow: a flame graph, export or stack chart of a few
// seconds of a capture the cache does not hold reads only those seconds:
// the whole capture is neither loaded nor cached for it, and every answer
// is byte for byte the answer from the whole capture. A range of more than
// half the capture, and the whole-capture views, still load it through the
// cache. Before, every range view of a capture not in the cache loaded
// and cached the whole capture (120 chunks for a few seconds' graph).
func TestRangeViewsByWindow(t *testing.T) {
	cold, err := sqlite.OpenStore(context.Background(), t.TempDir()+"/test.db", store.Options{WarmLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cold.Close() })
	e := newEnvOn(t, cold, Config{})
	p := e.upload(perfText(2, 100, 10), "ten")
	whole := newEnv(t, Config{})
	ref := whole.upload(perfText(2, 100, 10), "ten")
	if _, err := whole.st.Capture(context.Background(), ref.ID); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/flamegraph?start=1&end=3",
		"/flamegraph?start=0&end=0.5",
		"/flamegraph?start=2.5&end=6.25&cpu=1",
		"/flamegraph?start=9&end=11",
		"/flamegraph?start=1&end=2&format=folded",
		"/flamegraph?start=1&end=2&format=svg",
		"/flamegraph?start=1&end=2&format=pprof",
		"/samples?start=1.2&end=1.3",
		"/samples?start=4&end=5&cpu=0",
	} {
		res, got := e.do("GET", "/api/profiles/"+p.ID+path, nil)
		_, want := whole.do("GET", "/api/profiles/"+ref.ID+path, nil)
		if strings.Contains(path, "pprof") {
			got, want = gunzip(t, got), gunzip(t, want)
		}
		got = bytes.ReplaceAll(got, []byte(p.ID), []byte(ref.ID))
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s of a capture not in the cache = %d %.200s; want 200 and the whole capture's answer %.200s", path, res.StatusCode, got, want)
		}
	}
	// What the cache holds now is the capture's tables alone, which the
	// windows share.
	w, err := cold.CaptureWindow(context.Background(), p.ID, subsecond.Range{Start: p.T0(), End: p.T0() + 1e9})
	if err != nil {
		t.Fatal(err)
	}
	tables := (&subsecond.Capture{Strings: w.Strings, Frames: w.Frames, Nodes: w.Nodes}).Bytes()
	if st := cold.CacheStats(); st.Misses != 0 || st.Bytes != tables {
		t.Errorf("after range views, the capture cache has %d misses and %d bytes; want the capture neither loaded nor cached, its tables' %d bytes alone kept", st.Misses, st.Bytes, tables)
	}
	for _, path := range []string{"/flamegraph?start=0&end=6", "/heatmap"} {
		if res, b := e.do("GET", "/api/profiles/"+p.ID+path, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, b)
		}
	}
	if st := cold.CacheStats(); st.Misses != 1 || st.Hits != 1 || st.Bytes == 0 {
		t.Errorf("after a graph of most of the capture and a heatmap, the cache has %d misses, %d hits, %d bytes; want the capture loaded once and cached", st.Misses, st.Hits, st.Bytes)
	}
}

// gunzip returns the decompressed b.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLongAnalysesLeaveASlot: long analyses (enterLong) hold at most all
// the heavy slots but one; another waits for one of them to end, while a
// short view still gets the slot left at once. Before, two explanations
// took both slots of a two-core server and every flame graph and map
// waited behind them (bench/soak: heavy views waited 255 ms on average,
// the explanations and moves holding about 70% of the slots' time).
func TestLongAnalysesLeaveASlot(t *testing.T) {
	g := newGate(2, 8, time.Minute)
	first, err := g.enterLong(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		release, err := g.enterLong(ctx)
		if err == nil {
			release()
		}
		second <- err
	}()
	for g.waiting.Load() != 1 {
		runtime.Gosched()
	}
	// The second analysis waits; the short view is not kept waiting.
	short, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := g.runningNow(); n != 2 {
		t.Errorf("%d slots held; want the first analysis's and the short view's", n)
	}
	select {
	case err := <-second:
		t.Fatalf("a second long analysis entered (%v) while one held a slot of two", err)
	default:
	}
	short()
	first()
	if err := <-second; err != nil {
		t.Errorf("the second analysis, once the first ended: %v; want it run", err)
	}
	cancel()
	if n, l := g.runningNow(), len(g.long); n != 0 || l != 0 {
		t.Errorf("after all ended, %d slots and %d long tokens held; want none", n, l)
	}
	// A server of one slot runs a long analysis in it.
	one := newGate(1, 8, time.Minute)
	release, err := one.enterLong(context.Background())
	if err != nil {
		t.Fatalf("enterLong on a gate of one slot: %v", err)
	}
	release()
	release() // a second release does nothing
	if one.runningNow() != 0 || len(one.long) != 0 {
		t.Errorf("a gate of one slot holds %d slots and %d tokens after the release", one.runningNow(), len(one.long))
	}
}

// TestImportPausesForViews uploads a capture of 6 MB of text while a view
// waits for the one heavy slot: the import pauses before each MiB but the
// first, and stores the whole capture. With no view waiting it never
// pauses.
func TestImportPausesForViews(t *testing.T) {
	const pause = 20 * time.Millisecond
	eng := &blockingEngine{started: make(chan struct{}, 8), release: make(chan struct{})}
	e := newEnv(t, Config{Engine: eng, MaxHeavy: 1, HeavyQueue: 4, HeavyWait: time.Hour, ImportPause: pause})
	srv := e.server()
	text := perfText(8, 200, 16)
	mib := len(text) >> 20
	if mib < 5 {
		t.Fatalf("the capture is %d bytes of text; want at least 5 MiB", len(text))
	}
	p := e.upload(text, "alone")
	if n := srv.importPauses.Load(); n != 0 {
		t.Errorf("%d pauses with no view waiting; want none", n)
	}
	cores := "/api/profiles/" + p.ID + "/cpus"
	done := make(chan int, 2)
	for _, q := range []string{"", "?bucket=0.2"} {
		go func() {
			res, _ := e.do("GET", cores+q, nil)
			done <- res.StatusCode
		}()
		if q == "" {
			<-eng.started // the slot is taken
		}
	}
	waitFor(t, "a view queued", func() bool { return srv.heavy.waiting.Load() == 1 })
	start := time.Now()
	q := e.upload(strings.Replace(text, "test-host", "other-host", 1), "while a view waits")
	took := time.Since(start)
	n, paused := srv.importPauses.Load(), time.Duration(srv.importPaused.Load())
	t.Logf("%d MiB of text imported in %s while a view waited: %d pauses, %s in all", mib, took, n, paused)
	if n < int64(mib-1) || paused < time.Duration(n)*pause || took < paused {
		t.Errorf("%d pauses of %s in all over %d MiB of text, import %s; want one of %s before each MiB but the first", n, paused, mib, took, pause)
	}
	if q.Samples != p.Samples {
		t.Errorf("stored %d samples; want %d", q.Samples, p.Samples)
	}
	close(eng.release)
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("view = %d; want 200", code)
		}
	}
}
