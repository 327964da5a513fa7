package explain

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
)

// movingNight is 20 one-minute captures of 4 CPUs with the kubelet on
// CPU 1 for 20 s every 2 minutes, and two series: memory cgroups that
// climb while it runs (5000 in its seconds, 200 elsewhere, with noise),
// and a load1 of pure noise.
func movingNight(t *testing.T) (storeSource, *nightgen.Night) {
	t.Helper()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 20, Length: time.Minute, Unanchored: -1, Seed: 9}
	for k := 0; k < 10; k++ {
		a := start.Add(time.Duration(k)*2*time.Minute + 30*time.Second)
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 1, Start: a, End: a.Add(20 * time.Second)})
	}
	src := importNight(t, n, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	mem := subsecond.Series{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}
	load := subsecond.Series{Name: "load1", CPU: subsecond.Unknown}
	for s := 1; s <= 20*60; s++ {
		at := start.Add(time.Duration(s) * time.Second)
		v := 200 + rng.Float64()*50
		for _, b := range n.Bursts {
			if !at.Add(-time.Second).Before(b.Start) && at.Add(-time.Second).Before(b.End) {
				v = 5000 + rng.Float64()*50
			}
		}
		mem.Points = append(mem.Points, subsecond.Point{Time: at.UnixNano(), Value: math.Round(v)})
		load.Points = append(load.Points, subsecond.Point{Time: at.UnixNano(), Value: math.Round(rng.Float64()*400) / 100})
	}
	if _, err := src.AddSeries(context.Background(), n.Host, []subsecond.Series{mem, load}); err != nil {
		t.Fatal(err)
	}
	return src, n
}

func TestMovesWithASeries(t *testing.T) {
	src, _ := movingNight(t)
	ctx := context.Background()
	mv, err := Moves(ctx, src, "node-1", MoveOptions{Series: &subsecond.SeriesKey{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mv.Windows) < 100 || len(mv.Moving) == 0 {
		t.Fatalf("%d windows, %d moving; want about 120 windows and findings", len(mv.Windows), len(mv.Moving))
	}
	top := mv.Moving[0]
	// The kubelet runs in a sixth of the windows and not at all in the
	// others, a tie: √(3·p·(1−p)) ≈ 0.65 is the most a rank correlation
	// can then reach.
	if top.Comm != "kubelet" || top.Rho < 0.5 || top.N < 100 {
		t.Errorf("first to move with memory cgroups = %s (rho %.2f over %d); want the kubelet, rho > 0.5", top.Feature, top.Rho, top.N)
	}
	// A series of noise: nothing moves with it much.
	mv, err = Moves(ctx, src, "node-1", MoveOptions{Series: &subsecond.SeriesKey{Name: "load1", CPU: subsecond.Unknown}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mv.Moving {
		if math.Abs(m.Rho) > 0.4 {
			t.Errorf("%s moves with noise: rho %.2f over %d", m.Feature, m.Rho, m.N)
		}
	}
}

func TestSeriesMovingWithAFeature(t *testing.T) {
	src, _ := movingNight(t)
	mv, err := Moves(context.Background(), src, "node-1", MoveOptions{Feature: &Feature{Kind: KindFunction, Comm: "kubelet", Function: "mem_cgroup_nr_lru_pages"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mv.Moving) != 2 || mv.Moving[0].Series != "cgroups" || mv.Moving[0].Rho < 0.5 || math.Abs(mv.Moving[1].Rho) > 0.4 {
		t.Errorf("series moving with the kubelet's walk = %+v; want memory cgroups first (rho > 0.5), load1 near 0", mv.Moving)
	}
	if !strings.Contains(mv.Of.String(), "mem_cgroup_nr_lru_pages") {
		t.Errorf("Of = %s", mv.Of)
	}
	if _, err := Moves(context.Background(), src, "node-1", MoveOptions{Feature: &Feature{Kind: KindComm, Comm: "nobody"}}); err == nil {
		t.Error("Moves of a command never seen: no error")
	}
}
