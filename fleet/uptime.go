package fleet

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/stats"
	"github.com/subsecond/subsecond/timeline"
)

// SameBoot is how far apart two captures' boot times may be and still be
// one boot: a boot time derived from a capture's clock wanders by a little,
// and a reboot moves it by at least the uptime it ended.
const SameBoot = subsecond.IndexSlot

// Uptime ranks the names whose share follows uptime among the hosts opt
// selects (see Map). The unit is the session: a host's captures of one
// boot that follow each other with pauses of at most timeline.SessionGap
// (a change of boot time, see SameBoot, always starts a new one), over
// their slots in [From, To); its uptime is at the middle of those slots,
// from the captures' boot time (subsecond.IndexedCapture.Boot), and a
// name's share is its samples over the session's. Captures without a boot
// time are left out, and hosts with none counted in NoBoot.
//
// For each candidate name (see Options.Candidates) the statistic is
// Spearman's rank correlation of share and uptime over all the units,
// ties given their mean rank. Its two-sided p-value comes from
// opt.Permutations random shuffles of the uptimes among the sessions of
// each host, never across hosts: a host whose share is high throughout
// and whose sessions happen to run long (a per-host baseline, an uptime
// pattern of its own) keeps both in every shuffle, so only a rise within
// hosts can make p small. The q-values are Benjamini–Hochberg's across
// the names tested.
func Uptime(ctx context.Context, src Source, opt Options) (*UptimeReport, error) {
	return uptime(ctx, src, opt, nil)
}

// uptime is Uptime, its table from cache.
func uptime(ctx context.Context, src Source, opt Options, cache *Cache) (*UptimeReport, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	hosts, err := selectHosts(ctx, src, &opt)
	if err != nil {
		return nil, err
	}
	rep := &UptimeReport{Permutations: opt.Permutations, Seed: opt.Seed, Findings: []Rise{}}
	unitOf := map[string]int{}
	var samples []int64
	var uptime []float64
	var spans [][2]int // per host with units, its units [a, b)
	for i := range hosts {
		h := &hosts[i]
		a := len(samples)
		var boot, end int64 // of the open session; boot 0 when none is
		var n, first, last int64
		var ids []string
		closeSession := func() {
			if n > 0 {
				for _, id := range ids {
					unitOf[id] = len(samples)
				}
				samples = append(samples, n)
				uptime = append(uptime, float64((first+last)/2-boot))
			}
			boot, n, ids = 0, 0, ids[:0]
		}
		known := false
		for ci := range h.caps {
			c := &h.caps[ci]
			if c.Boot == 0 {
				continue
			}
			known = true
			if boot == 0 || abs(c.Boot-boot) > SameBoot || c.Start-end > int64(timeline.SessionGap) {
				closeSession()
				boot = c.Boot
			}
			end = max(end, c.Start+int64(len(c.Slots))*subsecond.IndexSlot)
			k, f, l := unitSamples(c, opt.From, opt.To)
			if k > 0 {
				if n == 0 {
					first = f
				}
				n += k
				last = l
				ids = append(ids, c.ID)
			}
		}
		closeSession()
		if !known {
			rep.NoBoot++
		}
		if len(samples) > a {
			spans = append(spans, [2]int{a, len(samples)})
		}
	}
	N := len(samples)
	rep.Units, rep.Hosts = N, len(spans)
	if N < 3 {
		return rep, nil
	}
	t, err := cache.candidates(ctx, src, &opt, unitOf, N)
	if err != nil {
		return nil, err
	}
	copy(t.samples, samples)
	// b: the uptimes' ranks, centred and scaled so that a name's rho is
	// the dot product of its own such ranks with b; a shuffle within
	// hosts keeps b's mean and norm.
	b := normalRanks(uptime)
	if b == nil {
		return rep, nil
	}
	type test struct {
		c   int
		a   []float64
		rho float64
	}
	var tests []test
	share := make([]float64, N)
	for c := range t.names {
		for u := range N {
			share[u] = t.share(u, c)
		}
		if a := normalRanks(share); a != nil {
			tests = append(tests, test{c: c, a: a, rho: dot(a, b)})
		}
	}
	hits := make([]int, len(tests))
	rng := rngOf(opt.Seed)
	for i := range opt.Permutations {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for _, s := range spans {
			u := b[s[0]:s[1]]
			rng.Shuffle(len(u), func(i, j int) { u[i], u[j] = u[j], u[i] })
		}
		for k := range tests {
			if extreme(dot(tests[k].a, b), tests[k].rho) {
				hits[k]++
			}
		}
	}
	p := make([]float64, len(tests))
	for k := range p {
		p[k] = stats.PermutationP(hits[k], opt.Permutations)
	}
	q := stats.BH(p)
	rep.Tested = len(tests)
	// The units in uptime order, for the lowest and highest thirds.
	order := make([]int, N)
	for u := range order {
		order[u] = u
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(uptime[i], uptime[j]) })
	third := N / 3
	for k, ts := range tests {
		nm := t.names[ts.c]
		r := Rise{Kind: nm.kind, Name: nm.name, Rho: ts.rho, P: p[k], Q: q[k]}
		for _, u := range order[:third] {
			r.LowShare += t.share(u, ts.c) / float64(third)
		}
		for _, u := range order[N-third:] {
			r.HighShare += t.share(u, ts.c) / float64(third)
		}
		rep.Findings = append(rep.Findings, r)
	}
	slices.SortFunc(rep.Findings, func(a, b Rise) int {
		return cmp.Or(cmp.Compare(a.Q, b.Q), cmp.Compare(a.P, b.P), cmp.Compare(math.Abs(b.Rho), math.Abs(a.Rho)),
			cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
	rep.Findings = rep.Findings[:min(len(rep.Findings), opt.Limit)]
	return rep, nil
}

// normalRanks returns v's ranks (ties averaged) less their mean, over
// their norm, so that the dot product of two such is their Spearman
// correlation; nil when v is constant.
func normalRanks(v []float64) []float64 {
	r := stats.Ranks(v)
	var m float64
	for _, x := range r {
		m += x
	}
	m /= float64(len(r))
	var ss float64
	for i := range r {
		r[i] -= m
		ss += r[i] * r[i]
	}
	if ss == 0 {
		return nil
	}
	s := math.Sqrt(ss)
	for i := range r {
		r[i] /= s
	}
	return r
}

// dot returns the dot product of a and b, of the same length.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// abs returns |x|.
func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
