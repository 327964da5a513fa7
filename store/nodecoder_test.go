package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestBits writes values of random bit lengths and reads them back; a
// reader refuses to read past the end and done refuses bits left unread
// or padding that is not zeros.
func TestBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var w bitWriter
		var vals []uint64
		var lens []uint
		for range r.IntN(40) {
			n := uint(r.IntN(33))
			v := r.Uint64() & (1<<n - 1)
			w.write(v, n)
			vals, lens = append(vals, v), append(lens, n)
		}
		b := w.bytes()
		total := uint(0)
		for _, n := range lens {
			total += n
		}
		if want := (total + 7) / 8; uint(len(b)) != want {
			t.Fatalf("%d bits took %d bytes; want %d", total, len(b), want)
		}
		rd := bitReader{b: b}
		for i, n := range lens {
			if got := rd.read(n); got != vals[i] {
				t.Fatalf("value %d: read %#x; want %#x (%d bits)", i, got, vals[i], n)
			}
		}
		if !rd.done() {
			t.Fatal("not done after reading every value")
		}
		if rd.read(8); !rd.bad {
			t.Fatal("read past the end")
		}
		if total%8 != 0 {
			bad := bytes.Clone(b)
			bad[len(bad)-1] |= 1 // a padding bit set
			rd := bitReader{b: bad}
			rd.read(total)
			if rd.done() {
				t.Fatal("padding with a one accepted")
			}
		}
		if total >= 8 { // (an unread zero in the last byte passes for padding)
			rd := bitReader{b: b}
			rd.read(total - 8)
			if rd.done() {
				t.Fatal("done with a byte unread")
			}
		}
	}
}

// randomTree returns tables of random stacks whose frames repeat under
// several callers: stacks branch from random nodes, most frames under a
// frame are drawn from a few callees of its own, some from all.
func randomTree(r *rand.Rand, stacks, depth int) *subsecond.Interner {
	in := subsecond.NewInterner()
	var frames []int32
	for i := range 300 {
		frames = append(frames, in.Frame(&subsecond.Frame{Symbol: fmt.Sprintf("f%d", i%200), DSO: "/bin/x", Addr: uint64(i) * 0x40}))
	}
	for range stacks {
		n := int32(r.IntN(len(in.Nodes)))
		for range 1 + r.IntN(depth) {
			f := frames[r.IntN(len(frames))]
			if pf := in.Nodes[n].Frame; pf >= 0 && r.IntN(8) > 0 {
				f = frames[(int(pf)*7+r.IntN(4))%len(frames)]
			}
			n = in.Node(n, f)
		}
	}
	return in
}

// TestNodesCodes checks that random trees exercise every kind of format
// 4 and 5 code (so that TestSegmentsRoundTripRandom round-trips each):
// far parents by index and, in format 5, by age.
func TestNodesCodes(t *testing.T) {
	var far, again, up, esc, mtf, next int
	for seed := range uint64(20) {
		in := randomTree(rand.New(rand.NewPCG(seed, 24)), 400, 300)
		np := newNodePredictor(len(in.Frames), mtf4Len)
		encodeNodes(in.Nodes, 1, len(in.Nodes), np, 5)
		wasParent := make([]bool, len(in.Nodes))
		for i, n := range in.Nodes[1:] {
			if int(n.Parent) == i { // the node before it
				continue
			}
			x, k := int32(i), 0
			for ; x > 0 && x != n.Parent && k < farParent; k++ {
				x = in.Nodes[x].Parent
			}
			switch {
			case x == n.Parent:
				up++
			case wasParent[n.Parent]:
				again++
			default:
				far++
			}
			wasParent[n.Parent] = true
		}
		for _, c := range np.classes[1:] {
			switch c {
			case 0:
				next++
			case 1, 2:
				mtf++
			default:
				esc++
			}
		}
	}
	if far == 0 || again == 0 || up == 0 || esc == 0 || mtf == 0 || next == 0 {
		t.Errorf("random tables' codes: %d far parents, %d far parents met before, %d ancestors, %d frames after the highest, %d recent, %d unpredicted; want each",
			far, again, up, next, mtf, esc)
	}
}

