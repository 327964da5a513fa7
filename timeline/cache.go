package timeline

import (
	"context"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
)

// RollupCache keeps captures' rollups (subsecond.Rollup) in memory, the
// most recently used within a byte budget, so that the host views read
// each capture's rollup from the database once rather than on every
// request, and a server's memory for them stays within the budget however
// many nights it serves. Concurrent requests for the same capture share
// one load. Stored captures never change and their IDs are never reused,
// so entries need no invalidation; a deleted capture's entry ages out.
// Safe for concurrent use.
type RollupCache struct {
	load  func(ctx context.Context, id string) (*subsecond.Rollup, error)
	cache *lru.Cache[string, *subsecond.Rollup]
}

// DefaultRollupBudget is the byte budget NewRollupCache takes for 0: a
// 12-hour night of a 96-CPU host's two-minute captures at 49 Hz takes
// about 40 MB.
const DefaultRollupBudget = 96 << 20

// NewRollupCache returns a cache over load with budget bytes (0: the
// default).
func NewRollupCache(load func(ctx context.Context, id string) (*subsecond.Rollup, error), budget int64) *RollupCache {
	if budget <= 0 {
		budget = DefaultRollupBudget
	}
	return &RollupCache{load: load, cache: lru.New[string](lru.Options[*subsecond.Rollup]{Budget: budget, Size: (*subsecond.Rollup).Bytes})}
}

// Rollup returns capture id's rollup, loading it on first use; a failed
// load is not kept. Callers must not modify it.
func (c *RollupCache) Rollup(ctx context.Context, id string) (*subsecond.Rollup, error) {
	r, _, err := c.cache.Get(ctx, id, func(ctx context.Context) (*subsecond.Rollup, error) { return c.load(ctx, id) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Bytes returns the bytes the cache holds.
func (c *RollupCache) Bytes() int64 { return c.cache.Bytes() }
