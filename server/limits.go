package server

import (
	"cmp"
	"context"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Default bounds of the views' cost.
const (
	// DefaultMaxCells bounds the cells of one heatmap or cores map (and
	// of the cores map behind a hot-spot search): a cores map of a million
	// cells takes about 40 MB to compute, a hot-spot search about 70 MB.
	DefaultMaxCells = 1_000_000
	// DefaultMaxNodes bounds the nodes of one flame graph sent or
	// exported: 250,000 nodes take about 30 MB to write as JSON. A pprof
	// export holds more per node (a sample per node, command, CPU, pid and
	// tid, and gzip's state: about 160 bytes a node on the deep real
	// capture, 2.5 times its JSON), so its bound is a PprofNodeCost-th of
	// the limit.
	DefaultMaxNodes = 250_000
	// DefaultMaxViewSamples bounds the samples one view reads: a capture
	// takes about 45 bytes a sample loaded, with the indexes its first
	// view builds, so ten million take about 450 MB, and a server with
	// --max-heavy 2 stays within its memory limit while viewing two at
	// once. The bundled incident capture holds 564,480 samples.
	DefaultMaxViewSamples = 10_000_000
	// PprofNodeCost is how many times a node of a pprof export costs what
	// a node of the other formats does.
	PprofNodeCost = 5
	// DefaultHeavyQueue is how many heavy requests may wait for a slot
	// before more are refused at once.
	DefaultHeavyQueue = 64
	// DefaultHeavyWait is the longest a heavy request waits for a slot.
	DefaultHeavyWait = 30 * time.Second
)

// DefaultMaxHeavy returns the default number of heavy requests computed at
// once: one per CPU, at least two.
func DefaultMaxHeavy() int { return max(2, runtime.GOMAXPROCS(0)) }

// DefaultMaxImports is how many uploads are imported at once by default:
// one per two cores, so that imports, which can use every core they get,
// leave the views cores of their own.
func DefaultMaxImports() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// clientWait is how long an import's read of its body may wait on the
// client before the import lends its slot to another, and lendBytes how
// much the client must then send without such a wait for the import to
// take a slot again.
const (
	clientWait = 100 * time.Millisecond
	lendBytes  = 4 << 20
)

// slotBody is an upload's body as its import reads it, holding an import
// slot while the import works: a read that waits on the client longer
// than clientWait gives the slot up, and the import goes on without one,
// at its client's pace, until the client has sent lendBytes without such
// a wait; then it takes a slot again (waiting, while the request lasts,
// if none is free). A slow client thus holds up no other import, and its
// own is bounded by its pace (and --min-upload-rate) rather than by a
// slot.
type slotBody struct {
	r       io.Reader
	s       *Server
	ctx     context.Context
	mu      sync.Mutex
	held    bool
	release func()
	since   int64 // bytes read without a wait since the slot was lent
}

func (b *slotBody) Read(p []byte) (int, error) {
	start := time.Now()
	t := time.AfterFunc(clientWait, b.done)
	n, err := b.r.Read(p)
	t.Stop()
	b.mu.Lock()
	held := b.held
	b.mu.Unlock()
	if held {
		return n, err
	}
	if time.Since(start) >= clientWait {
		b.since = 0
	}
	if b.since += int64(n); b.since < lendBytes || err != nil {
		return n, err
	}
	release, werr := b.s.enterImport(b.ctx)
	if werr != nil {
		return n, werr
	}
	b.mu.Lock()
	b.held, b.release, b.since = true, release, 0
	b.mu.Unlock()
	return n, nil
}

// done gives up the slot, if held.
func (b *slotBody) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held {
		b.held = false
		b.release()
	}
}

// DefaultImportPause is how long an import pauses before each MiB of text
// while views wait for a heavy slot (see pauseImport).
const DefaultImportPause = 4 * time.Millisecond

// pauseImport pauses an import for s.importPause, or until ctx ends, when
// views wait for a heavy slot; the import's reader calls it before each
// block of text (1 MiB) it hands to the parsers (store.ImportOptions.Pause).
// Views are what a user waits on; an upload is the recorder's or a
// script's, and the import of the bundled capture (888 MB of text) takes
// about 1.5 CPU-seconds, which it otherwise shares with the views as the
// Go scheduler shares its goroutines, all alike. Pausing its reader lets
// the parsers and encoders drain and the views have the cores, as
// PostgreSQL's autovacuum pauses after each measure of work
// (vacuum_cost_delay). An import is slowed by at most the pause per MiB
// (3.6 s for the bundled capture at the default), however long views wait.
func (s *Server) pauseImport(ctx context.Context) {
	if s.importPause <= 0 || s.heavy.waiting.Load() == 0 {
		return
	}
	t := time.NewTimer(s.importPause)
	defer t.Stop()
	start := time.Now()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	s.importPauses.Add(1)
	s.importPaused.Add(int64(time.Since(start)))
}

