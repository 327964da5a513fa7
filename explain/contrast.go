package explain

import (
	"cmp"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/subsecond/subsecond/internal/stats"
)

// table is what the statistics read: the candidate features and, for
// each window, each feature's value (a share of the window's samples, or a
// series' mean), and which windows are before-windows. Windows are the
// unit: everything below permutes whole windows.
type table struct {
	features []Feature
	// values holds window w's value of feature f at w*len(features)+f.
	values []float64
	before []bool
	// markers are, per window, the times of the markers it is before
	// (none for a control window).
	markers [][]int64
	// floor, per feature, is the smallest control value that Ratio
	// divides by: half a sample of an average control window for a
	// share (see Finding.Ratio).
	floor []float64
}

// statOptions are the statistics' knobs.
type statOptions struct {
	perms int    // random relabelings when not exact
	seed  uint64 // their generator's seed
	// exceed is h of the sequential p-values (see sequential); 0 for
	// Exceedances, negative for none: every feature relabeled perms times.
	exceed int
}

// Exceedances is h of the permutation test's sequential p-values (see
// sequential): a feature's relabelings stop at its h-th at least as
// extreme as observed.
const Exceedances = 20

// permBlock is how many relabelings sequential draws at a time.
const permBlock = 128

// Percentile is the per-window threshold: a before-window's value stands
// out when it is above this percentile of the control windows' values
// (nearest rank).
const Percentile = 95

// contrast tests each feature of t: T = mean over before-windows − mean
// over control windows, against the same difference under random
// relabelings of the windows (one-sided, larger is unusual), p =
// (1 + #{T* ≥ T}) / (1 + P). With one before-window the M + 1 relabelings
// are enumerated and p = #{w : value(w) ≥ value(before)} / (M + 1), exact.
// q is Benjamini–Hochberg's over all of t's features. Findings come back
// ranked (see rank), features with identical values in every window
// grouped under the most specific of them (Also). exact reports whether
// the p-values were enumerated. Random relabelings stop early for a
// feature clearly not significant: see sequential.
func contrast(t *table, opt statOptions) (out []Finding, exact bool) {
	F, W := len(t.features), len(t.before)
	if F == 0 || W == 0 {
		return nil, false
	}
	var bi, ci []int
	for w, b := range t.before {
		if b {
			bi = append(bi, w)
		} else {
			ci = append(ci, w)
		}
	}
	K, M := len(bi), len(ci)
	sum := make([]float64, F)
	obs := make([]float64, F)
	for w := range W {
		row := t.values[w*F : (w+1)*F]
		for f, v := range row {
			sum[f] += v
		}
	}
	bsum := make([]float64, F)
	for _, w := range bi {
		for f, v := range t.values[w*F : (w+1)*F] {
			bsum[f] += v
		}
	}
	for f := range F {
		obs[f] = bsum[f]/float64(K) - (sum[f]-bsum[f])/float64(M)
	}
	p := make([]float64, F)
	if K == 1 {
		exact = true
		b := bi[0]
		for f := range F {
			x := t.values[b*F+f]
			ge := 0 // windows at least as extreme, the observed included
			for w := range W {
				if t.values[w*F+f] >= x-tol(x) {
					ge++
				}
			}
			p[f] = float64(ge) / float64(W)
		}
	} else {
		stop := sequential(t, obs, sum, K, M, opt)
		for f := range F {
			if stop.at[f] > 0 {
				p[f] = float64(stop.h) / float64(stop.at[f])
			} else {
				p[f] = float64(stop.ge[f]) / float64(opt.perms+1)
			}
		}
	}
	q := stats.BH(p)

	// Per-window threshold: the Percentile of the control values.
	ctl := make([]float64, M)
	out = make([]Finding, 0, F)
	for f := range F {
		for i, w := range ci {
			ctl[i] = t.values[w*F+f]
		}
		slices.Sort(ctl)
		thr := ctl[max(0, (Percentile*M+99)/100-1)]
		fd := Finding{Feature: t.features[f], Of: K, P: p[f], Q: q[f], Markers: []int64{}}
		fd.BeforeShare = bsum[f] / float64(K)
		fd.ControlShare = (sum[f] - bsum[f]) / float64(M)
		fd.Diff = fd.BeforeShare - fd.ControlShare
		fd.Ratio = fd.BeforeShare / max(fd.ControlShare, t.floor[f])
		for _, w := range bi {
			if v := t.values[w*F+f]; v > thr+tol(thr) {
				fd.StoodOut++
				fd.Markers = append(fd.Markers, t.markers[w]...)
			}
		}
		out = append(out, fd)
	}
	out = group(t, out)
	slices.SortFunc(out, rank)
	return out, exact
}

// stops are a sequential permutation test's outcome per feature: at is
// the relabelings drawn when the h-th at least as extreme as observed
// came (0: it never came), ge the relabelings at least as extreme, the
// observed included, when it did not.
type stops struct {
	h      int
	at, ge []int
}

