// Package lru provides a cache that loads values on demand and keeps the
// most recently used of them within a budget of bytes.
//
// Concurrent misses for one key share a single load. A value larger than
// the whole budget is returned to its callers but not kept. A value that
// grows after it has entered the cache (indexes built from it on demand)
// is charged what it holds now, not what it held when it entered.
//
//	c := lru.New[string](lru.Options[[]byte]{
//		Budget: 64 << 20,
//		Size:   func(b []byte) int64 { return int64(cap(b)) },
//	})
//	b, hit, err := c.Get(ctx, name, func(ctx context.Context) ([]byte, error) {
//		return os.ReadFile(name)
//	})
package lru

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

// Options configure a Cache.
type Options[V any] struct {
	// Budget bounds the bytes of the values kept, as Size and Growing
	// count them.
	Budget int64

	// Size returns the bytes a value holds when it enters the cache. It is
	// measured once per value, outside the cache's lock. It must be set.
	Size func(V) int64

	// Growing, if set, returns the bytes of the part of a value that may
	// grow after the value has entered the cache, beyond what Size counts.
	// It is measured when the value enters and again, for every value
	// kept, before each eviction: at every Get, Put and finished load. It
	// is called with the cache's lock held, so it must be cheap and must
	// not use the cache.
	Growing func(V) int64
}

// Cache maps keys to values loaded on demand, the most recently used first
// out of the budget last. The zero value is not usable; call New. A Cache
// is safe for concurrent use.
type Cache[K comparable, V any] struct {
	opt Options[V]

	mu    sync.Mutex
	used  int64     // bytes of the counted entries
	lru   list.List // of *entry[K, V], most recently used first
	byKey map[K]*list.Element
}

// An entry is a key's value, or its load while that runs. Once ready is
// closed, v and err do not change.
type entry[K comparable, V any] struct {
	key   K
	ready chan struct{}
	v     V
	err   error

	counted bool  // loaded without error and counted in Cache.used
	fixed   int64 // Options.Size of v, once counted
	growing int64 // Options.Growing of v when last measured
}

func (e *entry[K, V]) size() int64 { return e.fixed + e.growing }

// New returns an empty cache with the given options.
func New[K comparable, V any](opt Options[V]) *Cache[K, V] {
	return &Cache[K, V]{opt: opt, byKey: map[K]*list.Element{}}
}

// errPanicked is what the callers waiting on a load get when the load
// panicked; the panic itself goes on in the caller that loaded.
var errPanicked = errors.New("lru: the load panicked")

// Get returns key's value, loading it with load(ctx) if the cache holds
// none, and makes it the most recently used. Callers that ask for a key
// while it loads wait for that one load, or until their own ctx ends, when
// they return ctx.Err(). A failed load's error goes to every caller that
// waited on it and nothing is kept; but when it failed with
// context.Canceled or context.DeadlineExceeded (the caller that loaded gave
// up), a waiting caller whose own ctx is live loads it again, with its own
// load. hit reports that Get returned a value that was cached, or being
// loaded by another caller, when it asked. load is called only on a miss.
func (c *Cache[K, V]) Get(ctx context.Context, key K, load func(context.Context) (V, error)) (v V, hit bool, err error) {
	for {
		c.mu.Lock()
		el, ok := c.byKey[key]
		if !ok {
			break
		}
		c.lru.MoveToFront(el)
		e := el.Value.(*entry[K, V])
		c.evict()
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return v, false, ctx.Err()
		}
		if e.err != nil && ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			continue // the caller that loaded it gave up; load it again
		}
		return e.v, e.err == nil, e.err
	}
	e := &entry[K, V]{key: key, ready: make(chan struct{})}
	c.byKey[key] = c.lru.PushFront(e)
	c.mu.Unlock()
	c.fill(ctx, e, load)
	return e.v, false, e.err
}

// fill loads e's value and then counts it, unless e has been removed or
// replaced meanwhile or the load failed, when it forgets e.
func (c *Cache[K, V]) fill(ctx context.Context, e *entry[K, V], load func(context.Context) (V, error)) {
	done := false
	defer func() {
		if !done {
			e.err = errPanicked
		}
		close(e.ready)
		var fixed int64
		if e.err == nil {
			fixed = c.opt.Size(e.v)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		el, ok := c.byKey[e.key]
		if !ok || el.Value != e {
			return
		}
		if e.err != nil {
			c.unlink(el)
			return
		}
		e.fixed, e.counted = fixed, true
		c.used += e.fixed
		c.evict()
	}()
	e.v, e.err = load(ctx)
	done = true
}

// Put caches v as key's value, the most recently used, in place of any
// value or load of key before it. Callers waiting on that load still get
// what it loads.
func (c *Cache[K, V]) Put(key K, v V) {
	e := &entry[K, V]{key: key, ready: make(chan struct{}), v: v, counted: true}
	e.fixed = c.opt.Size(v)
	close(e.ready)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.unlink(el)
	}
	c.byKey[key] = c.lru.PushFront(e)
	c.used += e.fixed
	c.evict()
}

// Remove forgets key's value. A load of key under way when Remove is
// called still reaches the callers waiting on it, but is not kept.
func (c *Cache[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.unlink(el)
	}
}

// Peek returns key's value and true when the cache holds it loaded, and
// makes it the most recently used; it never loads, and reports false for a
// key being loaded or whose load failed.
func (c *Cache[K, V]) Peek(key K) (v V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return v, false
	}
	e := el.Value.(*entry[K, V])
	select {
	case <-e.ready:
	default:
		return v, false
	}
	if e.err != nil {
		return v, false
	}
	c.lru.MoveToFront(el)
	c.evict()
	return e.v, true
}

// Contains reports whether the cache holds key's value or is loading it.
// It does not count as a use.
func (c *Cache[K, V]) Contains(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byKey[key]
	return ok
}

// Bytes returns the bytes of the values kept, as last measured.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// evict measures the growing part of every value kept again, drops any
// value that alone is larger than the budget, then drops values, least
// recently used first, until the rest fit. Loads under way are neither
// counted nor dropped. The caller holds c.mu.
func (c *Cache[K, V]) evict() {
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*entry[K, V]); e.counted {
			if c.opt.Growing != nil {
				g := c.opt.Growing(e.v)
				c.used += g - e.growing
				e.growing = g
			}
			if e.size() > c.opt.Budget {
				c.unlink(el)
			}
		}
		el = next
	}
	for el := c.lru.Back(); el != nil && c.used > c.opt.Budget; {
		prev := el.Prev()
		if el.Value.(*entry[K, V]).counted {
			c.unlink(el)
		}
		el = prev
	}
}

// unlink forgets el's entry and its bytes. The caller holds c.mu.
func (c *Cache[K, V]) unlink(el *list.Element) {
	e := el.Value.(*entry[K, V])
	if e.counted {
		c.used -= e.size()
	}
	delete(c.byKey, e.key)
	c.lru.Remove(el)
}
