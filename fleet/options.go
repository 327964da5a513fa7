package fleet

import (
	"fmt"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
)

// OptionsOf returns the options of the fleet views for q over hosts
// (their wall-clock spans): the range from, to, by default the last
// query.FleetSpan of the hosts' data (or all of it when shorter); the
// labels, group and search (query.FleetMatch); the buckets (no more than
// the range's index slots), permutations, seed and limit (0: every
// finding). The CLI and the server build them
// here alike.
func OptionsOf(q *query.Query, hosts []timeline.Host) (Options, error) {
	kind, match, err := q.FleetMatch()
	if err != nil {
		return Options{}, err
	}
	from, to, err := Range(q, hosts)
	if err != nil {
		return Options{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = 1 << 30
	}
	// A column is no narrower than the index's slot, whose counts it
	// takes whole: finer columns would be empty but for one in each slot.
	buckets := int(min(int64(q.Buckets), max(1, (to-from+subsecond.IndexSlot-1)/subsecond.IndexSlot)))
	return Options{From: from, To: to, Labels: q.Labels, Group: q.Group, Kind: kind, Match: match,
		Buckets: buckets, Permutations: q.Permutations, Seed: uint64(q.Seed), Limit: limit}, nil
}

// Range returns the fleet's range [from, to) for q: its from and
// to, a missing to being the end of the newest data and a missing from
// query.FleetSpan before to or the start of the oldest data, whichever is
// later. Without any capture on the wall clock it is an error wrapping
// subsecond.ErrEmptyRange.
func Range(q *query.Query, hosts []timeline.Host) (from, to int64, err error) {
	var lo, hi int64
	for _, h := range hosts {
		if h.End == 0 {
			continue
		}
		if lo == 0 || h.Start < lo {
			lo = h.Start
		}
		hi = max(hi, h.End)
	}
	if (!q.From.Set || !q.To.Set) && hi == 0 {
		return 0, 0, fmt.Errorf("no capture is on the wall clock yet, so the fleet has no time to show (record with subsecond record): %w", subsecond.ErrEmptyRange)
	}
	to = hi
	if q.To.Set {
		to = q.To.NS
	}
	from = max(lo, to-query.FleetSpan)
	if q.From.Set {
		from = q.From.NS
	}
	if to <= from {
		name := "to"
		if !q.To.Set {
			name = "from"
		}
		return 0, 0, query.Invalidf(name, "the range [%s, %s) is empty; to must be after from", query.FormatWallTime(from), query.FormatWallTime(to))
	}
	return from, to, nil
}
