package fleet

import (
	"cmp"
	"context"
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
)

// Cache keeps the candidate tables of the fleet's contrasts (Groups and
// Uptime), the most recently used within a byte budget, so that a
// contrast asked again with another seed or number of permutations, or by
// another reader, counts the names of its captures once. Counting reads
// the names of every capture selected, twice: in a soak it was most of a
// group contrast's cost and, near the end, 6% of the server's CPU, growing
// with the archive.
//
// A table is keyed by what it counts: the captures selected and the unit
// each falls in, the range, the names' filters and the number of
// candidates. A stored capture's index never changes, so a key never
// gives a stale table: a capture added or deleted, or a host relabelled,
// makes another key. Concurrent callers of one key share one count. A nil
// *Cache keeps nothing. Safe for concurrent use.
type Cache struct {
	tables *lru.Cache[uint64, *table]
}

// DefaultCacheBudget is the byte budget NewCache takes for 0.
const DefaultCacheBudget = 16 << 20

// NewCache returns a cache within budget bytes (0: DefaultCacheBudget).
func NewCache(budget int64) *Cache {
	return &Cache{tables: lru.New[uint64](lru.Options[*table]{Budget: cmp.Or(budget, DefaultCacheBudget), Size: (*table).bytes})}
}

// Groups is the package's Groups, its table from c.
func (c *Cache) Groups(ctx context.Context, src Source, opt Options) (*GroupReport, error) {
	return groups(ctx, src, opt, c)
}

// Uptime is the package's Uptime, its table from c.
func (c *Cache) Uptime(ctx context.Context, src Source, opt Options) (*UptimeReport, error) {
	return uptime(ctx, src, opt, c)
}

// candidates returns candidates' table for its arguments, kept or
// counted, with samples zeroed for the caller to fill in: the table kept
// is shared and never changed.
func (c *Cache) candidates(ctx context.Context, src Source, opt *Options, unitOf map[string]int, n int) (*table, error) {
	if c == nil {
		return candidates(ctx, src, opt, unitOf, n)
	}
	t, _, err := c.tables.Get(ctx, tableKey(opt, unitOf, n), func(ctx context.Context) (*table, error) {
		return candidates(ctx, src, opt, unitOf, n)
	})
	if err != nil {
		return nil, err
	}
	return &table{names: t.names, samples: make([]int64, n), counts: t.counts}, nil
}

// tableKey hashes what candidates counts.
func tableKey(opt *Options, unitOf map[string]int, n int) uint64 {
	h := fnv.New64a()
	var b []byte
	b = binary.AppendVarint(b, opt.From)
	b = binary.AppendVarint(b, opt.To)
	b = binary.AppendVarint(b, int64(opt.Kind))
	b = binary.AppendVarint(b, int64(opt.Candidates))
	b = binary.AppendVarint(b, int64(n))
	if opt.Match != nil {
		b = append(b, opt.Match.String()...)
	}
	b = append(b, 0)
	h.Write(b)
	ids := make([]string, 0, len(unitOf))
	for id := range unitOf {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b = append(binary.AppendVarint(append(b[:0], id...), int64(unitOf[id])), 0)
		h.Write(b)
	}
	return h.Sum64()
}

// bytes estimates the memory t holds.
func (t *table) bytes() int64 {
	n := 64 + subsecond.SliceBytes(t.names) + subsecond.SliceBytes(t.samples) + subsecond.SliceBytes(t.counts)
	for _, nm := range t.names {
		n += int64(len(nm.name))
	}
	return n
}
