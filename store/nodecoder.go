package store

import (
	"math/bits"

	"github.com/subsecond/subsecond"
)

// Format 4 stack nodes segments hold five columns, each but the last
// behind its length in bytes:
//
//	runs     as in format 2: how many nodes in a row have the node just
//	         before them as their parent, before each node that has not,
//	         the last run perhaps ending the segment
//	parents  a byte per node that ends a run: c < farParent when its
//	         parent is the (c+1)-th ancestor of the node just before it,
//	         else farParent + b − 1 where b is the bit length of
//	         index − parent
//	pbits    the bits of those distances below their leading one, most
//	         significant first, packed in bytes, the last padded with zeros
//	frames   a code per node, range coded (rangecoder.go) in one of ten
//	         models: by the class of its parent's code (codeClass) and
//	         whether its parent is the node before it. 0 for the frame
//	         after the highest of the nodes before, k in 1..mtf4Len for
//	         the k-th most recent frame of a child of a node with the
//	         parent's frame, else mtf4Len + b where b is the bit length of
//	         frame + 1
//	fbits    the bits of those frame + 1 below their leading one, packed
//	         as pbits
//
// Format 3 wrote a far parent's distance and an unpredicted frame as
// varints, whose 3 bytes of a capture of 100,000 nodes zstd does not
// compress; their bit lengths, in a column of their own, it codes in a few
// bits, and the bits below carry what is left. The frame codes take 2.4
// bits a node range coded against 3.2 as zstd-compressed bytes on the real
// 27 s capture: a new frame's children are mostly new frames too, and a
// recent one's recent ones, which zstd's Huffman codes, a bit or more per
// symbol, cannot exploit.
const (
	farParent = 200
	mtf4Len   = 16
)

// bitWriter packs values' low bits, most significant first.
type bitWriter struct {
	b    []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) write(v uint64, n uint) {
	for n > 0 {
		k := min(n, 56-w.nacc)
		w.acc = w.acc<<k | (v>>(n-k))&(1<<k-1)
		w.nacc += k
		n -= k
		for w.nacc >= 8 {
			w.nacc -= 8
			w.b = append(w.b, byte(w.acc>>w.nacc))
		}
	}
}

// bytes returns what was written, the last byte padded with zeros.
func (w *bitWriter) bytes() []byte {
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
	return w.b
}

// bitReader reads what bitWriter wrote.
type bitReader struct {
	b   []byte
	at  uint // bits read
	bad bool
}

func (r *bitReader) read(n uint) uint64 {
	if r.at+n > uint(len(r.b))*8 {
		r.bad = true
		return 0
	}
	var v uint64
	for n > 0 {
		left := 8 - r.at%8 // bits left in the current byte
		k := min(left, n)
		v = v<<k | uint64(r.b[r.at/8]>>(left-k))&(1<<k-1)
		r.at += k
		n -= k
	}
	return v
}

// done reports whether every bit was read but the padding, which must be
// zeros.
func (r *bitReader) done() bool {
	if r.bad || (r.at+7)/8 != uint(len(r.b)) {
		return false
	}
	return r.at%8 == 0 || r.b[len(r.b)-1]<<(r.at%8) == 0
}

// writeLong writes v ≥ 1 as its bit length, returned, and the bits below
// its leading one to w.
func writeLong(w *bitWriter, v uint64) int {
	b := bits.Len64(v)
	w.write(v, uint(b-1))
	return b
}

// readLong reads the value of bit length b that writeLong wrote.
func readLong(r *bitReader, b int) uint64 {
	return 1<<(b-1) | r.read(uint(b-1))
}

// encodeNodes4 returns the columns of nodes [from, to) in format 4.
func encodeNodes4(nodes []subsecond.StackNode, from, to int, np *nodePredictor) [][]byte {
	var runs, lens enc
	parents := make([]byte, 0, (to-from)/4)
	frames := newRangeEncoder()
	var pbits, fbits bitWriter
	run := 0
	for i := from; i < to; i++ {
		n := &nodes[i]
		c := np.code4(nodes[n.Parent].Frame, n.Frame, &fbits)
		frames.symbol(np.tree(n.Parent, int32(i)), c)
		np.classes = append(np.classes, codeClass(c))
		if n.Parent == int32(i-1) {
			run++
			continue
		}
		x, up := int32(i-1), 0
		for x != n.Parent && x > 0 && up < farParent {
			x = nodes[x].Parent
			up++
		}
		runs.uvarint(uint64(run))
		if x == n.Parent {
			parents = append(parents, byte(up-1))
		} else {
			parents = append(parents, byte(farParent+writeLong(&pbits, uint64(int32(i)-n.Parent))-1))
		}
		run = 0
	}
	if run > 0 {
		runs.uvarint(uint64(run))
	}
	pb, fb := pbits.bytes(), frames.bytes()
	for _, c := range [][]byte{runs.b, parents, pb, fb} {
		lens.uvarint(uint64(len(c)))
	}
	return [][]byte{lens.b, runs.b, parents, pb, fb, fbits.bytes()}
}

