package store

import (
	"math/rand/v2"
	"testing"
)

// TestRangeCoder codes random symbols, skewed as real ones are, in a few
// contexts and decodes them back, reading every byte written; a cut
// stream reads past its end.
func TestRangeCoder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 100 {
		n := r.IntN(3000)
		syms := make([]int, n)
		ctx := make([]int, n)
		for i := range syms {
			ctx[i] = r.IntN(3)
			if r.IntN(4) > ctx[i] {
				syms[i] = r.IntN(3)
			} else {
				syms[i] = r.IntN(treeProbs)
			}
		}
		e := newRangeEncoder()
		et := newBitTrees(3)
		for i, s := range syms {
			e.symbol(&et[ctx[i]], s)
		}
		b := e.bytes()
		d := newRangeDecoder(b)
		dt := newBitTrees(3)
		for i, s := range syms {
			if got := d.symbol(&dt[ctx[i]]); got != s {
				t.Fatalf("round %d symbol %d: %d; want %d", round, i, got, s)
			}
		}
		if !d.done() {
			t.Fatalf("round %d: read %d of %d bytes (bad %v)", round, d.at, len(b), d.bad)
		}
		if n > 100 {
			d := newRangeDecoder(b[:len(b)/2])
			dt := newBitTrees(3)
			for i := range syms {
				d.symbol(&dt[ctx[i]])
			}
			if !d.bad {
				t.Fatalf("round %d: a stream cut in half read within its bytes", round)
			}
		}
	}
}
