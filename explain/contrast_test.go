package explain

import (
	"math/rand/v2"
	"testing"
)

// TestContrastCounts: the relabelings counted as extreme are those whose
// difference of means, computed in full, reaches the observed one, on
// tables with ties (features equal in every window, or in all but one);
// the sequential p-values stop at the Exceedances-th of them (p = h/l),
// and are the full test's where it counts fewer.
func TestContrastCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{2, 3, 6} {
		const W, F, perms = 40, 30, 2000
		tb := &table{values: make([]float64, W*F), before: make([]bool, W), markers: make([][]int64, W), floor: make([]float64, F)}
		for f := range F {
			tb.features = append(tb.features, Feature{Kind: KindComm, Comm: string(rune('a' + f)), CPU: -1})
		}
		for w := range W {
			tb.before[w] = w < k
			for f := range F {
				v := rng.Float64()
				switch f % 3 {
				case 1:
					v = 0.25 // the same everywhere: every relabeling ties
				case 2:
					v = float64(rng.IntN(3)) / 10 // few values: many ties
				}
				if f == 0 && w < k {
					v = 2 // above every other window's: never stops
				}
				tb.values[w*F+f] = v
			}
		}
		full, _ := contrast(tb, statOptions{perms: perms, seed: 3, exceed: -1})
		seq, _ := contrast(tb, statOptions{perms: perms, seed: 3})
		// The same relabelings, counted by the difference of means.
		want, wantSeq := map[string]float64{}, map[string]float64{}
		at := make([]int, F) // the relabeling of the Exceedances-th
		sum, bsum := make([]float64, F), make([]float64, F)
		for w := range W {
			for f := range F {
				sum[f] += tb.values[w*F+f]
				if tb.before[w] {
					bsum[f] += tb.values[w*F+f]
				}
			}
		}
		M := W - k
		ge := make([]int, F)
		r := rand.New(rand.NewPCG(3, 0x9e3779b97f4a7c15))
		idx := make([]int, W)
		for i := range idx {
			idx[i] = i
		}
		for l := range perms {
			acc := make([]float64, F)
			for i := range k {
				j := i + r.IntN(W-i)
				idx[i], idx[j] = idx[j], idx[i]
				for f := range F {
					acc[f] += tb.values[idx[i]*F+f]
				}
			}
			for f, s := range acc {
				obs := bsum[f]/float64(k) - (sum[f]-bsum[f])/float64(M)
				if s/float64(k)-(sum[f]-s)/float64(M) >= obs-tol(obs) {
					if ge[f]++; ge[f] == Exceedances {
						at[f] = l + 1
					}
				}
			}
		}
		stopped := 0
		for f := range F {
			c := tb.features[f].Comm
			want[c] = float64(1+ge[f]) / float64(perms+1)
			wantSeq[c] = want[c]
			if at[f] > 0 {
				wantSeq[c] = float64(Exceedances) / float64(at[f])
				stopped++
			}
		}
		if stopped == 0 || stopped == F {
			t.Errorf("K=%d: %d of %d features stopped early; want some and not all", k, stopped, F)
		}
		for _, c := range []struct {
			name string
			got  []Finding
			want map[string]float64
		}{{"full", full, want}, {"sequential", seq, wantSeq}} {
			for _, fd := range c.got {
				for _, g := range append([]Feature{fd.Feature}, fd.Also...) {
					if fd.P != c.want[g.Comm] {
						t.Errorf("K=%d, feature %s, %s: p = %g; want %g", k, g.Comm, c.name, fd.P, c.want[g.Comm])
					}
				}
			}
		}
	}
}
