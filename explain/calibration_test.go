package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
)

// nullTable is a night's per-window counts under the null: W windows of
// about 4,000 samples, K of them before-windows, and nested features as a
// night's are (a command, its functions, a leaf under one of them), all
// drawn alike in every window.
func nullTable(rng *rand.Rand, W, K int) *table {
	const groups = 6 // commands, each with a function and two leaves
	F := groups * 4
	t := &table{values: make([]float64, W*F), before: make([]bool, W), markers: make([][]int64, W), floor: make([]float64, F)}
	for f := range F {
		t.features = append(t.features, Feature{Kind: KindComm, Comm: string(rune('a' + f))})
		t.floor[f] = 1e-4
	}
	for _, w := range rng.Perm(W)[:K] {
		t.before[w] = true
	}
	for w := range W {
		total := 4000.0
		row := t.values[w*F : (w+1)*F]
		for g := range groups {
			rate := 0.02 * float64(g+1)
			comm := poisson(rng, rate*total)
			fn := binomial(rng, comm, 0.6)
			leaf1 := binomial(rng, fn, 0.5)
			leaf2 := binomial(rng, comm-fn, 0.3)
			row[g*4], row[g*4+1], row[g*4+2], row[g*4+3] = comm/total, fn/total, leaf1/total, leaf2/total
		}
	}
	return t
}

func poisson(rng *rand.Rand, mean float64) float64 {
	// Normal approximation, floored at 0: the means here are in the tens
	// to hundreds.
	return max(0, math.Round(mean+math.Sqrt(mean)*rng.NormFloat64()))
}

func binomial(rng *rand.Rand, n, p float64) float64 {
	if n <= 0 {
		return 0
	}
	return min(n, max(0, math.Round(n*p+math.Sqrt(n*p*(1-p))*rng.NormFloat64())))
}

// TestCalibration checks the statistics under the null, on 1,000 seeded
// nights of per-window counts drawn alike in every window: the share of
// nights whose first finding has q < 0.05 is at most 5%, and one null
// feature's p-values pass a Kolmogorov–Smirnov test of uniformity at the
// 1% level; and over all features, the share of p-values at most α is at
// most α (within three standard errors of the six independent groups of a
// night's features, nested within a group), as the sequential
// p-values (Exceedances) must keep it.
func TestCalibration(t *testing.T) {
	const nights, W, K = 1000, 60, 5
	false05 := 0
	var ps []float64
	alphas := []float64{0.01, 0.05, 0.1, 0.25, 0.5}
	below := make([]int, len(alphas))
	all := 0
	for night := range nights {
		rng := rand.New(rand.NewPCG(uint64(night), 42))
		tb := nullTable(rng, W, K)
		fs, _ := contrast(tb, statOptions{perms: MinPermutations, seed: uint64(night)})
		if fs[0].Q < 0.05 {
			false05++
		}
		for _, f := range fs {
			for i, a := range alphas {
				if f.P <= a {
					below[i] += 1 + len(f.Also)
				}
			}
			all += 1 + len(f.Also)
			if f.Comm == "e" { // the second command
				ps = append(ps, f.P)
			}
			for _, g := range f.Also {
				if g.Comm == "e" {
					ps = append(ps, f.P)
				}
			}
		}
	}
	share := float64(false05) / nights
	t.Logf("null nights with a first finding at q < 0.05: %d of %d (%.1f%%)", false05, nights, 100*share)
	if share > 0.05 {
		t.Errorf("%d of %d null nights (%.1f%%) have a first finding at q < 0.05; want at most 5%%", false05, nights, 100*share)
	}
	if len(ps) != nights {
		t.Fatalf("%d p-values of the null feature; want one a night", len(ps))
	}
	for i, a := range alphas {
		got, slack := float64(below[i])/float64(all), 3*math.Sqrt(a*(1-a)/(6*nights))
		t.Logf("p ≤ %g: %.4f of %d null p-values", a, got, all)
		if got > a+slack {
			t.Errorf("%.4f of the null features' p-values are at most %g; want at most %g (+%.4f)", got, a, a, slack)
		}
	}
	// KS against the uniform: permutation p-values are discrete and a
	// little conservative (the +1), which the one-sided statistic
	// F(x) − x allows for.
	slices.Sort(ps)
	d := 0.0
	for i, p := range ps {
		d = max(d, float64(i+1)/float64(len(ps))-p)
	}
	crit := 1.63 / math.Sqrt(float64(len(ps))) // 1% level
	t.Logf("null feature: KS D+ = %.4f, 1%% critical %.4f", d, crit)
	if d > crit {
		t.Errorf("the null feature's p-values are not uniform: D+ = %.4f > %.4f", d, crit)
	}
}

// TestCalibrationNights runs Explain end to end on generated nights with
// no burst and markers at random times: the first finding's q is rarely
// below 0.05 (here at most 4 of 36 runs, when the rate is 5%; the 1,000
// tables above make the 5% bound).
func TestCalibrationNights(t *testing.T) {
	if testing.Short() {
		t.Skip("generates six nights")
	}
	ctx := context.Background()
	runs, low := 0, 0
	for night := range 6 {
		start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
		n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 10, Length: 2 * time.Minute,
			Unanchored: -1, Seed: uint64(100 + night)}
		src := memNight(t, n, nil)
		rng := rand.New(rand.NewPCG(uint64(night), 7))
		for set := range 6 {
			src.markers = src.markers[:0]
			for range 4 {
				at := start.Add(30*time.Second + time.Duration(rng.Int64N(int64(19*time.Minute))))
				src.markers = append(src.markers, subsecond.Marker{Time: at.UnixNano(), Text: "random"})
			}
			slices.SortFunc(src.markers, func(a, b subsecond.Marker) int { return int(a.Time - b.Time) })
			rep, err := Explain(ctx, src, "node-1", Options{Permutations: MinPermutations, Seed: uint64(set)})
			if err != nil {
				t.Fatal(err)
			}
			runs++
			if rep.Findings[0].Q < 0.05 {
				low++
				t.Logf("night %d, markers %d: first finding %+v at q %.3g", night, set, rep.Findings[0].Feature, rep.Findings[0].Q)
			}
		}
	}
	t.Logf("random markers: %d of %d runs with a first finding at q < 0.05", low, runs)
	if low > 4 {
		t.Errorf("%d of %d runs with random markers have a first finding at q < 0.05; want at most 4", low, runs)
	}
}
