// Package stats holds the statistics the explain and fleet packages share:
// ranks with ties averaged, Spearman's rank correlation, a permutation
// test's p-value and Benjamini–Hochberg's q-values.
//
//	rho, n := stats.Spearman(shares, uptimes)
//	q := stats.BH(p) // q[i] belongs to p[i]
package stats

import (
	"cmp"
	"math"
	"slices"
)

// BH returns Benjamini–Hochberg's q-values of p, in p's order: q_(i) = min
// over j ≥ i of m·p_(j)/j, at most 1, where p_(j) is the j-th smallest of
// the m p-values. A finding is kept at false discovery rate α when its q
// is at most α.
func BH(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	q := make([]float64, m)
	run := 1.0
	for r := m - 1; r >= 0; r-- {
		i := order[r]
		run = min(run, p[i]*float64(m)/float64(r+1))
		q[i] = run
	}
	return q
}

// Ranks returns v's ranks, 1 for the smallest, ties given their mean rank.
func Ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}

// Spearman returns the rank correlation of x and y (Pearson's correlation
// of their ranks, ties averaged) over the indexes where both are numbers,
// and their number; NaN when fewer than 2 or either is constant there.
func Spearman(x, y []float64) (float64, int) {
	var xs, ys []float64
	for i := range x {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	n := len(xs)
	if n < 2 {
		return math.NaN(), n
	}
	return Pearson(Ranks(xs), Ranks(ys)), n
}

// Pearson returns the correlation of x and y, which have the same length;
// NaN when either is constant or they hold fewer than 2 values.
func Pearson(x, y []float64) float64 {
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// PermutationP returns the p-value of a permutation test that drew n
// random relabelings, extreme of which gave a statistic at least as
// extreme as the observed one: (1+extreme)/(1+n). Counting the observed
// labeling among the draws keeps the test valid (never below its level
// under the null) and makes 1/(1+n) the smallest p it can give.
func PermutationP(extreme, n int) float64 {
	return float64(1+extreme) / float64(1+n)
}