// TestNodesFormats encodes random trees in formats 4 and 5: both must
// decode to the tree, and format 5's parents (by age) must take fewer
// bytes than format 4's where far parents recur, as a thread's do.
func TestNodesFormats(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 24))
	in := randomTree(r, 100, 30)
	// Threads: each new stack branches from a node a recent stack of its
	// thread branched from, or from one of that stack's.
	tips := make([]int32, 8)
	for range 3000 {
		th := r.IntN(len(tips))
		n := tips[th]
		for range r.IntN(3) {
			if n > 0 {
				n = in.Nodes[n].Parent
			}
		}
		for range 1 + r.IntN(4) {
			n = in.Node(n, int32(r.IntN(len(in.Frames))))
		}
		if r.IntN(4) == 0 {
			tips[th] = n
		}
	}
	size := map[byte]int{}
	for _, f := range []byte{4, 5} {
		cols := encodeNodes(in.Nodes, 1, len(in.Nodes), newNodePredictor(len(in.Frames), mtf4Len), f)
		size[f] = len(cols[1]) + len(cols[2])
		d := dec{b: slices.Concat(cols...)}
		got := make([]subsecond.StackNode, len(in.Nodes))
		got[0] = in.Nodes[0]
		decodeNodes(&d, got, 1, len(in.Nodes)-1, len(in.Frames), newNodePredictor(len(in.Frames), mtf4Len), f)
		if d.err != nil {
			t.Fatalf("format %d: %v", f, d.err)
		}
		if !slices.Equal(got, in.Nodes) {
			t.Fatalf("format %d: nodes differ after a round trip", f)
		}
	}
	if size[5] >= size[4] {
		t.Errorf("parents take %d bytes in format 5; want fewer than format 4's %d", size[5], size[4])
	}
}

// TestStoredFrame stores columns as a zstd frame of raw blocks: it must
// decompress to their concatenation, whatever their size.
func TestStoredFrame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, sizes := range [][]int{{}, {0}, {5}, {5, 0, 7}, {128 << 10}, {128<<10 - 1, 2}, {300 << 10, 1}} {
		var cols [][]byte
		for _, n := range sizes {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			cols = append(cols, b)
		}
		stored := storedFrame(cols...)
		got, err := unzstd(nil, stored)
		if err != nil {
			t.Fatalf("%v: %v", sizes, err)
		}
		want := slices.Concat(cols...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%v: decompressed %d bytes, not the %d of the columns", sizes, len(got), len(want))
		}
		if extra := len(stored) - len(want); extra > 9+3*(len(want)/(128<<10)+1) {
			t.Errorf("%v: stored in %d bytes more than the columns'", sizes, extra)
		}
	}
}

// TestZstdColumns compresses columns as frames of their own: they must
// decompress to their concatenation, short ones joining the next frame.
func TestZstdColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	col := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(4))
		}
		return b
	}
	for _, sizes := range [][]int{{0}, {5}, {5, 0}, {0, 0, 0}, {3, 4000, 10, 20, 3000}, {300, 300, 7}, {1000, 1}} {
		var cols [][]byte
		for _, n := range sizes {
			cols = append(cols, col(n))
		}
		got, err := unzstd(nil, zstdColumns(cols...))
		if err != nil {
			t.Fatalf("%v: %v", sizes, err)
		}
		if want := slices.Concat(cols...); !bytes.Equal(got, want) {
			t.Fatalf("%v: decompressed %d bytes, not the %d of the columns", sizes, len(got), len(want))
		}
	}
}

// TestGrowFramesDoubles grows a predictor's rows as an import's node feed
// does, a few frames at a time, and counts the copies: doubled, 13 to
// reach 100,000 frames; grown by what was added, left to append's policy
// for large slices, as before, 33, and on the real 27 s capture's import
// 10 MB of copies.
func TestGrowFramesDoubles(t *testing.T) {
	p := newNodePredictor(0, mtf4Len)
	copies := 0
	for frames := 1; frames <= 100_000; frames += 7 {
		before := cap(p.mtf)
		p.growFrames(frames)
		if cap(p.mtf) != before {
			copies++
		}
		if want := (frames + 1) * p.rowLen; len(p.mtf) != want {
			t.Fatalf("%d frames: %d row entries, want %d", frames, len(p.mtf), want)
		}
		if got := p.row(int32(frames - 1)); got[0] != -1 || got[len(got)-1] != -1 {
			t.Fatalf("%d frames: the last row is %v, want it empty (-1)", frames, got)
		}
	}
	if copies > 20 {
		t.Errorf("the rows were copied %d times growing to 100,000 frames, want at most 20 (doubling)", copies)
	}
}
