package store

import (
	"math/bits"

	"github.com/subsecond/subsecond"
)

// Format 4 stack nodes segments hold four columns, each but the last
// behind its length in bytes: two streams of the range coder
// (rangecoder.go), each followed by the bits it leaves out, packed most
// significant first (bitWriter):
//
//	parents  before each node whose parent is not the node just before
//	         it, the number of nodes in a row before it that have (bit
//	         length in one model, then the bits below the leading one);
//	         then the node's parent, a byte in one of two models (whether
//	         the previous parent was far): c < farParent when it is the
//	         (c+1)-th ancestor of the node just before it, else
//	         farParent + b − 1 where b is the bit length of index −
//	         parent. The last run may end the segment without a parent
//	         after it.
//	pbits    the bits of those distances below their leading one
//	frames   a code per node, in one of ten models (smallModel): by the
//	         class of its parent's code (codeClass) and whether its parent
//	         is the node before it. 0 for the frame after the highest of the
//	         nodes before, k in 1..mtf4Len for the k-th most recent frame of
//	         a child of a node with the parent's frame, else mtf4Len + b
//	         where b is the bit length of frame + 1
//	fbits    the bits of those frame + 1 below their leading one
//
// (The range coder's direct bits would cost as much and take longer to
// decode.)
//
// Format 3 wrote a far parent's distance and an unpredicted frame as
// varints, whose 3 bytes of a capture of 100,000 nodes zstd does not
// compress, and the other codes as bytes that zstd's Huffman codes in a
// bit or more each. On the real 27 s capture the frame codes take 2.4
// bits a node range coded against 3.2 as zstd-compressed bytes: a new
// frame's children are mostly new frames too, and a recent one's recent
// ones.
const (
	farParent = 200
	mtf4Len   = 16
)

// Format 5 stack nodes segments are format 4's but for three things. A far
// parent that was a parent before (of a node whose parent is not the node
// just before it) may be coded as its age instead, farAge + a − 1 where a
// is the bit length of the number of such nodes since it last was (its
// bits below the leading one in pbits), whichever of the two bit lengths
// is shorter: a new stack of a thread mostly branches where one of the
// same thread branched lately, while the node it branches from was made
// long ago. Parents are coded in one of three models, by whether the
// previous parent was near, far by index or far by age. And the columns
// are stored as they are, not compressed (storedFrame): zstd finds nothing
// in the range coder's output or in raw bits, and took as long to find
// it as the range coder to code them. And the models are finer: run
// lengths by the kind of the parent before them, frame codes also by how
// many recent child frames the parent's frame has (see tree).
//
// On the real 27 s capture (22,546 far parents in 161,452 nodes, 28,817
// parents coded in all) the parents, runs and their bits take 57.6 KB
// instead of 63.9 KB, the frame codes 43.4 KB instead of 47.3 KB: the
// nodes segment 125.8 KB instead of 136.1 KB.
const (
	farAge     = farParent + 32
	maxAgeBits = 256 - farAge
)

// encodeNodes returns the columns of nodes [from, to) in format 4 or 5.
func encodeNodes(nodes []subsecond.StackNode, from, to int, np *nodePredictor, format byte) [][]byte {
	c := newNodeCoder(np, from, format)
	c.add(nodes, to)
	return c.cols()
}

// nodeCoder codes the nodes of one segment, from its first on, as many at
// a time as are given (add): the range coders keep their state between
// calls, so the columns are those of coding them all at once.
type nodeCoder struct {
	np              *nodePredictor
	format          byte
	from, at        int // the segment's first node, the next to code
	parents, frames *rangeEncoder
	pbits, fbits    bitWriter
	run             int
}

func newNodeCoder(np *nodePredictor, from int, format byte) *nodeCoder {
	return &nodeCoder{np: np, format: format, from: from, at: from, parents: newRangeEncoder(), frames: newRangeEncoder()}
}

