package flame

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// TestIndexBytes checks that an index's Bytes, which the capture cache
// counts against its budget, is what building it keeps live, within a
// tenth, for each setting of only on the deep-stacked real capture.
func TestIndexBytes(t *testing.T) {
	c, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	for _, only := range []string{"", "kernel", "user"} {
		m, err := query.Filter{Only: only}.Compile(c) // the filter's own index, built before
		if err != nil {
			t.Fatal(err)
		}
		before := synth.LiveHeap()
		ix := buildIndex(c, m.KeepFrame)
		held := synth.LiveHeap() - before
		if got := ix.Bytes(); float64(got) < 0.9*float64(held) || float64(got) > 1.1*float64(held) {
			t.Errorf("only=%q: index of %d nodes: Bytes() = %d; building it keeps %d bytes live", only, ix.Len(), got, held)
		}
		runtime.KeepAlive(ix)
	}
	runtime.KeepAlive(c)
}

// TestGraphWalk draws flame graphs and differential graphs of random
// ranges of the real capture, under each Only setting and a command
// filter, one after another through the index's pool of tallies, and
// checks each against totals summed afresh up every kept sample's path in
// the index: the graph holds exactly the nodes with samples in their
// subtrees (and the root), in index order, with their parents, totals
// and self counts. A tally cleared short of what it counted, or a walk
// that steps over a subtree with samples, fails it.
func TestGraphWalk(t *testing.T) {
	c, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 8))
	t0, end := c.Profile.T0(), c.Profile.End
	rangeAt := func() subsecond.Range {
		a := t0 + r.Int64N(end-t0)
		return subsecond.Range{Start: a, End: min(end+1, a+1+r.Int64N(max(1, (end-t0)/[]int64{1, 4, 40}[r.IntN(3)])))}
	}
	// paths returns the totals and self counts per index node of the
	// samples of rg that m keeps.
	paths := func(ix *index, m *query.Match, rg subsecond.Range) (total, self []int64) {
		total, self = make([]int64, ix.Len()), make([]int64, ix.Len())
		lo, hi := c.Window(rg)
		for i := lo; i < hi; i++ {
			if !m.Keep(i) {
				continue
			}
			k := ix.leaf[i]
			self[k]++
			for ; k >= 0; k = ix.parent[k] {
				total[k]++
			}
		}
		return total, self
	}
	comm := c.Strings[c.Samples.Comm[0]]
	for _, f := range []query.Filter{{}, {Only: "kernel"}, {Only: "user"}, {Comm: comm}} {
		m, ix, err := prepare(c, f)
		if err != nil {
			t.Fatal(err)
		}
		for range 40 {
			rg, base := rangeAt(), rangeAt()
			var g *Graph
			diff := r.IntN(3) == 0
			if diff {
				g, err = Diff(c, f, base, rg)
			} else {
				g, err = Build(c, f, rg)
			}
			if errors.Is(err, subsecond.ErrEmptyRange) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			total, self := paths(ix, m, rg)
			var btotal, bself []int64
			if diff {
				btotal, bself = paths(ix, m, base)
			}
			want := 0
			for k := range total {
				if k == 0 || total[k] > 0 || diff && btotal[k] > 0 {
					want++
				}
			}
			if g.Len() != want || g.Total != total[0] {
				t.Fatalf("%+v %v (diff %v): %d nodes, total %d; want %d nodes, total %d", f, rg, diff, g.Len(), g.Total, want, total[0])
			}
			out := map[int32]int32{} // index node -> graph node
			for i, k := range g.node {
				if i > 0 && k <= g.node[i-1] {
					t.Fatalf("%+v %v: graph node %d is index node %d after %d: not in index order", f, rg, i, k, g.node[i-1])
				}
				out[k] = int32(i)
				if g.TotalN[i] != total[k] || g.SelfN[i] != self[k] {
					t.Fatalf("%+v %v: node %d (%s): total %d self %d; want %d and %d", f, rg, i, g.NameOf(i), g.TotalN[i], g.SelfN[i], total[k], self[k])
				}
				if diff && (g.BaseN[i] != btotal[k] || g.BaseSelfN[i] != bself[k]) {
					t.Fatalf("%+v %v: node %d: base total %d self %d; want %d and %d", f, rg, i, g.BaseN[i], g.BaseSelfN[i], btotal[k], bself[k])
				}
				if want := int32(-1); k > 0 {
					want = out[ix.parent[k]]
					if g.Parent[i] != want {
						t.Fatalf("%+v %v: node %d's parent is %d; want %d", f, rg, i, g.Parent[i], want)
					}
				}
			}
		}
	}
}
