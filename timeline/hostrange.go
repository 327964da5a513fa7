package timeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
	"github.com/subsecond/subsecond/query"
)

// Selection is a host's wall-clock range [From, To), in Unix nanoseconds,
// as one view across the captures that recorded it: the views of a
// capture (flame graphs, diffs, the stack chart, exports) answer for it
// once Load has joined the captures' samples in the range.
type Selection struct {
	Host     string
	From, To int64
	// Captures are the host's captures overlapping [From, To), in time
	// order.
	Captures []Capture
	// Unrecorded is how much of [From, To), in nanoseconds, no capture
	// recorded: the gaps between captures longer than two sampling
	// intervals (shorter ones are a rotation, which loses nothing), and
	// the parts before the first capture and after the last.
	Unrecorded int64
	// Samples counts, from the captures' rollups, the samples
	// of the CPUs asked for in the seconds the range touches: what loading
	// it costs, known before any capture is loaded (an upper bound of the
	// range's samples of the first event).
	Samples int64
}

// Select returns host's range [from, to) (a zero from or to: the start or
// end of the host's captures) over the CPUs cpus (none: all), from the
// profiles' metadata and the captures' rollups alone. A range no capture
// overlaps is an error wrapping subsecond.ErrEmptyRange; an empty one a
// *query.ParamError.
func Select(ctx context.Context, src Source, host string, from, to int64, cpus []int32) (*Selection, error) {
	caps, un, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("host %q: none of its %d captures has a wall-clock time: %w", host, un, subsecond.ErrEmptyRange)
	}
	if from == 0 {
		from = caps[0].Start
	}
	if to == 0 {
		for _, c := range caps {
			to = max(to, c.End)
		}
	}
	if to <= from {
		return nil, query.Invalidf("to", "the range [%s, %s) is empty; to must be after from", query.DisplayWallTime(from), query.DisplayWallTime(to))
	}
	s := &Selection{Host: host, From: from, To: to}
	for _, c := range caps {
		if c.End > from && c.Start < to {
			s.Captures = append(s.Captures, c)
		}
	}
	if len(s.Captures) == 0 {
		return nil, fmt.Errorf("no capture of host %q recorded [%s, %s): %w", host, query.DisplayWallTime(from), query.DisplayWallTime(to), subsecond.ErrEmptyRange)
	}
	s.Unrecorded = unrecorded(s.Captures, from, to)
	const second = int64(time.Second)
	var buf []subsecond.CPUCount
	for _, c := range s.Captures {
		r, err := src.Rollup(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		for k, start := range r.Starts {
			w := start + c.Offset
			if w+second <= from || w >= to {
				continue
			}
			buf = r.CPUCounts(k, buf[:0])
			for _, n := range buf {
				if len(cpus) == 0 || slices.Contains(cpus, n.CPU) {
					s.Samples += n.Samples
				}
			}
		}
	}
	return s, nil
}

// unrecorded returns how much of [from, to) caps (in time order) leave
// unrecorded: what lies outside their recordings (Missing), except that a
// range reaching past the first or the last capture by no more than two
// of its sampling intervals is not said to miss that sliver.
func unrecorded(caps []Capture, from, to int64) int64 {
	rs := Recordings(caps)
	n := Missing(rs, from, to)
	if len(rs) == 0 {
		return n
	}
	first, last := &rs[0], &rs[len(rs)-1]
	if d := min(first.Start, to) - from; d > 0 && d <= 2*interval(&first.Captures[0]) {
		n -= d
	}
	if d := to - max(last.End, from); d > 0 && d <= 2*interval(&last.Captures[len(last.Captures)-1]) {
		n -= d
	}
	return n
}

// Load returns the selection's samples as one capture (subsecond.Join):
// each capture's samples in [From, To), their times on the wall clock,
// loaded through src (the store's capture cache). cache, when not nil,
// keeps the joined capture for the next view of the same range.
func (s *Selection) Load(ctx context.Context, src Source, cache *RangeCache) (*subsecond.Capture, error) {
	if cache == nil {
		return s.join(ctx, src)
	}
	c, _, err := cache.cache.Get(ctx, s.key(), func(ctx context.Context) (*subsecond.Capture, error) { return s.join(ctx, src) })
	return c, err
}

