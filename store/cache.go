package store

import (
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
)

// DefaultCacheSize is the capture cache's default budget in bytes: about
// 20 captures of 96 CPUs × 2 minutes with their views' indexes, and small
// enough that a server holding it, four uploads and its heavy views stays
// within 1.5 GiB.
const DefaultCacheSize = 512 << 20

// newCaptureCache returns a cache of captures by ID within budget bytes:
// least recently used out first, concurrent requests for the same capture
// sharing one load, and a capture larger than the whole budget returned to
// its callers but not kept.
//
// The budget covers the indexes the views derive from a capture
// (subsecond.Derived) as well as the capture itself (see captureSize): each
// capture is charged an allowance for them when it enters, and what they
// really hold once that is more. The views build them after the cache has
// handed the capture out, so each get and put counts them again before
// evicting.
func newCaptureCache(budget int64) *lru.Cache[string, *subsecond.Capture] {
	return lru.New[string](lru.Options[*subsecond.Capture]{Budget: budget, Size: tablesSize, Growing: derivedSize})
}

// tablesShare is the part of Options.CacheSize kept for the tables of the
// profiles read by window (CaptureWindow): a sixteenth, the rest for whole
// captures.
const tablesShare = 16

// newTablesCache returns a cache of profiles' tables (captures without
// samples) by ID within budget bytes, least recently used out first.
func newTablesCache(budget int64) *lru.Cache[string, *subsecond.Capture] {
	return lru.New[string](lru.Options[*subsecond.Capture]{Budget: budget, Size: tablesSize})
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
func tablesSize(c *subsecond.Capture) int64 { return max(c.Bytes(), 1) }

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

// CacheStats returns the capture cache's bytes and budget and the lookups
// Capture has answered from it (hits) or by loading (misses). Failed
// lookups are not counted.
func (s *Store) CacheStats() subsecond.CacheStats {
	return subsecond.CacheStats{
		Bytes:  s.cache.Bytes() + s.tables.Bytes(),
		Budget: s.opt.CacheSize,
		Hits:   s.hits.Load(),
		Misses: s.misses.Load(),
	}
}

// countLookup counts a successful lookup in CacheStats.
func (s *Store) countLookup(hit bool) {
	if hit {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
}
