package fleet

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/subsecond/subsecond"
)

// name is a name of the index and its kind.
type name struct {
	kind subsecond.NameKind
	name string
}

// table holds what a contrast tests: per unit (a host, or a session of a
// host) its samples and, per candidate name, its samples in the unit.
type table struct {
	names   []name
	samples []int64   // per unit
	counts  []float64 // unit u's count of name c at u*len(names)+c
}

// share returns unit u's share of name c.
func (t *table) share(u, c int) float64 {
	if t.samples[u] == 0 {
		return 0
	}
	return t.counts[u*len(t.names)+c] / float64(t.samples[u])
}

// candidates returns the table of the units whose captures unitOf maps
// (capture ID to unit, of n units), their samples set by the caller: the
// names of NameTotals with at least MinCandidateSamples samples in those
// captures together (of opt.Kind and matching opt.Match when set), at
// most opt.Candidates, the most frequent first, ties by kind and name. The
// rule reads no group and no uptime, so the tests stay valid.
func candidates(ctx context.Context, src Source, opt *Options, unitOf map[string]int, n int) (*table, error) {
	caps := make(map[string]bool, len(unitOf))
	for id := range unitOf {
		caps[id] = true
	}
	ncs, err := src.NameTotals(ctx, subsecond.TotalsQuery{From: opt.From, To: opt.To, Captures: caps, Kind: opt.Kind, Match: opt.Match,
		Min: MinCandidateSamples, Limit: opt.Candidates})
	if err != nil {
		return nil, err
	}
	keep := func(nc *subsecond.NameCount) bool {
		if _, ok := unitOf[nc.Capture]; !ok {
			return false
		}
		return (opt.Kind == 0 || nc.Kind == opt.Kind) && (opt.Match == nil || opt.Match.MatchString(nc.Name))
	}
	totals := map[name]int64{}
	for i := range ncs {
		if keep(&ncs[i]) {
			totals[name{ncs[i].Kind, ncs[i].Name}] += ncs[i].Total()
		}
	}
	var names []name
	for k, v := range totals {
		if v >= MinCandidateSamples {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b name) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
	names = names[:min(len(names), opt.Candidates)]
	idx := make(map[name]int, len(names))
	for i, k := range names {
		idx[k] = i
	}
	t := &table{names: names, samples: make([]int64, n), counts: make([]float64, n*len(names))}
	for i := range ncs {
		nc := &ncs[i]
		c, ok := idx[name{nc.Kind, nc.Name}]
		if !ok || !keep(nc) {
			continue
		}
		t.counts[unitOf[nc.Capture]*len(names)+c] += float64(nc.Total())
	}
	return t, nil
}

// unitSamples returns c's samples in its slots starting in [from, to),
// and the start of the first and the end of the last such slot with
// samples (0, 0 without).
func unitSamples(c *subsecond.IndexedCapture, from, to int64) (n, first, end int64) {
	lo, hi := slotsIn(c, from, to)
	for i := lo; i < hi; i++ {
		if s := c.Slots[i].Samples; s > 0 {
			if n == 0 {
				first = c.Start + int64(i)*subsecond.IndexSlot
			}
			n += s
			end = c.Start + int64(i+1)*subsecond.IndexSlot
		}
	}
	return n, first, end
}

// rngOf returns the permutations' generator for seed: the same seed, the
// same permutations.
func rngOf(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908)) }

// extreme reports whether a permuted statistic is at least as far from 0
// as the observed one, within rounding.
func extreme(perm, obs float64) bool {
	return math.Abs(perm) >= math.Abs(obs)-1e-12*max(1, math.Abs(obs))
}

// checkEvery is how many permutations run between looks at the context.
const checkEvery = 64