// code4 returns the format 4 code of frame under a parent whose frame is
// pf (−1 for the root), writing the bits of an unpredicted one to w, and
// notes it.
func (p *nodePredictor) code4(pf, frame int32, w *bitWriter) int {
	row := p.row(pf)
	c := 0
	if frame != p.next {
		if k := index32(row, frame); k >= 0 {
			c = k + 1
		} else {
			c = p.rowLen + writeLong(w, uint64(frame)+1)
		}
	}
	p.note(row, frame)
	return c
}

// frame4 returns the frame of format 4 code c under a parent whose frame
// is pf, reading the bits of an unpredicted one from r, and notes it;
// false when c names no frame below limit.
func (p *nodePredictor) frame4(pf int32, c int, r *bitReader, limit int) (int32, bool) {
	row := p.row(pf)
	var f int64
	switch {
	case c == 0:
		f = int64(p.next)
	case c <= p.rowLen:
		f = int64(row[c-1])
	case c-p.rowLen <= 32:
		f = int64(readLong(r, c-p.rowLen)) - 1
	default:
		return 0, false
	}
	if f < 0 || f >= int64(limit) || r.bad {
		return 0, false
	}
	p.note(row, int32(f))
	return int32(f), true
}

// codeClass is the class of a node's frame code that the frame codes of
// its children are coded in the context of: after the highest (0), the
// most recent (1), another recent (2), unpredicted (3); 4 is the root's.
func codeClass(c int) byte {
	switch {
	case c <= 1:
		return byte(c)
	case c <= mtf4Len:
		return 2
	}
	return 3
}

// tree returns the model of the frame code of node i, whose parent is
// given: by the class of the parent's code and whether the parent is the
// node before it.
func (p *nodePredictor) tree(parent, i int32) *bitTree {
	k := 2 * int(p.classes[parent])
	if parent != i-1 {
		k++
	}
	return &p.trees[k]
}

func index32(s []int32, v int32) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// decodeNodes4 reads nodes [base, base+n) of format 4 from d into nodes,
// whose frames are below frames.
func decodeNodes4(d *dec, nodes []subsecond.StackNode, base, n, frames int, np *nodePredictor) {
	var cols [4][]byte
	var lens [4]int
	for k := range lens {
		lens[k] = d.length()
	}
	if d.err != nil {
		return
	}
	for k := range cols {
		if lens[k] > len(d.b) {
			d.fail("truncated stack nodes")
			return
		}
		cols[k], d.b = d.b[:lens[k]], d.b[lens[k]:]
	}
	runs, parents := dec{b: cols[0]}, cols[1]
	pbits, fbits := bitReader{b: cols[2]}, bitReader{b: d.b}
	codes := newRangeDecoder(cols[3])
	d.b = nil
	left := -1 // nodes left in the current run; -1: a run's length comes next
	for i := base; i < base+n; i++ {
		if left < 0 {
			left = runs.count(base + n - i)
			if runs.err != nil {
				d.fail("bad stack node runs")
				return
			}
		}
		x := int32(i - 1)
		if left > 0 {
			left--
			nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: nodes[x].Depth + 1}
			continue
		}
		if len(parents) == 0 {
			d.fail("truncated stack node parents")
			return
		}
		c := int(parents[0])
		parents = parents[1:]
		if c < farParent {
			for up := c + 1; up > 0; up-- {
				if x <= 0 {
					d.fail("stack node's parent above the root")
					return
				}
				x = nodes[x].Parent
			}
		} else if b := c - farParent + 1; b > 32 {
			d.fail("stack node's parent out of range")
			return
		} else if back := readLong(&pbits, b); pbits.bad || back > uint64(i) {
			d.fail("stack node's parent out of range")
			return
		} else {
			x = int32(i - int(back))
		}
		left = -1
		nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: nodes[x].Depth + 1}
	}
	if left > 0 || runs.end() != nil || len(parents) != 0 || !pbits.done() {
		d.fail("stack node parents do not match their count")
		return
	}
	for i := base; i < base+n; i++ {
		nd := &nodes[i]
		c := codes.symbol(np.tree(nd.Parent, int32(i)))
		fr, ok := np.frame4(nodes[nd.Parent].Frame, c, &fbits, frames)
		if !ok || codes.bad {
			d.fail("stack node's frame out of range")
			return
		}
		nd.Frame = fr
		np.classes = append(np.classes, codeClass(c))
	}
	if !fbits.done() || !codes.done() {
		d.fail("stack node frames' bits do not match their count")
	}
}
