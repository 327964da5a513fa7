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

// TestNodes4Codes checks that random trees exercise every kind of format
// 4 code (so that TestSegmentsRoundTripRandom round-trips each).
func TestNodes4Codes(t *testing.T) {
	var far, up, esc, mtf, next int
	for seed := range uint64(20) {
		in := randomTree(rand.New(rand.NewPCG(seed, 24)), 400, 300)
		np := newNodePredictor(len(in.Frames), mtf4Len)
		encodeNodes4(in.Nodes, 1, len(in.Nodes), np)
		for i, n := range in.Nodes[1:] {
			if int(n.Parent) == i { // the node before it
				continue
			}
			x, k := int32(i), 0
			for ; x > 0 && x != n.Parent && k < farParent; k++ {
				x = in.Nodes[x].Parent
			}
			if x == n.Parent {
				up++
			} else {
				far++
			}
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
	if far == 0 || up == 0 || esc == 0 || mtf == 0 || next == 0 {
		t.Errorf("random tables' codes: %d far parents, %d ancestors, %d frames after the highest, %d recent, %d unpredicted; want each",
			far, up, next, mtf, esc)
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
