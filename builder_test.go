package subsecond

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInternerNodes checks Interner.Node against a map of (parent, frame)
// pairs on a tree with nodes of one child, of a few and of many (past
// wideKids, whose children move to the node table), and that an Interner
// made from another's tables finds the same nodes and adds the same new
// ones.
func TestInternerNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := NewInterner()
	type key struct{ parent, frame int32 }
	want := map[key]int32{}
	for range 200_000 {
		parent := int32(0)
		switch rng.IntN(4) {
		case 0: // the root and a few others: wide
			parent = int32(rng.IntN(min(len(in.Nodes), 4)))
		default:
			parent = int32(rng.IntN(len(in.Nodes)))
		}
		frame := int32(rng.IntN(3))
		if rng.IntN(8) == 0 {
			frame = int32(rng.IntN(64))
		}
		n := in.Node(parent, frame)
		k := key{parent, frame}
		if w, ok := want[k]; ok {
			if n != w {
				t.Fatalf("Node(%d, %d) = %d; was %d", parent, frame, n, w)
			}
			continue
		}
		if int(n) != len(in.Nodes)-1 || len(want) != len(in.Nodes)-2 {
			t.Fatalf("Node(%d, %d) = %d, new: want the next node, %d", parent, frame, n, len(want)+1)
		}
		want[k] = n
		if nd := in.Nodes[n]; nd.Parent != parent || nd.Frame != frame || nd.Depth != in.Nodes[parent].Depth+1 {
			t.Fatalf("node %d = %+v; want parent %d, frame %d, depth %d", n, nd, parent, frame, in.Nodes[parent].Depth+1)
		}
	}
	wideNodes := 0
	for _, l := range in.kids {
		if l.last == wide {
			wideNodes++
		}
	}
	if wideNodes < 4 || in.nodes.n == 0 {
		t.Errorf("%d wide nodes, %d children in the node table; want the root's and others' children there", wideNodes, in.nodes.n)
	}

	// An Interner over the same tables, as store.Encode makes one.
	again := &Interner{Strings: in.Strings, Frames: in.Frames, Nodes: slices.Clone(in.Nodes)}
	for k, n := range want {
		if got := again.Node(k.parent, k.frame); got != n {
			t.Fatalf("from tables: Node(%d, %d) = %d; want %d", k.parent, k.frame, got, n)
		}
	}
	if len(again.Nodes) != len(in.Nodes) {
		t.Fatalf("from tables: %d nodes after finding them all; want %d", len(again.Nodes), len(in.Nodes))
	}
	if n := again.Node(1, 1000); n != int32(len(in.Nodes)) {
		t.Errorf("from tables: a new node is %d; want %d", n, len(in.Nodes))
	}
}

// TestInternerFrames checks Interner.Rec against a map of frames that
// differ in one field at a time, and that an Interner made from another's
// tables finds the same frames and adds the same new ones.
func TestInternerFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := NewInterner()
	want := map[FrameRec]int32{}
	for range 100_000 {
		r := FrameRec{Symbol: uint32(rng.IntN(50)), DSO: uint32(rng.IntN(3)), Addr: uint64(rng.IntN(40)) << 4}
		switch rng.IntN(8) {
		case 0:
			r.SrcLine = uint32(rng.IntN(4))
		case 1:
			r.Kind = FrameKind(rng.IntN(5))
		case 2:
			r.Inline = true
		}
		i := in.Rec(r)
		if w, ok := want[r]; ok {
			if i != w {
				t.Fatalf("Rec(%+v) = %d; was %d", r, i, w)
			}
			continue
		}
		if int(i) != len(want) || len(in.Frames) != len(want)+1 || in.Frames[i] != r {
			t.Fatalf("Rec(%+v) = %d, new: want %d, holding it", r, i, len(want))
		}
		want[r] = i
	}
	again := &Interner{Strings: in.Strings, Frames: slices.Clone(in.Frames), Nodes: in.Nodes}
	for r, i := range want {
		if got := again.Rec(r); got != i {
			t.Fatalf("from tables: Rec(%+v) = %d; want %d", r, got, i)
		}
	}
	if n := again.Rec(FrameRec{Symbol: 1000}); int(n) != len(in.Frames) || len(again.Frames) != len(in.Frames)+1 {
		t.Errorf("from tables: a new frame is %d; want %d", n, len(in.Frames))
	}
}