// add codes nodes [c.at, to); nodes may have grown since the last call
// (their frames below those np was grown for).
func (c *nodeCoder) add(nodes []subsecond.StackNode, to int) {
	np, format := c.np, c.format
	if format >= 5 {
		np.lastParent = grown(np.lastParent, len(nodes), 0)
	}
	for i := c.at; i < to; i++ {
		n := &nodes[i]
		pf := nodes[n.Parent].Frame
		code := np.code4(pf, n.Frame, c.frames, &c.fbits, np.tree(n.Parent, int32(i), pf, format))
		np.classes = append(np.classes, codeClass(code))
		if n.Parent == int32(i-1) {
			c.run++
			continue
		}
		x, up := int32(i-1), 0
		for x != n.Parent && x > 0 && up < farParent {
			x = nodes[x].Parent
			up++
		}
		c.parents.long(np.runModel(format), uint64(c.run))
		pt := &np.parentTrees[np.farBefore]
		if x == n.Parent {
			c.parents.byteSym(pt, byte(up-1))
			np.farBefore = 0
		} else {
			d := uint64(int32(i) - n.Parent)
			b := bits.Len64(d)
			k := farParent + b - 1
			np.farBefore = 1
			if format >= 5 {
				if last := np.lastParent[n.Parent]; last > 0 {
					age := uint64(np.branches + 1 - last)
					if a := bits.Len64(age); a <= b && a <= maxAgeBits {
						d, b, k = age, a, farAge+a-1
						np.farBefore = 2
					}
				}
			}
			c.parents.byteSym(pt, byte(k))
			c.pbits.write(d, uint(b-1))
		}
		if format >= 5 {
			np.branches++
			np.lastParent[n.Parent] = np.branches
		}
		c.run = 0
	}
	c.at = max(c.at, to)
}

// cols ends the segment and returns its columns.
func (c *nodeCoder) cols() [][]byte {
	if c.run > 0 {
		c.parents.long(c.np.runModel(c.format), uint64(c.run))
	}
	var lens enc
	pr, pb, fr := c.parents.bytes(), c.pbits.bytes(), c.frames.bytes()
	for _, col := range [][]byte{pr, pb, fr} {
		lens.uvarint(uint64(len(col)))
	}
	return [][]byte{lens.b, pr, pb, fr, c.fbits.bytes()}
}

// nodeStream codes a profile's stack nodes into format 5 segments as an
// import's merge makes them, so that the import waits at its end only for
// the nodes of its last blocks: the same segments as encodeNodeSegments
// makes of the whole table.
type nodeStream struct {
	np   *nodePredictor
	segs []Segment
	cur  *nodeCoder // the open segment; nil when none
	next int        // the next node to code
}

func newNodeStream() *nodeStream {
	return &nodeStream{np: newNodePredictor(0, mtf4Len), next: 1}
}

// add codes the nodes made since the last call: nodes is the table so far
// (appended to, never changed), whose frames are below frames.
func (s *nodeStream) add(nodes []subsecond.StackNode, frames int) {
	s.np.growFrames(frames)
	for s.next < len(nodes) {
		if s.cur == nil {
			s.cur = newNodeCoder(s.np, s.next, 5)
		}
		end := s.cur.from + segmentEntries
		to := min(len(nodes), end)
		s.cur.add(nodes, to)
		s.next = to
		if to == end {
			s.emit()
		}
	}
}

func (s *nodeStream) emit() {
	cols := s.cur.cols()
	s.segs = emitSegment(s.segs, SegNodes, 5, s.cur.from, s.cur.at-s.cur.from, len(cols)+1, cols...)
	s.cur = nil
}

// finish codes what is left of nodes and returns the segments.
func (s *nodeStream) finish(nodes []subsecond.StackNode, frames int) []Segment {
	s.add(nodes, frames)
	if s.cur != nil {
		s.emit()
	}
	return s.segs
}

// code4 codes frame under a parent whose frame is pf (−1 for the root)
// to e in model t, notes it and returns its code.
func (p *nodePredictor) code4(pf, frame int32, e *rangeEncoder, w *bitWriter, t *smallModel) int {
	row := p.row(pf)
	c, b := 0, 0
	if frame != p.next {
		if k := index32(row, frame); k >= 0 {
			c = k + 1
		} else {
			b = bits.Len64(uint64(frame) + 1)
			c = p.rowLen + b
		}
	}
	e.small(t, c)
	w.write(uint64(frame)+1, uint(max(b-1, 0)))
	p.note(row, frame)
	return c
}

