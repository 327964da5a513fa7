package fleet

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/subsecond/subsecond/internal/stats"
	"github.com/subsecond/subsecond/query"
)

// Groups contrasts the groups of label opt.Group among the hosts opt
// selects (see Map). The unit is the host: a name's share on a host is its
// samples over the host's samples in [From, To), and every host weighs the
// same whatever its samples. Each value of the label carried by at least 2
// hosts, with at least 2 hosts outside it, is tested against the other
// hosts for each candidate name (see Options.Candidates): the statistic is
// the group's mean share minus the others', and its two-sided p-value
// comes from opt.Permutations random reassignments of the label's values
// among the hosts carrying it, (1+extreme)/(1+Permutations); the q-values
// are Benjamini–Hochberg's across every (name, value) tested. With exactly
// two values, "a against the rest" and "b against the rest" are one test:
// it is tested once, the value with the higher share reported. Hosts
// without the label are left out (GroupReport.Unlabelled). An empty
// opt.Group is an error wrapping subsecond.ErrInvalid.
func Groups(ctx context.Context, src Source, opt Options) (*GroupReport, error) {
	return groups(ctx, src, opt, nil)
}

// groups is Groups, its table from cache.
func groups(ctx context.Context, src Source, opt Options, cache *Cache) (*GroupReport, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.Group == "" {
		return nil, query.Invalidf("group", "a group contrast needs a label key")
	}
	hosts, err := selectHosts(ctx, src, &opt)
	if err != nil {
		return nil, err
	}
	rep := &GroupReport{Key: opt.Group, Groups: []GroupSize{}, Permutations: opt.Permutations, Seed: opt.Seed, Findings: []Difference{}}
	unitOf := map[string]int{}
	var samples []int64
	var values []string // per unit
	for i := range hosts {
		h := &hosts[i]
		if !h.grouped {
			rep.Unlabelled++
			continue
		}
		var n int64
		for ci := range h.caps {
			k, _, _ := unitSamples(&h.caps[ci], opt.From, opt.To)
			n += k
		}
		if n == 0 {
			continue
		}
		for ci := range h.caps {
			unitOf[h.caps[ci].ID] = len(samples)
		}
		samples = append(samples, n)
		values = append(values, h.group)
	}
	// Group indexes in value order; lab is each unit's.
	var names []string
	size := map[string]int{}
	for _, v := range values {
		if size[v] == 0 {
			names = append(names, v)
		}
		size[v]++
	}
	slices.Sort(names)
	lab := make([]int, len(values))
	for u, v := range values {
		lab[u], _ = slices.BinarySearch(names, v)
	}
	for _, v := range names {
		rep.Groups = append(rep.Groups, GroupSize{Value: v, Hosts: size[v]})
	}
	N := len(values)
	var tested []int // group indexes tested
	for g, v := range names {
		if size[v] >= 2 && N-size[v] >= 2 {
			tested = append(tested, g)
		}
	}
	if len(names) == 2 && len(tested) == 2 {
		tested = tested[:1]
	}
	if len(tested) == 0 {
		return rep, nil
	}
	t, err := cache.candidates(ctx, src, &opt, unitOf, N)
	if err != nil {
		return nil, err
	}
	copy(t.samples, samples)
	C := len(t.names)
	x := make([]float64, N*C) // shares
	total := make([]float64, C)
	for u := range N {
		for c := range C {
			x[u*C+c] = t.share(u, c)
			total[c] += x[u*C+c]
		}
	}
	G := len(names)
	sums := make([]float64, G*C)
	diff := func(out []float64) { // the statistic per tested group and name
		clear(sums)
		for u := range N {
			row, s := x[u*C:(u+1)*C], sums[lab[u]*C:(lab[u]+1)*C]
			for c := range row {
				s[c] += row[c]
			}
		}
		for k, g := range tested {
			ng := float64(size[names[g]])
			for c := range C {
				sg := sums[g*C+c]
				out[k*C+c] = sg/ng - (total[c]-sg)/(float64(N)-ng)
			}
		}
	}
	obs := make([]float64, len(tested)*C)
	diff(obs)
	observed := slices.Clone(sums) // the groups' sums of shares
	perm := make([]float64, len(obs))
	hits := make([]int, len(obs))
	rng := rngOf(opt.Seed)
	for i := range opt.Permutations {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rng.Shuffle(N, func(a, b int) { lab[a], lab[b] = lab[b], lab[a] })
		diff(perm)
		for k := range perm {
			if extreme(perm[k], obs[k]) {
				hits[k]++
			}
		}
	}
	p := make([]float64, len(obs))
	for k := range p {
		p[k] = stats.PermutationP(hits[k], opt.Permutations)
	}
	q := stats.BH(p)
	rep.Tested = len(p)
	for k, g := range tested {
		ng := float64(size[names[g]])
		for c, nm := range t.names {
			i := k*C + c
			sg := observed[g*C+c]
			gs, rs := sg/ng, (total[c]-sg)/(float64(N)-ng)
			d := Difference{Kind: nm.kind, Name: nm.name, Group: names[g], GroupShare: gs, RestShare: rs, P: p[i], Q: q[i]}
			if len(names) == 2 && gs < rs {
				d.Group, d.GroupShare, d.RestShare = names[1-g], rs, gs
			}
			d.Ratio = ratio(d.GroupShare, d.RestShare)
			rep.Findings = append(rep.Findings, d)
		}
	}
	slices.SortFunc(rep.Findings, func(a, b Difference) int {
		return cmp.Or(cmp.Compare(a.Q, b.Q), cmp.Compare(a.P, b.P),
			cmp.Compare(math.Abs(b.GroupShare-b.RestShare), math.Abs(a.GroupShare-a.RestShare)),
			cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name), strings.Compare(a.Group, b.Group))
	})
	rep.Findings = rep.Findings[:min(len(rep.Findings), opt.Limit)]
	return rep, nil
}

// ratio returns a/b, +Inf when b is 0 and a is not, 1 when both are.
func ratio(a, b float64) float64 {
	switch {
	case b != 0:
		return a / b
	case a == 0:
		return 1
	}
	return math.Inf(1)
}