// enterImport takes an import slot, waiting while ctx lasts; the caller
// calls the returned release once done. The upload's body is not read
// while it waits, which its pace does not count (see uploadBody).
func (s *Server) enterImport(ctx context.Context) (release func(), err error) {
	select {
	case s.imports <- struct{}{}:
		return func() { <-s.imports }, nil
	default:
	}
	s.importsWaiting.Add(1)
	defer s.importsWaiting.Add(-1)
	select {
	case s.imports <- struct{}{}:
		return func() { <-s.imports }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// gate bounds the heavy computations that run at once: views that read a
// whole capture (heatmaps, cores maps, hot spots, flame graphs and their
// exports). A request beyond the bound waits for a slot, at most wait and
// only while its client does; when queue requests already wait, or the wait
// runs out, it is refused with errBusy (503 and Retry-After), so that load
// costs latency, never memory.
//
// Waiting requests are admitted first come first served, but fairly: a
// request has the key of the capture it views (see fairKey; "" when it
// views no one capture, which no share bounds), and one key holds at most
// share slots at once (half, at least one). A freed slot goes to the oldest waiter
// whose key holds fewer. Many views of one capture (a hostile or merely
// huge one, opened in many tabs) thus keep at least half the slots free
// for the other requests, which pass them in the queue. (Round robin by
// key served the same purpose but made every view of a popular capture
// wait a round of all the others: in a soak, p99 of all views rose from
// 458 to 529 ms; keyed by host and the fleet's views under one key, to
// 727 ms.)
type gate struct {
	size int // slots
	// long holds a token per long analysis running or waiting for a slot
	// (enterLong), moves one per host's moves (enterMoves): each all slots
	// but one, at least one.
	long, moves chan struct{}
	queue       int64
	wait        time.Duration
	waiting     atomic.Int64

	share int // the most slots one key holds at once

	mu      sync.Mutex
	running int            // slots taken
	held    map[string]int // slots taken by key, but ""
	line    []*waiter      // the waiters, oldest first

	// entered counts the slots taken; waited and heldFor sum, in
	// nanoseconds, the time their requests waited for them and held them
	// (the metrics' heavy-slot counters).
	entered, waited, heldFor atomic.Int64
}

// waiter is a request waiting for a slot; granted is closed when a slot is
// handed to it.
type waiter struct {
	key     string
	granted chan struct{}
}

func newGate(slots, queue int, wait time.Duration) *gate {
	if slots <= 0 {
		slots = DefaultMaxHeavy()
	}
	if queue <= 0 {
		queue = DefaultHeavyQueue
	}
	if wait <= 0 {
		wait = DefaultHeavyWait
	}
	return &gate{size: slots, long: make(chan struct{}, max(1, slots-1)), moves: make(chan struct{}, max(1, slots-1)),
		queue: int64(queue), wait: wait, share: max(1, slots/2), held: map[string]int{}}
}

// fairKeyType keys the context value withFairKey sets.
type fairKeyType struct{}

// withFairKey returns ctx with the key its heavy request is admitted under
// (see gate), for work computed apart from its request's context.
func withFairKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, fairKeyType{}, key)
}

// fairKey returns the key a heavy request with ctx is admitted under: the
// one withFairKey set, else the capture its route names (parameter id),
// else "".
func fairKey(ctx context.Context) string {
	if k, ok := ctx.Value(fairKeyType{}).(string); ok {
		return k
	}
	if rc := chi.RouteContext(ctx); rc != nil {
		if id := rc.URLParam("id"); id != "" {
			return "profile " + id
		}
	}
	return ""
}

// runningNow returns how many slots are taken.
func (g *gate) runningNow() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// enterLong takes a slot for a long analysis (a host's explanation, a
// host range joined across captures: each up to seconds of work), as
// enter does; but such analyses hold at most all the slots but one at
// once, so that they never keep the short views (a profile's maps, a
// flame graph of a few seconds) waiting behind them all.
func (g *gate) enterLong(ctx context.Context) (release func(), err error) {
	return g.enterClass(ctx, g.long)
}

