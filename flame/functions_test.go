package flame_test

import (
	"math"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// referenceFunctions counts, straight from the generated samples, each
// function's self samples (its frame is the leaf) and total samples (its
// frame is anywhere in the stack, once per stack).
func referenceFunctions(ss []synth.Labeled, f query.Filter, r subsecond.Range) map[[2]string][2]int64 {
	out := map[[2]string][2]int64{}
	for i := range ss {
		s := &ss[i]
		if !r.Contains(s.Time) || !synth.Keep(s, f, "cpu-clock") {
			continue
		}
		seen := map[[2]string]bool{}
		var leaf [2]string
		for j := len(s.Frames) - 1; j >= 0; j-- {
			fr := s.Frames[j]
			for _, name := range names(fr.Symbol, fr.DSO, false) {
				k := [2]string{name, fr.DSO}
				if !seen[k] {
					seen[k] = true
					v := out[k]
					v[1]++
					out[k] = v
				}
				leaf = k
			}
		}
		if len(s.Frames) > 0 {
			v := out[leaf]
			v[0]++
			out[leaf] = v
		}
	}
	return out
}

func TestFunctionsMatchIndependentCount(t *testing.T) {
	ss, c := data(t)
	t0 := c.Profile.T0()
	for _, r := range []subsecond.Range{{Start: t0, End: t0 + 10e9}, {Start: t0 + 2e9, End: t0 + 3e9}} {
		for _, f := range []query.Filter{{}, {Idle: true}, {CPUs: []int32{2}}} {
			g, err := flame.Build(c, f, r)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceFunctions(ss, f, r)
			rows := g.Functions()
			if len(rows) != len(want) {
				t.Errorf("%v: %d functions; want %d", f.Values(), len(rows), len(want))
			}
			for i, row := range rows {
				w := want[[2]string{row.Name, row.DSO}]
				if row.Self != w[0] || row.Total != w[1] {
					t.Errorf("%v: %s in %s: self %d total %d; want %d, %d", f.Values(), row.Name, row.DSO, row.Self, row.Total, w[0], w[1])
				}
				if i > 0 && row.Self > rows[i-1].Self {
					t.Errorf("rows not sorted by self: %d after %d", row.Self, rows[i-1].Self)
				}
				if row.Kind == "comm" || row.Kind == "root" {
					t.Errorf("function table holds a %s node %q", row.Kind, row.Name)
				}
			}
		}
	}
}

// TestFunctionsRecursion checks that a recursing function's total counts
// each stack once, and its self only where it is the leaf.
func TestFunctionsRecursion(t *testing.T) {
	b := subsecond.NewBuilder()
	fr := func(names ...string) []subsecond.Frame {
		var out []subsecond.Frame
		for i := len(names) - 1; i >= 0; i-- {
			out = append(out, subsecond.Frame{Symbol: names[i], DSO: "/bin/x", Kind: subsecond.KindUser})
		}
		return out
	}
	for i, st := range [][]string{{"main", "walk", "walk", "walk"}, {"main", "walk", "visit"}, {"main", "visit", "walk"}} {
		b.Add(&subsecond.Sample{Comm: "x", PID: 1, TID: 1, CPU: 0, Time: int64(i+1) * 1e6, Event: "e", Frames: fr(st...)})
	}
	c := b.Capture(subsecond.Profile{})
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: 0, End: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, r := range g.Functions() {
		got[r.Name] = [2]int64{r.Self, r.Total}
	}
	want := map[string][2]int64{"main": {0, 3}, "walk": {2, 3}, "visit": {1, 2}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: self, total = %v; want %v", k, got[k], w)
		}
	}
}

func TestZ(t *testing.T) {
	tests := []struct {
		x1, n1, x2, n2 int64
		want           float64
	}{
		{50, 100, 30, 100, 2.886751},
		{30, 100, 50, 100, -2.886751},
		{10, 100, 10, 100, 0},
		{0, 100, 0, 100, 0},
		{100, 100, 50, 50, 0},
		{5, 0, 3, 10, 0},
		{280, 280, 2, 291, 23.4},
	}
	for _, tt := range tests {
		got := flame.Z(tt.x1, tt.n1, tt.x2, tt.n2)
		if math.Abs(got-tt.want) > 0.05*math.Max(1, math.Abs(tt.want)) || math.IsNaN(got) {
			t.Errorf("Z(%d, %d, %d, %d) = %v; want %v", tt.x1, tt.n1, tt.x2, tt.n2, got, tt.want)
		}
	}
}

func TestDiffFunctions(t *testing.T) {
	_, c := data(t)
	t0 := c.Profile.T0()
	g, err := flame.Diff(c, query.Filter{}, subsecond.Range{Start: t0, End: t0 + 2e9}, subsecond.Range{Start: t0 + 2e9, End: t0 + 5e9})
	if err != nil {
		t.Fatal(err)
	}
	rows := g.Functions()
	byName := map[string]flame.Function{}
	for i, r := range rows {
		byName[r.Name] = r
		if i > 0 && math.Abs(r.TotalDelta) > math.Abs(rows[i-1].TotalDelta) {
			t.Fatalf("diff rows not sorted by change: %v after %v", r.TotalDelta, rows[i-1].TotalDelta)
		}
		want := 100*float64(r.Total)/float64(g.Total) - 100*float64(r.BaseTotal)/float64(g.BaseTotal)
		if math.Abs(r.TotalDelta-want) > 1e-9 {
			t.Errorf("%s: total delta %v; want %v", r.Name, r.TotalDelta, want)
		}
		if r.Significant != (math.Abs(r.Z) >= flame.SignificantZ) {
			t.Errorf("%s: significant %v with z %v", r.Name, r.Significant, r.Z)
		}
	}
	// The pegged CPU's memcg walk grew: a large, significant change.
	m := byName["mem_cgroup_nr_lru_pages"]
	if !m.Significant || m.TotalDelta <= 0 || m.Z < 5 {
		t.Errorf("mem_cgroup_nr_lru_pages: delta %v pts, z %v, significant %v; want a significant growth", m.TotalDelta, m.Z, m.Significant)
	}
}
