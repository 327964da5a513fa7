package fleet

import (
	"cmp"
	"context"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// check fills opt's defaults and refuses what is out of bounds with a
// *query.ParamError, which wraps subsecond.ErrInvalid.
func (opt *Options) check() error {
	switch {
	case opt.From >= opt.To:
		return query.Invalidf("to", "the range's end %d is not after its start %d", opt.To, opt.From)
	case opt.Buckets < 0 || opt.Buckets > MaxBuckets:
		return query.Invalidf("buckets", "%d buckets: from 1 to %d", opt.Buckets, MaxBuckets)
	case opt.Permutations != 0 && (opt.Permutations < MinPermutations || opt.Permutations > MaxPermutations):
		return query.Invalidf("permutations", "%d permutations: from %d to %d", opt.Permutations, MinPermutations, MaxPermutations)
	case opt.Limit < 0:
		return query.Invalidf("limit", "%d findings: at least 1", opt.Limit)
	case opt.Candidates < 0 || opt.Candidates > MaxCandidates:
		return query.Invalidf("candidates", "%d candidates: from 1 to %d", opt.Candidates, MaxCandidates)
	case opt.Kind > subsecond.NameEdge:
		return query.Invalidf("kind", "no kind of name numbered %d", opt.Kind)
	}
	opt.Buckets = cmp.Or(opt.Buckets, DefaultBuckets)
	opt.Permutations = cmp.Or(opt.Permutations, DefaultPermutations)
	opt.Limit = cmp.Or(opt.Limit, DefaultLimit)
	opt.Candidates = cmp.Or(opt.Candidates, DefaultCandidates)
	if opt.Match != nil && opt.Kind == 0 {
		opt.Kind = subsecond.NameFunction
	}
	return nil
}

// bucketWidth returns the width of opt's buckets: (To−From)/Buckets,
// rounded up so that Buckets columns cover the range (the last one is cut
// short at To).
func (opt *Options) bucketWidth() int64 {
	span := opt.To - opt.From
	return (span + int64(opt.Buckets) - 1) / int64(opt.Buckets)
}

// host is a selected host and its indexed captures with a slot in range.
type host struct {
	name   string
	labels []subsecond.Label
	group  string // its value of opt.Group
	// grouped reports whether it carries opt.Group at all.
	grouped bool
	caps    []subsecond.IndexedCapture // by Start
}

// selectHosts returns the hosts with an indexed capture in [opt.From,
// opt.To) that carry every label of opt.Labels, by group and then name.
func selectHosts(ctx context.Context, src Source, opt *Options) ([]host, error) {
	caps, err := src.IndexedCaptures(ctx, opt.From, opt.To)
	if err != nil {
		return nil, err
	}
	labels, err := src.HostLabels(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	var hosts []host
	for _, c := range caps {
		i, ok := byName[c.Host]
		if !ok {
			ls := labels[c.Host]
			if !carries(ls, opt.Labels) {
				byName[c.Host] = -1
				continue
			}
			i = len(hosts)
			byName[c.Host] = i
			h := host{name: c.Host, labels: ls}
			if opt.Group != "" {
				h.group, h.grouped = value(ls, opt.Group)
			}
			if h.labels == nil {
				h.labels = []subsecond.Label{}
			}
			hosts = append(hosts, h)
		}
		if i >= 0 {
			hosts[i].caps = append(hosts[i].caps, c)
		}
	}
	for i := range hosts {
		slices.SortStableFunc(hosts[i].caps, func(a, b subsecond.IndexedCapture) int { return cmp.Compare(a.Start, b.Start) })
	}
	slices.SortFunc(hosts, func(a, b host) int { return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.name, b.name)) })
	return hosts, nil
}

// carries reports whether ls holds every label of want.
func carries(ls, want []subsecond.Label) bool {
	for _, w := range want {
		if !slices.Contains(ls, w) {
			return false
		}
	}
	return true
}

// value returns the value of the label of ls with key, and whether there
// is one.
func value(ls []subsecond.Label, key string) (string, bool) {
	for _, l := range ls {
		if l.Key == key {
			return l.Value, true
		}
	}
	return "", false
}

// slotsIn returns the indexes [lo, hi) of c's slots that start in [from,
// to): slot i covers [c.Start + i·IndexSlot, +IndexSlot) and belongs to the
// range holding its start.
func slotsIn(c *subsecond.IndexedCapture, from, to int64) (lo, hi int) {
	n := int64(len(c.Slots))
	end := c.Start + n*subsecond.IndexSlot
	from, to = min(max(from, c.Start), end), min(max(to, c.Start), end)
	return int(ceilDiv(from-c.Start, subsecond.IndexSlot)), int(ceilDiv(to-c.Start, subsecond.IndexSlot))
}

// ceilDiv returns a/b rounded up, for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// matchedSlots returns, per capture ID, the samples of the names of
// opt.Kind that opt.Match selects, per slot, and those names by their
// samples in range, most first. A slot's matched samples are the sum of
// the names' counts: a sample whose stack holds two matched functions
// counts twice there (commands never overlap); readers cap it at the
// slot's samples.
func matchedSlots(ctx context.Context, src Source, opt *Options) (map[string][]int64, []string, error) {
	ncs, err := src.NameCounts(ctx, opt.Kind, opt.Match, opt.From, opt.To)
	if err != nil {
		return nil, nil, err
	}
	by := map[string][]int64{}
	totals := map[string]int64{}
	for _, nc := range ncs {
		s := by[nc.Capture]
		if len(s) < len(nc.Slots) {
			s = append(s, make([]int64, len(nc.Slots)-len(s))...)
		}
		for i, v := range nc.Slots {
			s[i] += v
		}
		by[nc.Capture] = s
		totals[nc.Name] += nc.Total()
	}
	names := make([]string, 0, len(totals))
	for n := range totals {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b)) })
	return by, names, nil
}

// at returns s[i], 0 past its end (a NameCount may leave trailing zero
// slots off).
func at(s []int64, i int) int64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}
