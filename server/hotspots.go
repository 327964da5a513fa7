package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
)

// hotCache remembers hot-spot lists per profile and query. Finding hot spots
// takes a pass over the whole capture and a flame graph per episode, and the
// same list is asked for twice in a row: by the profile page and then by its
// script when the page stopped waiting. A computation runs once; later
// requests for the same key wait for it. Profiles never change, so entries
// stay valid; the oldest are dropped beyond maxHotEntries, or while the
// lists kept hold more than hotBudget bytes (the newest is kept). (Bounded
// by their number alone, 32 lists of the bundled incident's thousands of
// episodes held 76 MB, outside every budget.)
//
// A computation lives while someone waits for it: when its last waiter has
// been gone for the linger (long enough for a page's script to ask again),
// it is cancelled: it leaves the queue for a heavy slot, or stops loading
// the capture. One whose engine has started finishes (its cost was bounded
// before it started) and its result is kept. Computations take heavy slots
// like any view, which bounds the distinct ones running at once.
type hotCache struct {
	mu     sync.Mutex
	m      map[string]*hotEntry
	order  []string      // m's keys, oldest first
	bytes  int64         // the lists kept, by their Bytes
	budget int64         // 0 means hotBudget
	linger time.Duration // 0 means hotLinger
}

type hotEntry struct {
	done chan struct{}
	rep  *subsecond.HotspotReport // every episode; shared, never modified
	err  error
	size int64 // rep's Bytes once kept, guarded by hotCache.mu

	ctx     context.Context // cancelled once nobody has waited for the linger
	cancel  context.CancelFunc
	waiters int         // guarded by hotCache.mu
	idle    *time.Timer // the pending cancellation, guarded by hotCache.mu
}

const (
	maxHotEntries = 32
	hotBudget     = 16 << 20
	hotLinger     = 5 * time.Second
)

// join returns the entry for key, counting the caller as one of its
// waiters, and starts compute in its own goroutine when there is no live
// entry. The caller calls leave once it stops waiting.
func (hc *hotCache) join(key string, compute func(ctx context.Context) (*subsecond.HotspotReport, error)) *hotEntry {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if e, ok := hc.m[key]; ok && (e.ctx.Err() == nil || isDone(e) && e.err == nil) {
		e.waiters++
		if e.idle != nil {
			e.idle.Stop()
			e.idle = nil
		}
		return e
	}
	if hc.m == nil {
		hc.m = map[string]*hotEntry{}
	}
	e := &hotEntry{done: make(chan struct{}), waiters: 1}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if _, ok := hc.m[key]; !ok {
		hc.order = append(hc.order, key)
	}
	hc.m[key] = e
	hc.trim()
	go func() {
		e.rep, e.err = compute(e.ctx)
		hc.mu.Lock()
		switch {
		case hc.m[key] != e:
		case e.err != nil:
			// Failures are not remembered: the next request tries again.
			delete(hc.m, key)
			hc.order = slices.DeleteFunc(hc.order, func(k string) bool { return k == key })
		default:
			e.size = e.rep.Bytes()
			hc.bytes += e.size
			hc.trim()
		}
		hc.mu.Unlock()
		close(e.done)
		e.cancel()
	}()
	return e
}

// trim drops the oldest entries while there are more than maxHotEntries,
// or the lists kept hold more than the budget; it keeps the newest. Its
// caller holds mu. order holds each key of m once.
func (hc *hotCache) trim() {
	budget := cmp.Or(hc.budget, hotBudget)
	for len(hc.order) > 1 && (len(hc.order) > maxHotEntries || hc.bytes > budget) {
		k := hc.order[0]
		hc.order = hc.order[1:]
		hc.bytes -= hc.m[k].size
		delete(hc.m, k)
	}
}

// computed reports whether the list of key has been computed and kept.
func (hc *hotCache) computed(key string) bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	e, ok := hc.m[key]
	return ok && isDone(e) && e.err == nil
}

// leave counts a waiter of e out; the last one's leaving cancels e after
// the linger unless another joins meanwhile.
func (hc *hotCache) leave(e *hotEntry) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	e.waiters--
	if e.waiters > 0 || isDone(e) {
		return
	}
	linger := hc.linger
	if linger <= 0 {
		linger = hotLinger
	}
	e.idle = time.AfterFunc(linger, func() {
		hc.mu.Lock()
		defer hc.mu.Unlock()
		if e.waiters == 0 {
			e.cancel()
		}
	})
}

func isDone(e *hotEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// errPending reports hot spots still being computed when the page stopped
// waiting. Only the profile page waits with a limit, and it shows the list
// as pending instead of an error.
var errPending = errors.New("hot spots are still being computed")

// hotspotList returns the hot spots of the request's profile for q: every
// episode, each linked to its flame graph, waiting at most wait (0: until
// done or the request ends; negative: only a list computed before, else
// errPending without starting a computation). The report is the caller's
// to cut to a limit.
func (s *Server) hotspotList(r *http.Request, q *Query, wait time.Duration) (*subsecond.HotspotReport, error) {
	id := chi.URLParam(r, "id")
	p, err := s.store.Profile(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := s.checkCoresCost(p, q); err != nil {
		return nil, err
	}
	if err := s.checkViewSamples(r.Context(), p, q, false); err != nil {
		return nil, err
	}
	if wait < 0 && !s.hot.computed(hotKey(id, q)) {
		return nil, errPending
	}
	all := *q
	all.Limit = 0 // the cache keeps every episode; requests cut the list
	e := s.hot.join(hotKey(id, q), func(ctx context.Context) (*subsecond.HotspotReport, error) {
		release, err := s.heavy.enter(withFairKey(ctx, "profile "+id)) // computed apart from its requests
		if err != nil {
			return nil, err
		}
		defer release()
		c, err := s.store.Capture(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return s.engine.Hotspots(c, &all)
	})
	defer s.hot.leave(e)
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-e.done:
	case <-timeout:
		return nil, errPending
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	rep := *e.rep
	rep.Spots = slices.Clone(e.rep.Spots)
	link.Hotspots(&rep, p.ID, q.Filter)
	return &rep, nil
}

// hotKey identifies a hot-spot list: the profile and the parameters the
// engine reads for it, as parsed (so min=1 and min=1s share an entry).
func hotKey(id string, q *Query) string {
	v := q.ValuesFor(query.ViewHotspots)
	v.Del("limit") // the list is cut to the limit after the search
	return id + "?" + v.Encode()
}