// enterMoves takes a slot for a host's moves (tens of milliseconds of
// counting), as enterLong does but in a class of its own: moves never
// queue behind explanations that miss the cache (seconds each), nor
// explanations behind moves. The two classes together may hold every slot,
// for as long as a moves takes.
func (g *gate) enterMoves(ctx context.Context) (release func(), err error) {
	return g.enterClass(ctx, g.moves)
}

// enterClass takes a token of class, then a slot, as enterLong describes.
func (g *gate) enterClass(ctx context.Context, class chan struct{}) (release func(), err error) {
	start := time.Now()
	deadline := start.Add(g.wait)
	select {
	case class <- struct{}{}:
	default:
		if g.waiting.Add(1) > g.queue {
			g.waiting.Add(-1)
			return nil, errorf(errBusy, "the server is busy with %d views and %d waiting; try again shortly", g.size, g.queue)
		}
		t := time.NewTimer(g.wait)
		select {
		case class <- struct{}{}:
		case <-t.C:
			err = errorf(errBusy, "the server has been busy with other analyses for %s; try again shortly", g.wait)
		case <-ctx.Done():
			err = ctx.Err()
		}
		t.Stop()
		g.waiting.Add(-1)
		if err != nil {
			return nil, err
		}
	}
	slot, err := g.enterBy(ctx, start, deadline)
	if err != nil {
		<-class
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { slot(); <-class }) }, nil
}

// enter takes a slot, waiting while ctx lasts; the caller calls the
// returned release once done.
func (g *gate) enter(ctx context.Context) (release func(), err error) {
	start := time.Now()
	return g.enterBy(ctx, start, start.Add(g.wait))
}

// enterBy is enter for a request that began waiting at start, waiting
// until deadline at most.
func (g *gate) enterBy(ctx context.Context, start, deadline time.Time) (release func(), err error) {
	key := fairKey(ctx)
	g.mu.Lock()
	if g.mayTake(key) {
		g.take(key)
		g.mu.Unlock()
		return g.taken(key, start, time.Now()), nil
	}
	if g.waiting.Add(1) > g.queue {
		g.waiting.Add(-1)
		g.mu.Unlock()
		return nil, errorf(errBusy, "the server is busy with %d views and %d waiting; try again shortly", g.size, g.queue)
	}
	defer g.waiting.Add(-1)
	w := &waiter{key: key, granted: make(chan struct{})}
	g.line = append(g.line, w)
	g.mu.Unlock()

	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.granted:
		return g.taken(key, start, time.Now()), nil
	case <-t.C:
		err = errorf(errBusy, "the server has been busy with other views for %s; try again shortly", g.wait)
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.line, w); i >= 0 {
		g.line = slices.Delete(g.line, i, i+1)
	} else { // a slot was granted to w meanwhile: pass it on
		g.free(key)
	}
	return nil, err
}

// mayTake reports whether a request of key may take a slot now: one is
// free and key holds less than its share. g.mu is held.
func (g *gate) mayTake(key string) bool {
	return g.running < g.size && (key == "" || g.held[key] < g.share)
}

// take counts a slot taken by key. g.mu is held.
func (g *gate) take(key string) {
	g.running++
	if key != "" {
		g.held[key]++
	}
}

// free gives back a slot key held and grants the freed slots to the
// oldest waiters whose keys hold fewer than their share. g.mu is held.
func (g *gate) free(key string) {
	g.running--
	if key != "" {
		if g.held[key]--; g.held[key] == 0 {
			delete(g.held, key)
		}
	}
	for i := 0; i < len(g.line) && g.running < g.size; {
		w := g.line[i]
		if !g.mayTake(w.key) {
			i++
			continue
		}
		g.line = slices.Delete(g.line, i, i+1)
		g.take(w.key)
		close(w.granted)
	}
}

// taken counts a slot key asked for at start and took at now, and returns
// its release, which gives it back once (later calls do nothing).
func (g *gate) taken(key string, start, now time.Time) func() {
	g.entered.Add(1)
	g.waited.Add(int64(now.Sub(start)))
	var once sync.Once
	return func() {
		once.Do(func() {
			g.heldFor.Add(int64(time.Since(now)))
			g.mu.Lock()
			g.free(key)
			g.mu.Unlock()
		})
	}
}

