package timeline

import (
	"context"
	"unsafe"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
)

// SummaryCache keeps captures' per-second summaries in memory, the most
// recently used within a byte budget, so that the host views read each
// capture's summaries from the database once rather than on every request.
// Concurrent requests for the same capture share one load. Stored captures
// never change and their IDs are never reused, so entries need no
// invalidation; a deleted capture's entry ages out. Safe for concurrent
// use.
type SummaryCache struct {
	load  func(ctx context.Context, id string) ([]subsecond.ChunkSummary, error)
	cache *lru.Cache[string, []subsecond.ChunkSummary]
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
	return &SummaryCache{load: load, cache: lru.New[string](lru.Options[[]subsecond.ChunkSummary]{Budget: budget, Size: sizeOf})}
}

// Summaries returns capture id's summaries, loading them on first use; a
// failed load is not kept. Callers must not modify them.
func (c *SummaryCache) Summaries(ctx context.Context, id string) ([]subsecond.ChunkSummary, error) {
	sums, _, err := c.cache.Get(ctx, id, func(ctx context.Context) ([]subsecond.ChunkSummary, error) { return c.load(ctx, id) })
	if err != nil {
		return nil, err
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
