package timeline

import (
	"context"

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
	load  func(ctx context.Context, id string) ([]Summary, error)
	cache *lru.Cache[string, []Summary]
}

// DefaultSummaryBudget is the byte budget NewSummaryCache takes for 0: a
// 12-hour night of a 96-CPU host's two-minute captures takes about 150 MB.
const DefaultSummaryBudget = 256 << 20

// NewSummaryCache returns a cache over load with budget bytes (0: the
// default).
func NewSummaryCache(load func(ctx context.Context, id string) ([]Summary, error), budget int64) *SummaryCache {
	if budget <= 0 {
		budget = DefaultSummaryBudget
	}
	return &SummaryCache{load: load, cache: lru.New[string](lru.Options[[]Summary]{Budget: budget, Size: sizeOf})}
}

// Summaries returns capture id's summaries, loading them on first use; a
// failed load is not kept. Callers must not modify them.
func (c *SummaryCache) Summaries(ctx context.Context, id string) ([]Summary, error) {
	sums, _, err := c.cache.Get(ctx, id, func(ctx context.Context) ([]Summary, error) { return c.load(ctx, id) })
	if err != nil {
		return nil, err
	}
	return sums, nil
}

// sizeOf estimates the memory summaries hold.
func sizeOf(sums []Summary) int64 {
	n := int64(len(sums)) * 56
	for _, s := range sums {
		n += int64(len(s.CPUs))*32 + int64(len(s.Comms))*40
		for _, c := range s.Comms {
			n += int64(len(c.Comm))
		}
	}
	return n
}
