package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSpearman(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		x, y []float64
		rho  float64
		n    int
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1, 4},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1, 4},
		{[]float64{1, 2, nan, 4, 5}, []float64{1, 4, 9, 16, nan}, 1, 3},
		{[]float64{1, 1, 2, 2}, []float64{1, 2, 3, 4}, 0.8944271909999159, 4},
	} {
		rho, n := Spearman(c.x, c.y)
		if math.Abs(rho-c.rho) > 1e-12 || n != c.n {
			t.Errorf("Spearman(%v, %v) = %v, %d; want %v, %d", c.x, c.y, rho, n, c.rho, c.n)
		}
	}
	if rho, _ := Spearman([]float64{1, 1, 1}, []float64{1, 2, 3}); !math.IsNaN(rho) {
		t.Errorf("Spearman of a constant = %v; want NaN", rho)
	}
	if rho, n := Spearman([]float64{1}, []float64{2}); !math.IsNaN(rho) || n != 1 {
		t.Errorf("Spearman of one pair = %v, %d; want NaN, 1", rho, n)
	}
}

func TestRanks(t *testing.T) {
	for _, c := range []struct{ v, want []float64 }{
		{nil, []float64{}},
		{[]float64{3, 1, 2}, []float64{3, 1, 2}},
		{[]float64{5, 5, 1, 5}, []float64{3, 3, 1, 3}},
		{[]float64{2, 2, 1, 1}, []float64{3.5, 3.5, 1.5, 1.5}},
	} {
		if got := Ranks(c.v); !slices.Equal(got, c.want) {
			t.Errorf("Ranks(%v) = %v; want %v", c.v, got, c.want)
		}
	}
}

func TestBH(t *testing.T) {
	for _, c := range []struct{ p, want []float64 }{
		{[]float64{0.01, 0.04, 0.03}, []float64{0.03, 0.04, 0.04}},
		{[]float64{0.5, 0.001}, []float64{0.5, 0.002}},
		{[]float64{0.9, 0.8}, []float64{0.9, 0.9}},
		{[]float64{0.6}, []float64{0.6}},
	} {
		got := BH(c.p)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("BH(%v) = %v; want %v", c.p, got, c.want)
				break
			}
		}
	}
}

// TestBHBruteForce checks BH against its definition, q_(i) = min over
// j ≥ i of m·p_(j)/j, on random p-values with ties.
func TestBHBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		m := 1 + rng.IntN(30)
		p := make([]float64, m)
		for i := range p {
			p[i] = float64(rng.IntN(20)) / 19
		}
		q := BH(p)
		sorted := slices.Sorted(slices.Values(p))
		for i := range p {
			// p[i]'s rank in sorted order: the last of its ties gives
			// the same minimum as any of them.
			r := 0
			for r+1 < m && sorted[r+1] <= p[i] {
				r++
			}
			want := 1.0
			for j := r; j < m; j++ {
				want = min(want, sorted[j]*float64(m)/float64(j+1))
			}
			if math.Abs(q[i]-want) > 1e-12 {
				t.Fatalf("BH(%v)[%d] = %v; want %v", p, i, q[i], want)
			}
		}
	}
}

func TestPermutationP(t *testing.T) {
	for _, c := range []struct {
		extreme, n int
		want       float64
	}{{0, 999, 0.001}, {999, 999, 1}, {49, 999, 0.05}} {
		if got := PermutationP(c.extreme, c.n); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("PermutationP(%d, %d) = %v; want %v", c.extreme, c.n, got, c.want)
		}
	}
}