func (s *Selection) join(ctx context.Context, src Source) (*subsecond.Capture, error) {
	p := subsecond.Profile{Host: s.Host, Name: s.Title(), Wall: subsecond.WallClock{Source: s.Captures[0].Source}}
	parts := make([]subsecond.Part, 0, len(s.Captures))
	var hz float64
	for _, c := range s.Captures {
		cc, err := src.Capture(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		lo, hi := cc.Window(subsecond.Range{Start: s.From - c.Offset, End: s.To - c.Offset})
		parts = append(parts, subsecond.Part{C: cc, Lo: lo, Hi: hi, Shift: c.Offset})
		p.Wall.Approximate = p.Wall.Approximate || c.Approximate
		hz = max(hz, c.Hz)
	}
	j := subsecond.Join(p, parts)
	j.Profile.FrequencyHz = hz // a gap between parts is no slower sampling
	return j, nil
}

// Title names the selection for reading: "node-1 · 2026-11-30 03:12:00 –
// 03:12:10 UTC (10s) · 2 captures".
func (s *Selection) Title() string {
	var b strings.Builder
	b.WriteString(s.Host)
	b.WriteString(" · ")
	b.WriteString(query.DisplayWallTime(s.From))
	b.WriteString(" – ")
	b.WriteString(query.DisplayWallTime(s.To))
	fmt.Fprintf(&b, " (%s)", time.Duration(s.To-s.From).Round(time.Millisecond))
	if n := len(s.Captures); n == 1 {
		b.WriteString(" · 1 capture")
	} else {
		fmt.Fprintf(&b, " · %d captures", n)
	}
	return b.String()
}

// rangeKey names a joined range: the host, the range and the captures
// joined, so that a capture added to the host or deleted from it makes
// another key, never a stale answer.
type rangeKey struct {
	host     string
	from, to int64
	ids      string
}

func (s *Selection) key() rangeKey {
	ids := make([]string, len(s.Captures))
	for i, c := range s.Captures {
		ids[i] = c.ID
	}
	return rangeKey{host: s.Host, from: s.From, to: s.To, ids: strings.Join(ids, ",")}
}

// RangeCache keeps joined ranges (Selection.Load), the most recently used
// within a byte budget that counts each capture's columns and tables and
// the indexes its views derive from it, so that the views of one range (a
// page's graph, its table, its exports, its stack chart) join its captures
// once. Concurrent loads of one range are shared. Safe for concurrent use.
type RangeCache struct {
	cache *lru.Cache[rangeKey, *subsecond.Capture]
}

// DefaultRangeBudget is the byte budget NewRangeCache takes for 0: ten
// minutes of a 96-CPU host at 99 Hz, with its views' indexes, take about
// 400 MB; ten seconds about 8 MB.
const DefaultRangeBudget = 256 << 20

// NewRangeCache returns a cache of joined ranges within budget bytes (0:
// DefaultRangeBudget). A range larger than the budget is joined for its
// request and not kept.
func NewRangeCache(budget int64) *RangeCache {
	if budget <= 0 {
		budget = DefaultRangeBudget
	}
	return &RangeCache{cache: lru.New[rangeKey](lru.Options[*subsecond.Capture]{
		Budget:  budget,
		Size:    func(c *subsecond.Capture) int64 { return max(c.Bytes(), 1) },
		Growing: (*subsecond.Capture).DerivedBytes,
	})}
}

// SelectQuery returns the host ranges q asks for, over its CPUs: [from,
// to), and for a differential graph (diff) the base [from2, to2); it sets
// q.Range and q.Range2 to them, as the capture views read them from a
// joined capture. A host's ranges are on the wall clock: offsets (start,
// end, start2, end2) and another profile (base) are refused.
func SelectQuery(ctx context.Context, src Source, host string, q *query.Query, diff bool) (target, base *Selection, err error) {
	for _, b := range []struct {
		name string
		set  bool
	}{{"start", q.Start.Set}, {"end", q.End.Set}, {"start2", q.Start2.Set}, {"end2", q.End2.Set}, {"base", q.Base != ""}} {
		if b.set {
			return nil, nil, query.Invalidf(b.name, "a host's range is on the wall clock: give from and to (from2 and to2 for a differential graph's base)")
		}
	}
	if diff && !q.From2.Set && !q.To2.Set {
		return nil, nil, query.Invalidf("from2", "the base range from2, to2 is missing")
	}
	if target, err = Select(ctx, src, host, q.From.NS, q.To.NS, q.Filter.CPUs); err != nil {
		return nil, nil, err
	}
	q.Range = subsecond.Range{Start: target.From, End: target.To}
	if diff {
		if base, err = Select(ctx, src, host, q.From2.NS, q.To2.NS, q.Filter.CPUs); err != nil {
			return nil, nil, fmt.Errorf("base range: %w", err)
		}
		q.Range2 = subsecond.Range{Start: base.From, End: base.To}
	}
	return target, base, nil
}

// Bytes returns the bytes the cache holds.
func (c *RangeCache) Bytes() int64 { return c.cache.Bytes() }
