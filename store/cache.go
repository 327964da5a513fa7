package store

import (
	"container/list"
	"context"
	"errors"
	"sync"

	"github.com/subsecond/subsecond"
)

// DefaultCacheSize is the capture cache's default budget in bytes: about
// 20 captures of 96 CPUs × 2 minutes with their views' indexes, and small
// enough that a server holding it, four uploads and its heavy views stays
// within 1.5 GiB.
const DefaultCacheSize = 512 << 20

// captureCache keeps recently used captures within a budget of bytes (see
// captureSize), least recently used out first. Concurrent requests for the
// same capture share one load. A capture larger than the whole budget is
// returned to its callers but not kept.
//
// The budget covers the indexes the views derive from a capture
// (subsecond.Derived) as well as the capture itself: each capture is
// charged an allowance for them when it enters, and what they really hold
// once that is more. The views build them after the cache has handed the
// capture out, so each get and put counts them again before evicting.
type captureCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    list.List // of *cacheEntry, most recently used first
	byID   map[string]*list.Element
}

type cacheEntry struct {
	id     string
	ready  chan struct{}
	c      *subsecond.Capture
	err    error
	size   int64 // counted in used once loaded: captureSize of c when last counted
	tables int64 // tablesSize of c, which never changes
}

// measure sets e.size to the loaded capture's captureSize; the first call
// measures its tables.
func (e *cacheEntry) measure() {
	if e.tables == 0 {
		e.tables = tablesSize(e.c)
	}
	e.size = e.tables + derivedSize(e.c)
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
		cc.evict()
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
			e.measure()
			cc.used += e.size
			cc.evict()
		}
	}
	return e.c, false, e.err
}

// put caches c as capture id, most recently used.
func (cc *captureCache) put(id string, c *subsecond.Capture) {
	e := &cacheEntry{id: id, ready: make(chan struct{}), c: c}
	e.measure()
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

// evict counts the loaded captures again, with the indexes derived from
// them since, then drops them, least recently used first, until the budget
// holds. Entries still loading are skipped.
func (cc *captureCache) evict() {
	for el := cc.lru.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*cacheEntry); e.size > 0 {
			old := e.size
			e.measure()
			cc.used += e.size - old
		}
	}
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
// strings, and the indexes derived from it.
func captureSize(c *subsecond.Capture) int64 {
	return tablesSize(c) + derivedSize(c)
}

// derivedSize returns the bytes of the indexes derived from c so far
// (subsecond.Capture.DerivedBytes) or, while those are smaller,
// derivedAllowance.
func derivedSize(c *subsecond.Capture) int64 {
	return max(derivedAllowance(c), c.DerivedBytes())
}

// tablesSize returns the bytes of c's own columns, tables and strings.
func tablesSize(c *subsecond.Capture) int64 {
	s := &c.Samples
	n := s.Bytes()
	n += subsecond.SliceBytes(c.Frames) + subsecond.SliceBytes(c.Nodes) + subsecond.SliceBytes(c.Strings)
	for _, str := range c.Strings {
		n += int64(len(str))
	}
	return max(n, 1)
}

// derivedAllowance estimates, from c's shape, the indexes that the first
// view of a capture derives from it: the filter's (a bit per sample, a few
// bytes per frame and stack node) and the flame graph's under one setting
// of only (each sample's tree node, names per frame, a tree about as large
// as the stack tree). Until what is derived outweighs it, the cache charges
// this instead, so that a capture's first views do not take the cache
// past its budget. TestDerivedAllowance holds it to what they build.
func derivedAllowance(c *subsecond.Capture) int64 {
	samples, frames, nodes := int64(c.Samples.Len()), int64(len(c.Frames)), int64(len(c.Nodes))
	filter := samples/8 + 2*frames + 5*nodes
	flame := 4*samples + 60*frames + 32*nodes
	return filter + flame
}