// frame4 reads from d in model t the code of a frame under a parent whose
// frame is pf, notes the frame and returns it with its code; false when it
// names no frame below limit.
func (p *nodePredictor) frame4(pf int32, d *rangeDecoder, r *bitReader, t *smallModel, limit int) (int32, int, bool) {
	row := p.row(pf)
	c := d.small(t)
	var f int64
	switch {
	case c == 0:
		f = int64(p.next)
	case c <= p.rowLen:
		f = int64(row[c-1])
	case c-p.rowLen <= 32:
		b := c - p.rowLen
		f = int64(1<<(b-1)|r.read(uint(b-1))) - 1
	default:
		return 0, 0, false
	}
	if f < 0 || f >= int64(limit) || d.bad || r.bad {
		return 0, 0, false
	}
	p.note(row, int32(f))
	return int32(f), c, true
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

// tree returns the model of the frame code of node i, whose parent and
// its frame pf are given: by the class of the parent's code and whether
// the parent is the node before it, and in format 5 by how many recent
// child frames pf has (none, 1, 2 or 3, 4 to 15, 16): a frame's first
// child is new or unpredicted, a frame's only child's sibling mostly new.
func (p *nodePredictor) tree(parent, i, pf int32, format byte) *smallModel {
	k := 2 * int(p.classes[parent])
	if parent != i-1 {
		k++
	}
	if format < 5 {
		return &p.trees[k]
	}
	row := p.row(pf) // filled from the front
	n := 4
	switch {
	case row[0] < 0:
		n = 0
	case row[1] < 0:
		n = 1
	case row[3] < 0:
		n = 2
	case row[mtf4Len-1] < 0:
		n = 3
	}
	return &p.trees[10+5*k+n]
}

// runModel is the model of run lengths: format 4's one, or in format 5
// one per kind of the parent before the run (near, far by index, by age).
func (p *nodePredictor) runModel(format byte) *bitTree {
	if format < 5 {
		return &p.runTree
	}
	return &p.runTrees[p.farBefore]
}

func index32(s []int32, v int32) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// decodeNodes reads nodes [base, base+n) of format 4 or 5 from d into
// nodes, whose frames are below frames.
func decodeNodes(d *dec, nodes []subsecond.StackNode, base, n, frames int, np *nodePredictor, format byte) {
	var cols [3][]byte
	var lens [3]int
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
	parents, pbits, codes, fbits := newRangeDecoder(cols[0]), bitReader{b: cols[1]}, newRangeDecoder(cols[2]), bitReader{b: d.b}
	d.b = nil
	left := -1 // nodes left in the current run; -1: a run's length comes next
	for i := base; i < base+n; i++ {
		if left < 0 {
			v, ok := parents.long(np.runModel(format))
			if !ok || v > uint64(base+n-i) || parents.bad {
				d.fail("bad stack node runs")
				return
			}
			left = int(v)
		}
		x := int32(i - 1)
		if left > 0 {
			left--
			nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: nodes[x].Depth + 1}
			continue
		}
		c := int(parents.byteSym(&np.parentTrees[np.farBefore]))
		if format >= 5 && c >= farAge {
			a := c - farAge + 1
			age := 1<<(a-1) | pbits.read(uint(a-1))
			if pbits.bad || age > uint64(len(np.byAge)) {
				d.fail("stack node's parent out of range")
				return
			}
			np.farBefore = 2
			x = np.byAge[uint64(len(np.byAge))-age]
		} else if c < farParent {
			np.farBefore = 0
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
		} else if back := 1<<(b-1) | pbits.read(uint(b-1)); pbits.bad || back > uint64(i) {
			d.fail("stack node's parent out of range")
			return
		} else {
			np.farBefore = 1
			x = int32(i - int(back))
		}
		if format >= 5 {
			np.byAge = append(np.byAge, x)
		}
		left = -1
		nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: nodes[x].Depth + 1}
	}
	if !parents.done() || !pbits.done() {
		d.fail("stack node parents do not match their count")
		return
	}
	for i := base; i < base+n; i++ {
		nd := &nodes[i]
		pf := nodes[nd.Parent].Frame
		fr, c, ok := np.frame4(pf, codes, &fbits, np.tree(nd.Parent, int32(i), pf, format), frames)
		if !ok {
			d.fail("stack node's frame out of range")
			return
		}
		nd.Frame = fr
		np.classes = append(np.classes, codeClass(c))
	}
	if !codes.done() || !fbits.done() {
		d.fail("stack node frames' bytes do not match their count")
	}
}

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
