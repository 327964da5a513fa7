package explain

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
	"github.com/subsecond/subsecond/timeline"
)

// Cache keeps reports, the most recently used within a byte budget, so
// that a page asking again (its table, then its flame graphs) pays for
// one Explain. A report is keyed by its host, options and what it read:
// the ids of the host's captures and its markers, so that a capture or a
// marker added or deleted makes another key, never a stale answer.
// Concurrent requests for one key share one Explain. Safe for concurrent
// use.
type Cache struct {
	c *lru.Cache[cacheKey, *Report]
}

// DefaultCacheBudget is the byte budget NewCache takes for 0.
const DefaultCacheBudget = 16 << 20

// NewCache returns a cache of reports within budget bytes (0:
// DefaultCacheBudget).
func NewCache(budget int64) *Cache {
	if budget <= 0 {
		budget = DefaultCacheBudget
	}
	return &Cache{c: lru.New[cacheKey](lru.Options[*Report]{Budget: budget, Size: (*Report).bytes})}
}

type cacheKey struct {
	host, match                 string
	before, guard, from, to     int64
	session, controls, perms, n int
	seed                        uint64
	read                        uint64 // hash of the captures' ids and the markers
}

// Explain returns Explain's report for host and opt, from the cache when
// it holds one for what the host has now; hit reports that it did.
func (c *Cache) Explain(ctx context.Context, src Source, host string, opt Options) (rep *Report, hit bool, err error) {
	if err := opt.check(); err != nil {
		return nil, false, err
	}
	in, err := gather(ctx, src, host, &opt)
	if err != nil {
		return nil, false, err
	}
	h := fnv.New64a()
	for _, k := range in.caps {
		fmt.Fprintf(h, "%s\x00%d\x00", k.ID, k.Offset)
	}
	for _, m := range in.markers {
		fmt.Fprintf(h, "%d\x00%s\x00", m.Time, m.Text)
	}
	key := cacheKey{host: host, before: int64(opt.Before), guard: int64(opt.Guard), from: opt.From, to: opt.To,
		session: opt.Session, controls: opt.Controls, perms: opt.Permutations, n: opt.Limit, seed: opt.Seed, read: h.Sum64()}
	if opt.Match != nil {
		key.match = opt.Match.String()
	}
	return c.c.Get(ctx, key, func(ctx context.Context) (*Report, error) { return explain(ctx, src, in, &opt) })
}

// bytes estimates the memory a report holds.
func (r *Report) bytes() int64 {
	n := int64(512)
	for _, w := range append(r.Windows, r.Controls...) {
		n += 96
		for _, m := range w.Markers {
			n += 32 + int64(len(m.Text))
		}
	}
	for _, f := range r.Findings {
		n += 256 + 8*int64(len(f.Markers))
		for _, g := range append([]Feature{f.Feature}, f.Also...) {
			n += 128 + int64(len(g.Comm)+len(g.Function))
			for _, s := range g.Stack {
				n += 16 + int64(len(s))
			}
		}
	}
	return n
}

// LoadWindows returns the host's samples in the windows ws as one capture
// (subsecond.Join), their times on the wall clock: a report's Windows, or
// its Controls, for the differential flame graph of before against
// usual. Each window takes the parts of every capture that recorded it,
// across rotation points.
func LoadWindows(ctx context.Context, src timeline.Source, host string, ws []Window) (*subsecond.Capture, error) {
	caps, _, err := timeline.HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 || len(caps) == 0 {
		return nil, fmt.Errorf("host %q: no window to load: %w", host, subsecond.ErrEmptyRange)
	}
	p := subsecond.Profile{Host: host, Name: fmt.Sprintf("%s · %d windows of %s", host, len(ws), time.Duration(ws[0].To-ws[0].From)),
		Wall: subsecond.WallClock{Source: caps[0].Source}}
	var parts []subsecond.Part
	var hz float64
	for _, w := range ws {
		ps, err := loadParts(ctx, src, caps, w)
		if err != nil {
			return nil, err
		}
		for _, pt := range ps {
			parts = append(parts, subsecond.Part{C: pt.c, Lo: pt.lo, Hi: pt.hi, Shift: pt.shift})
		}
		for _, c := range caps {
			if c.End > w.From && c.Start < w.To {
				hz = max(hz, c.Hz)
				p.Wall.Approximate = p.Wall.Approximate || c.Approximate
			}
		}
	}
	j := subsecond.Join(p, parts)
	j.Profile.FrequencyHz = hz
	return j, nil
}
