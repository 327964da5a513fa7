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
		longs := make([]uint64, n)
		for i := range longs {
			longs[i] = r.Uint64() >> r.IntN(65) >> 32
		}
		e := newRangeEncoder()
		et, eb := newBitTrees(3), newByteTrees(1)
		for i, s := range syms {
			e.symbol(&et[ctx[i]], s)
			e.byteSym(&eb[0], byte(s*5))
			e.long(&et[2], longs[i])
		}
		b := e.bytes()
		d := newRangeDecoder(b)
		dt, db := newBitTrees(3), newByteTrees(1)
		for i, s := range syms {
			if got := d.symbol(&dt[ctx[i]]); got != s {
				t.Fatalf("round %d symbol %d: %d; want %d", round, i, got, s)
			}
			if got := d.byteSym(&db[0]); got != byte(s*5) {
				t.Fatalf("round %d byte %d: %d; want %d", round, i, got, byte(s*5))
			}
			if got, ok := d.long(&dt[2]); !ok || got != longs[i] {
				t.Fatalf("round %d long %d: %d, %v; want %d", round, i, got, ok, longs[i])
			}
		}
		if !d.done() {
			t.Fatalf("round %d: read %d of %d bytes (bad %v)", round, d.at, len(b), d.bad)
		}
		if n > 100 {
			d := newRangeDecoder(b[:len(b)/2])
			dt, db := newBitTrees(3), newByteTrees(1)
			for i := range syms {
				d.symbol(&dt[ctx[i]])
				d.byteSym(&db[0])
				d.long(&dt[2])
			}
			if !d.bad {
				t.Fatalf("round %d: a stream cut in half read within its bytes", round)
			}
		}
	}
}
