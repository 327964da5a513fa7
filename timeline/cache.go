package timeline

import (
	"container/list"
	"context"
	"sync"
	"unsafe"

	"github.com/subsecond/subsecond"
)

// SummaryCache keeps captures' per-second summaries in memory, the most
// recently used within a byte budget, so that the host views read each
// capture's summaries from the database once rather than on every request.
// Stored captures never change and their IDs are never reused, so entries
// need no invalidation; a deleted capture's entry ages out. Safe for
// concurrent use.
type SummaryCache struct {
	load   func(ctx context.Context, id string) ([]subsecond.ChunkSummary, error)
	budget int64

	mu    sync.Mutex
	bytes int64
	lru   *list.List // of *cacheEntry, most recent first
	m     map[string]*list.Element
}

type cacheEntry struct {
	id    string
	sums  []subsecond.ChunkSummary
	bytes int64
}

// DefaultSummaryBudget is the byte budget NewSummaryCache takes for 0: a
// 12-hour night of a 96-CPU host's two-minute captures takes about 150 MB.
const DefaultSummaryBudget = 256 << 20

// NewSummaryCache returns a cache over load with budget bytes (0: the
// default).
func NewSummaryCache(load func(ctx context.Context, id string) ([]subsecond.ChunkSummary, error), budget int64) *SummaryCache {
	if budget <= 0 {
		budget = DefaultSummaryBudget
	}
	return &SummaryCache{load: load, budget: budget, lru: list.New(), m: map[string]*list.Element{}}
}

// Summaries returns capture id's summaries, loading them on first use.
// Callers must not modify them.
func (c *SummaryCache) Summaries(ctx context.Context, id string) ([]subsecond.ChunkSummary, error) {
	c.mu.Lock()
	if e, ok := c.m[id]; ok {
		c.lru.MoveToFront(e)
		sums := e.Value.(*cacheEntry).sums
		c.mu.Unlock()
		return sums, nil
	}
	c.mu.Unlock()
	sums, err := c.load(ctx, id)
	if err != nil {
		return nil, err
	}
	n := sizeOf(sums)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok || n > c.budget {
		return sums, nil
	}
	c.m[id] = c.lru.PushFront(&cacheEntry{id: id, sums: sums, bytes: n})
	c.bytes += n
	for c.bytes > c.budget {
		e := c.lru.Back()
		old := e.Value.(*cacheEntry)
		c.lru.Remove(e)
		delete(c.m, old.id)
		c.bytes -= old.bytes
	}
	return sums, nil
}

// sizeOf estimates the memory summaries hold.
func sizeOf(sums []subsecond.ChunkSummary) int64 {
	n := int64(len(sums)) * int64(unsafe.Sizeof(subsecond.ChunkSummary{}))
	for _, s := range sums {
		n += int64(len(s.CPUs))*int64(unsafe.Sizeof(subsecond.CPUCount{})) + int64(len(s.Comms))*int64(unsafe.Sizeof(subsecond.CommCount{}))
		for _, c := range s.Comms {
			n += int64(len(c.Comm))
		}
	}
	return n
}