// sequential relabels the windows of t opt.perms times at most, K of them
// before-windows (the observed statistics obs, the features' sums over
// all windows sum), and counts each feature's relabelings at least as
// extreme as observed, stopping a feature's at the h-th such one
// (h = opt.exceed): Besag and Clifford's sequential Monte Carlo p-value
// (Biometrika 78, 1991), p = h/l when the h-th came at relabeling l, else
// p = (1 + g)/(1 + P) for the g of all P relabelings, as the full test
// gives. It is exactly valid, P(p ≤ α) ≤ α, as the full test's is;
// a feature far from significant (p near 0.5) stops after about 2h
// relabelings instead of P, and a feature whose full test counts fewer
// than h gets the full test's p, bit for bit: the relabelings are the
// same for every feature, drawn in blocks of permBlock from one
// generator seeded with opt.seed.
func sequential(t *table, obs, sum []float64, K, M int, opt statOptions) stops {
	F, W := len(t.features), len(t.before)
	h := opt.exceed
	if h == 0 {
		h = Exceedances
	}
	if h < 0 {
		h = opt.perms + 1
	}
	st := stops{h: h, at: make([]int, F), ge: make([]int, F)}
	// T(s) = s/K − (sum − s)/M rises with the relabeled before-sum s, so
	// T(s) ≥ obs − tol(obs) holds for every s above a bound, and for none
	// below it: s is compared with the bound, and T computed only within
	// a margin of it, far wider than T's rounding.
	lo, hi := make([]float64, F), make([]float64, F)
	for f := range F {
		st.ge[f] = 1
		b := (obs[f] - tol(obs[f]) + sum[f]/float64(M)) / (1/float64(K) + 1/float64(M))
		m := 1e-9 * max(1, math.Abs(b))
		lo[f], hi[f] = b-m, b+m
	}
	// The values by feature, each feature's windows together.
	byF := make([]float64, F*W)
	for w := range W {
		for f, v := range t.values[w*F : (w+1)*F] {
			byF[f*W+w] = v
		}
	}
	active := make([]int, F)
	for f := range active {
		active[f] = f
	}
	rng := rand.New(rand.NewPCG(opt.seed, 0x9e3779b97f4a7c15))
	idx := make([]int32, W)
	for i := range idx {
		idx[i] = int32(i)
	}
	block := make([]int32, permBlock*K)
	for done := 0; done < opt.perms && len(active) > 0; {
		nb := min(permBlock, opt.perms-done)
		for r := range nb {
			for i := range K {
				j := i + rng.IntN(W-i)
				idx[i], idx[j] = idx[j], idx[i]
				block[r*K+i] = idx[i]
			}
		}
		kept := active[:0]
		for _, f := range active {
			row := byF[f*W : (f+1)*W]
			for r := range nb {
				s := 0.0
				for _, w := range block[r*K : (r+1)*K] {
					s += row[w]
				}
				if s >= hi[f] || s > lo[f] && s/float64(K)-(sum[f]-s)/float64(M) >= obs[f]-tol(obs[f]) {
					if st.ge[f]++; st.ge[f] > h {
						st.at[f] = done + r + 1
						break
					}
				}
			}
			if st.at[f] == 0 {
				kept = append(kept, f)
			}
		}
		active = kept
		done += nb
	}
	return st
}

// tol is the slack within which two values computed in different orders
// are equal.
func tol(x float64) float64 { return 1e-12 * max(1, math.Abs(x)) }

// group folds findings whose features have the same value in every
// window (the kubelet's command, its leaf function and its one stack when
// it ran nothing else) into one, the most specific feature first (see
// kindOrder), the others in Also.
func group(t *table, fs []Finding) []Finding {
	F := len(t.features)
	seed := maphash.MakeSeed()
	byHash := map[uint64][]int{}
	hashes := make([]uint64, F)
	for f := range F {
		var h maphash.Hash
		h.SetSeed(seed)
		for w := range t.before {
			b := math.Float64bits(t.values[w*F+f])
			h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(b >> 32), byte(b >> 40), byte(b >> 48), byte(b >> 56)})
		}
		hashes[f] = h.Sum64()
		byHash[hashes[f]] = append(byHash[hashes[f]], f)
	}
	same := func(a, b int) bool {
		for w := range t.before {
			if t.values[w*F+a] != t.values[w*F+b] {
				return false
			}
		}
		return true
	}
	out := make([]Finding, 0, F)
	done := make([]bool, F)
	for f := range F {
		if done[f] {
			continue
		}
		var members []int
		for _, g := range byHash[hashes[f]] {
			if !done[g] && same(f, g) {
				members = append(members, g)
				done[g] = true
			}
		}
		slices.SortFunc(members, func(a, b int) int { return specific(&fs[a].Feature, &fs[b].Feature) })
		fd := fs[members[0]]
		for _, g := range members[1:] {
			fd.Also = append(fd.Also, fs[g].Feature)
		}
		out = append(out, fd)
	}
	return out
}

// kindOrder ranks kinds from the most specific description of what ran
// to the least: a stack says more than its leaf, a leaf more than a
// function anywhere on the stack, and so on.
var kindOrder = map[string]int{KindStack: 0, KindLeaf: 1, KindKernelCore: 2, KindCPU: 3, KindFunction: 4, KindComm: 5, KindSeries: 6}

// specific orders a before b (-1) when it is the more specific feature:
// by kind, then the deeper stack, then by name.
func specific(a, b *Feature) int {
	return cmp.Or(cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]), cmp.Compare(len(b.Stack), len(a.Stack)), compareFeature(a, b))
}

// compareFeature orders features by their fields, for a stable ranking.
func compareFeature(a, b *Feature) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Function, b.Function),
		slices.Compare(a.Stack, b.Stack), cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Series, b.Series), cmp.Compare(a.Label, b.Label))
}

// rank orders findings: by q, then by p, then the larger difference (in
// the kind's unit), then the more specific feature.
func rank(a, b Finding) int {
	return cmp.Or(cmp.Compare(a.Q, b.Q), cmp.Compare(a.P, b.P), cmp.Compare(b.Diff, a.Diff), specific(&a.Feature, &b.Feature))
}
