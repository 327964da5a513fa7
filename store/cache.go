package store

import (
	"container/list"
	"context"
	"errors"
	"sync"

	"github.com/subsecond/subsecond"
)

// DefaultCacheSize is the capture cache's default budget in bytes: about
// 25 captures of 96 CPUs × 2 minutes, and small enough that a server
// holding it, four uploads and its heavy views stays within 1.5 GiB.
const DefaultCacheSize = 512 << 20

// captureCache keeps recently used captures within a budget of bytes (see
// captureSize), least recently used out first. Concurrent requests for the
// same capture share one load. A capture larger than the whole budget is
// returned to its callers but not kept.
type captureCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    list.List // of *cacheEntry, most recently used first
	byID   map[string]*list.Element
}

type cacheEntry struct {
	id    string
	ready chan struct{}
	c     *subsecond.Capture
	err   error
	size  int64 // counted in used once loaded
}

func newCaptureCache(budget int64) *captureCache {
	return &captureCache{budget: budget, byID: map[string]*list.Element{}}
}

// get returns the cached capture id, loading it with load if absent; hit
// reports that it was loaded before this call.
func (cc *captureCache) get(ctx context.Context, id string, load func() (*subsecond.Capture, error)) (c *subsecond.Capture, hit bool, err error) {
	cc.mu.Lock()
	if el, ok := cc.byID[id]; ok {
		cc.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		cc.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if e.err != nil && ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			return cc.get(ctx, id, load) // the caller that loaded it gave up; load it again
		}
		return e.c, e.err == nil, e.err
	}
	e := &cacheEntry{id: id, ready: make(chan struct{})}
	cc.byID[id] = cc.lru.PushFront(e)
	cc.mu.Unlock()

	e.c, e.err = load()
	close(e.ready)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if el, ok := cc.byID[id]; ok && el.Value == e {
		if e.err != nil {
			cc.unlink(el)
		} else {
			e.size = captureSize(e.c)
			cc.used += e.size
			cc.evict()
		}
	}
	return e.c, false, e.err
}

// put caches c as capture id, most recently used.
func (cc *captureCache) put(id string, c *subsecond.Capture) {
	e := &cacheEntry{id: id, ready: make(chan struct{}), c: c, size: captureSize(c)}
	close(e.ready)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if el, ok := cc.byID[id]; ok {
		cc.unlink(el)
	}
	cc.byID[id] = cc.lru.PushFront(e)
	cc.used += e.size
	cc.evict()
}

// remove forgets capture id.
func (cc *captureCache) remove(id string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if el, ok := cc.byID[id]; ok {
		cc.unlink(el)
	}
}

// evict drops loaded captures, least recently used first, until the
// budget holds. Entries still loading are skipped.
func (cc *captureCache) evict() {
	for el := cc.lru.Back(); el != nil && cc.used > cc.budget; {
		prev := el.Prev()
		if el.Value.(*cacheEntry).size > 0 {
			cc.unlink(el)
		}
		el = prev
	}
}

func (cc *captureCache) unlink(el *list.Element) {
	e := el.Value.(*cacheEntry)
	cc.used -= e.size
	delete(cc.byID, e.id)
	cc.lru.Remove(el)
}

// bytes returns the bytes the cached captures take, by captureSize.
func (cc *captureCache) bytes() int64 {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.used
}

// captureSize estimates the memory c holds: its columns, tables and
// strings.
func captureSize(c *subsecond.Capture) int64 {
	const perSample = 8 + 4 + 4 + 4 + 4 + 2 + 8 + 4 // Time … Stack
	n := int64(cap(c.Samples.Time)) * perSample
	n += int64(len(c.Frames))*24 + int64(len(c.Nodes))*12
	for _, s := range c.Strings {
		n += 16 + int64(len(s))
	}
	return max(n, 1)
}
