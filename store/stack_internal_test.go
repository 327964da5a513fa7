package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestStackCacheMatchesInterner feeds a stackCache stacks whose frames
// share their text at many addresses (as JIT code's "[unknown]" does),
// with source lines and kinds that differ at one address, across a
// forgetIDs, and checks that every stack gets the node Interner.Stack
// gives it, and that both build the same tables.
func TestStackCacheMatchesInterner(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in, ref := subsecond.NewInterner(), subsecond.NewInterner()
	c := newStackCache(in)
	type text struct{ sym, dso string }
	texts := []text{{"[unknown]", "/tmp/perf-1.map"}, {"main", "/bin/x"}, {"f", "/bin/x"}, {"[unknown]", "[unknown]"}}
	for i := range 40 {
		texts = append(texts, text{fmt.Sprintf("g%d", i), "/lib/y.so"})
	}
	var frames []subsecond.Frame
	var ids []uint32
	for n := range 20_000 {
		if n == 12_000 {
			c.forgetIDs() // the parser numbers its texts anew
		}
		frames, ids = frames[:0], ids[:0]
		for range 1 + rng.IntN(30) {
			id := rng.IntN(len(texts))
			if rng.IntN(2) == 0 {
				id = rng.IntN(4) // mostly the texts met at many addresses
			}
			f := subsecond.Frame{Addr: uint64(0x1000 + rng.IntN(64)*16), Symbol: texts[id].sym, DSO: texts[id].dso, Kind: subsecond.KindUser}
			switch rng.IntN(16) {
			case 0:
				f.SrcLine = fmt.Sprintf("a.c:%d", rng.IntN(3))
			case 1:
				f.Kind = subsecond.KindJIT
			}
			frames = append(frames, f)
			if n >= 12_000 {
				id = len(texts) - 1 - id // other IDs for the same texts
			}
			ids = append(ids, uint32(id))
		}
		got, want := c.stack(frames, ids, int32(rng.IntN(8))), ref.Stack(frames)
		if got != want {
			t.Fatalf("stack %d: node %d; Interner.Stack gives %d", n, got, want)
		}
	}
	if !slices.Equal(in.Strings, ref.Strings) || !slices.Equal(in.Frames, ref.Frames) || !slices.Equal(in.Nodes, ref.Nodes) {
		t.Errorf("tables differ: %d strings, %d frames, %d nodes; Interner.Stack's %d, %d, %d",
			len(in.Strings), len(in.Frames), len(in.Nodes), len(ref.Strings), len(ref.Frames), len(ref.Nodes))
	}
	if c.others.n < 1000 {
		t.Errorf("%d frames found by ID and address; want the many addresses of the shared texts there", c.others.n)
	}
}

// TestStackCacheForgetsIDs: once the parser numbers its texts anew, a
// thread's next stack is not taken for its previous one because their
// frames have the same IDs and addresses; nor is a frame with a source
// line taken for one without.
func TestStackCacheForgetsIDs(t *testing.T) {
	in, ref := subsecond.NewInterner(), subsecond.NewInterner()
	c := newStackCache(in)
	check := func(what string, frames []subsecond.Frame, ids []uint32) {
		t.Helper()
		if got, want := c.stack(frames, ids, 7), ref.Stack(frames); got != want {
			t.Fatalf("%s: node %d; Interner.Stack gives %d", what, got, want)
		}
	}
	main := subsecond.Frame{Addr: 0x10, Symbol: "main", DSO: "/bin/x", Kind: subsecond.KindUser}
	f := subsecond.Frame{Addr: 0x20, Symbol: "f", DSO: "/bin/x", Kind: subsecond.KindUser}
	g := subsecond.Frame{Addr: 0x20, Symbol: "g", DSO: "/bin/x", Kind: subsecond.KindUser}
	check("f", []subsecond.Frame{f, main}, []uint32{1, 0})
	c.forgetIDs()
	check("g, with f's ID", []subsecond.Frame{g, main}, []uint32{1, 0})
	withSrc := g
	withSrc.SrcLine = "x.c:3"
	check("g with a source line", []subsecond.Frame{withSrc, main}, []uint32{1, 0})
	check("g again", []subsecond.Frame{g, main}, []uint32{1, 0})
}
