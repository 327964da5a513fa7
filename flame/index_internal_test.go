package flame

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

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

// TestCountPaths counts random ranges of the deep-stacked real capture,
// short ones up their samples' paths and long ones over the whole tree,
// through one pool of tallies as requests do, and checks each against
// counts made afresh: self and weight per node, totals over subtrees.
func TestCountPaths(t *testing.T) {
	c, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(24, 1))
	for _, f := range []query.Filter{{}, {CPUs: []int32{1}}, {Only: "kernel", Idle: true}} {
		m, ix, err := prepare(c, f)
		if err != nil {
			t.Fatal(err)
		}
		n, total := ix.Len(), len(ix.leaf)
		short := int(float64(n) / (2 * ix.pathLen))
		if short < 10 || short > total/2 {
			t.Fatalf("a range of fewer than %d of the %d samples is counted up its paths; the test wants both kinds", short, total)
		}
		modes := [2]int{}
		for round := range 60 {
			size := 1 + r.IntN(short)
			if round%3 == 2 {
				size = short + r.IntN(total-short)
			}
			lo := r.IntN(total - size + 1)
			hi := lo + size
			got := ix.count(c, m, lo, hi)
			modes[min(size/short, 1)]++
			self, weight, sum := make([]int64, n), make([]int64, n), make([]int64, n)
			for i := lo; i < hi; i++ {
				if !m.Keep(i) {
					continue
				}
				k := ix.leaf[i]
				self[k]++
				weight[k] += int64(c.Samples.Weight[i])
				for a := k; a >= 0; a = ix.parent[a] {
					sum[a]++
				}
			}
			if !slices.Equal(got.self, self) || !slices.Equal(got.weight, weight) || !slices.Equal(got.total, sum) {
				t.Fatalf("filter %+v, round %d, samples [%d, %d): the tally differs from counts made afresh", f, round, lo, hi)
			}
			ix.release(got)
		}
		if modes[0] == 0 || modes[1] == 0 {
			t.Errorf("filter %+v: %d short and %d long ranges; want both", f, modes[0], modes[1])
		}
	}
}
