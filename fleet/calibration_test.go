package fleet_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/fleet/fleetgen"
)

// nullNames are one function of each stack of the generated fleets but
// the idle one: fleet i of a calibration run reads the p-value of
// nullNames[i%len], so that the p-values it counts are independent.
var nullNames = []string{"run_model", "load_batch", "k8s.io/kubernetes/pkg/kubelet/cm.(*containerManagerImpl).GetStats",
	fleetgen.Planted, "futex_wait", "tcp_sendmsg", "ext4_writepages", "chacha20_block", "journal_file_append_data",
	"seq_read", "github.com/prometheus/procfs.parseStat"}

// binomialBounds returns the counts below lo or above hi that n draws of
// probability p fall outside with probability at most tail on each side.
func binomialBounds(n int, p, tail float64) (lo, hi int) {
	pmf := func(k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return math.Exp(a - b - c + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	for cum := 0.0; ; lo++ {
		if cum += pmf(lo); cum > tail {
			break
		}
	}
	hi = n
	for cum := 0.0; ; hi-- {
		if cum += pmf(hi); cum > tail {
			break
		}
	}
	return lo, hi
}

// TestCalibration runs the group and uptime contrasts over many clean
// generated fleets (no leak planted) in three shapes: mild per-host
// baselines, strong ones, and strong ones tied to uptimes clustered by
// host. Under the null a test's p-value is below 0.05 in at most 5% of
// fleets, and BH's q-values keep a fleet free of any finding below 0.05 in
// about 95% of them: the counts must lie within the binomial bounds that
// hold with probability 99.8%. The fraction over every name tested (names
// of one stack are not independent) is logged and held within 0.02 of
// 0.05.
func TestCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("many fleets")
	}
	const fleets = 200
	lo, hi := binomialBounds(fleets, 0.05, 0.001)
	for _, shape := range []struct {
		name string
		f    fleetgen.Fleet
	}{
		{"mild baselines", fleetgen.Fleet{Baseline: 0.3}},
		{"strong baselines", fleetgen.Fleet{Baseline: 1}},
		{"strong baselines, uptimes clustered by host", fleetgen.Fleet{Baseline: 1, Cluster: true}},
	} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			type tally struct{ below, any, pooled, tested int }
			var g, u tally
			count := func(tl *tally, ps []float64, qs []float64, own float64) {
				if own < 0.05 {
					tl.below++
				}
				if slices.ContainsFunc(qs, func(q float64) bool { return q < 0.05 }) {
					tl.any++
				}
				for _, p := range ps {
					if p < 0.05 {
						tl.pooled++
					}
				}
				tl.tested += len(ps)
			}
			for i := range fleets {
				f := shape.f
				f.Hosts, f.Boots, f.Sessions, f.PerSession, f.CPUs, f.Seed = 20, 2, 3, 1, 1, uint64(1000+i)
				src := f.Source()
				from, to := span(t, src)
				opt := fleet.Options{From: from, To: to, Group: "zone", Permutations: fleet.MinPermutations, Seed: uint64(i), Limit: 10_000}
				want := nullNames[i%len(nullNames)]
				gr, err := fleet.Groups(context.Background(), src, opt)
				if err != nil {
					t.Fatal(err)
				}
				var ps, qs []float64
				own := math.NaN()
				for _, d := range gr.Findings {
					ps, qs = append(ps, d.P), append(qs, d.Q)
					if d.Kind == subsecond.NameFunction && d.Name == want {
						own = d.P
					}
				}
				if math.IsNaN(own) {
					t.Fatalf("fleet %d: groups did not test %s", i, want)
				}
				count(&g, ps, qs, own)
				ur, err := fleet.Uptime(context.Background(), src, opt)
				if err != nil {
					t.Fatal(err)
				}
				ps, qs, own = nil, nil, math.NaN()
				for _, r := range ur.Findings {
					ps, qs = append(ps, r.P), append(qs, r.Q)
					if r.Kind == subsecond.NameFunction && r.Name == want {
						own = r.P
					}
				}
				if math.IsNaN(own) {
					t.Fatalf("fleet %d: uptime did not test %s", i, want)
				}
				count(&u, ps, qs, own)
			}
			for _, c := range []struct {
				name string
				tl   tally
			}{{"groups", g}, {"uptime", u}} {
				frac := float64(c.tl.pooled) / float64(c.tl.tested)
				t.Logf("%s: %d of %d fleets with p < 0.05 for their name, %d with a q < 0.05 (bounds %d–%d); %.4f of %d p-values below 0.05",
					c.name, c.tl.below, fleets, c.tl.any, lo, hi, frac, c.tl.tested)
				if c.tl.below < lo || c.tl.below > hi {
					t.Errorf("%s: %d of %d fleets with p < 0.05; want %d to %d", c.name, c.tl.below, fleets, lo, hi)
				}
				if c.tl.any > hi {
					t.Errorf("%s: %d of %d clean fleets with a finding q < 0.05; want at most %d", c.name, c.tl.any, fleets, hi)
				}
				if math.Abs(frac-0.05) > 0.02 {
					t.Errorf("%s: %.4f of the p-values below 0.05; want 0.03 to 0.07", c.name, frac)
				}
			}
		})
	}
}