// checkCells refuses a grid over span nanoseconds in columns of width and
// rows rows past the server's cell limit (query.CheckCells).
func (s *Server) checkCells(param, rowsName string, width, span int64, rows int) error {
	return query.CheckCells(param, rowsName, width, span, rows, s.maxCells)
}

// checkHeatmapCost bounds the offset heatmap of q over profile p.
func (s *Server) checkHeatmapCost(p *subsecond.Profile, q *Query) error {
	return s.checkCells("col", "rows", q.Col, max(0, p.End-p.T0()), q.Rows)
}

// checkCoresCost bounds the cores map of q over profile p (also the work
// of a hot-spot search): a row per CPU the filter keeps.
func (s *Server) checkCoresCost(p *subsecond.Profile, q *Query) error {
	cpus := max(1, p.CPUs)
	if n := len(q.Filter.CPUs); n > 0 {
		cpus = min(cpus, n)
	}
	return s.checkCells("bucket", "CPUs", cmp.Or(q.Bucket, query.DefaultBucket), max(0, p.End-p.T0()), cpus)
}

// checkNodes refuses to send a flame graph of n nodes in format past the
// server's node limit.
func (s *Server) checkNodes(n int, format string) error {
	limit := s.maxNodes
	if format == "pprof" {
		limit = max(1, limit/PprofNodeCost)
	}
	if n <= limit {
		return nil
	}
	return errorf(subsecond.ErrTooLarge, "the flame graph has %d nodes, more than this server's limit of %d for %s; narrow the range (start, end) or the filters (cpu, comm, pid, function)",
		n, limit, format)
}

// viewCapture returns the capture a view of q over profile p reads, or
// refuses the view with subsecond.ErrTooLarge before anything is loaded
// when that would read more than the server's view budget. The caller has
// found the capture not in the store's cache and holds a heavy slot.
//
// A view of q.Range alone (window: flame graphs, their exports and stack
// charts) reads only the whole seconds q.Range overlaps when they are at
// most half the capture (windowed): a few seconds' chunks instead of the
// whole capture, which is then neither loaded nor put in the cache for
// this view, evicting another. Such a window is also how a capture larger
// than the budget is read, when its seconds hold no more than the budget
// (counted first from the chunks import stored). Any other view reads the
// whole capture, through the store's cache.
func (s *Server) viewCapture(ctx context.Context, p *subsecond.Profile, q *Query, window bool) (*subsecond.Capture, error) {
	if err := s.checkViewSamples(ctx, p, q, window); err != nil {
		return nil, err
	}
	if p.Samples <= s.maxViewSamples && !(window && windowed(p, q.Range)) {
		return s.store.Capture(ctx, p.ID)
	}
	return s.store.CaptureWindow(ctx, p.ID, q.Range)
}

// windowed reports whether the whole seconds r overlaps are at most half of
// profile p's, so that a view of r alone is cheaper read by window than
// from the whole capture.
func windowed(p *subsecond.Profile, r subsecond.Range) bool {
	if r.Empty() {
		return false
	}
	sec := func(t int64) int64 { return subsecond.FloorSecond(t) / int64(time.Second) }
	whole := sec(max(p.End, p.T0()+1)-1) - sec(p.T0()) + 1
	return 2*(sec(r.End-1)-sec(r.Start)+1) <= whole
}

// checkViewSamples refuses a view that would read more samples than the
// server's view budget (see viewCapture), naming the budget and how to
// narrow the view.
func (s *Server) checkViewSamples(ctx context.Context, p *subsecond.Profile, q *Query, window bool) error {
	if p.Samples <= s.maxViewSamples {
		return nil
	}
	if !window {
		return errorf(subsecond.ErrTooLarge, "profile %s holds %d samples, more than the %d one view may read on this server (--max-view-samples), so its heatmaps, cores map and hot spots cannot be drawn here; open the flame graph of a shorter range (start, end) instead",
			p.ID, p.Samples, s.maxViewSamples)
	}
	n, err := s.store.WindowSamples(ctx, p.ID, q.Range)
	if err != nil {
		return err
	}
	if n <= s.maxViewSamples {
		return nil
	}
	t0 := p.T0()
	return errorf(subsecond.ErrTooLarge, "the range %s holds %d samples in the whole seconds it overlaps, more than the %d one view may read on this server (--max-view-samples); choose a shorter range (start, end)",
		query.DisplayRange(q.Range.Start-t0, q.Range.End-t0), n, s.maxViewSamples)
}
