package store

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/subsecond/subsecond"
)

// A profile's interned tables (subsecond.Interner: strings, frames, stack
// prefix-tree nodes) are stored as segments, each a zstd-compressed run of
// consecutive entries behind a format byte, the index of its first entry
// and their count. Strings start from index 1 ("" is index 0, implied),
// nodes too (the root is implied).
//
// Formats 4 and 5 are those of stack nodes segments (see nodecoder.go),
// which are written in format 5; format 4 that of frames segments (see
// framecoder.go), which code their symbols, DSOs and addresses with the
// range coder; strings segments are still written in format 3. Every
// segment's columns are compressed as zstd frames of their own
// (zstdColumns), at zstd's "better" level, except those of the range coder
// and the raw bits beside them, which are stored (storedFrame). On the
// real 27 s capture (161,452 nodes) format 4 took the nodes from 171 KB to
// 137 KB (range coded; far parents 3 bytes each -> 15 bits, unpredicted
// frames 3 bytes -> 9 bits, 16 recent frames per parent frame, the frame
// codes 64 KB -> 49 KB), the columns' frames the frames from 118 KB to 108
// KB, the level the strings from 54 KB to 52 KB: the segments from 343 KB
// to 297 KB. Nodes in format 5 (126 KB) and frames in format 4 (99 KB)
// take them to 276 KB.
//
// Format 3 stores a segment's entries column by column, each value
// predicted from the entries before it (in the segment and the segments of
// its kind before it):
//
//	strings  the number of strings that hold a NUL byte, then for each
//	         its index after the previous one's (or the segment's first)
//	         and its length, then the strings' bytes, each followed by a
//	         NUL byte (a separator costs zstd less than a length)
//	frames   symbols, DSOs, source lines (string indexes), kind bytes,
//	         then the addresses (see frameCoder). A frame's caller is the
//	         frame of the parent of the first node with it; frames
//	         segments are decoded after the nodes. A symbol is 0 when it
//	         is the string after the highest a frame used so far, k in
//	         1..afterLen when it is the k-th most recent callee of its
//	         caller's symbol, then the rank among the recentSyms most
//	         recent symbols, else symbol + afterLen + recentSyms + 1. A DSO
//	         is 0 when it is that of the latest frame of the symbol (for a
//	         symbol's first frame, of the frame before), 1 for the string
//	         after the highest used, else DSO + 2. A kind byte, kind |
//	         rawAddrBit | inline<<7, is stored xor the latest of the same
//	         DSO. Addresses are the number of whole ones, those as 8 bytes
//	         little-endian, then the others as the zig-zag difference from
//	         the address of the latest frame of the same symbol and DSO,
//	         else of the DSO.
//	nodes    as in format 2.
//
// Format 2 stored nodes as format 3 does, strings as their lengths, then
// their bytes, and frames as their symbols, DSOs
// and source lines (string indexes), addresses, then a byte of kind |
// inline<<7 each; an address was the zig-zag difference from the address
// of the latest frame of the same symbol, or for a symbol's first frame of
// the same DSO. Its nodes are parents, then frames. Parents are pairs: how
// many nodes in a row have the node just before them as their parent (a
// new stack's nodes are made in a row), then the parent of the next node,
// 2u when it is the u-th ancestor (1 ≤ u ≤ maxUp) of the node just before
// it, else 2(index − parent) − 1; the last run may end the segment without
// a parent after it. A frame is 0 when it is the one after the highest
// frame of the nodes before (a call site met for the first time), k in
// 1..mtfLen when it is the k-th most recent frame of a child of a node
// with the parent's frame, else frame + mtfLen + 1.
//
// On the real 27 s capture with deep stacks (47,290 samples, 31,506
// frames, 161,452 nodes) format 2 took the compressed segments from 516 KB
// to 395 KB: frames 208 KB -> 164 KB, nodes 247 KB -> 171 KB, strings 60 KB
// either way; format 3 takes frames to 118 KB (symbols 45 -> 19 KB, whole
// addresses of broken unwinds 39 -> 29 KB, kinds 7 -> 1 KB) and strings to
// 54 KB. See TestSegmentFormats for the bytes.
//
// Format 1 stored the entries row by row: strings as length-prefixed bytes;
// frames as symbol, dso, srcline (string indexes), addr, kind byte, inline
// byte; nodes as index − parent (≥ 1), frame. It is still read.
//
// Rows per entry cost more than the entries themselves and a round trip
// each when loaded; a few blobs are read in one query and decoded in
// place.

// segmentBytes bounds a segment's encoded size before compression: its
// strings' bytes, or its frames and nodes at most this many entries.
const segmentBytes = 8 << 20

// segmentEntries bounds the frames or nodes of one segment (at most about
// 40 and 10 bytes each before compression).
const segmentEntries = 1 << 18

// maxUp is the furthest ancestor of the previous node a parent is written
// as; mtfLen is how many recent child frames are kept per parent frame.
const (
	maxUp  = 64
	mtfLen = 8
)

// encodeSegments returns the segments of in's tables: strings in format
// 3, frames in format 4, nodes in format 5. The three tables are encoded
// at once, each in a goroutine of its own (frames and nodes are most of
// a deep capture's cost), and their segments listed in that order.
func encodeSegments(in *subsecond.Interner) []Segment { return encodeSegmentsWith(in, nil) }

// encodeSegmentsWith is encodeSegments, the frames' and nodes' segments
// those streamed returns when it is not nil (an import's, coded as they
// were made: see tableFeed).
func encodeSegmentsWith(in *subsecond.Interner, streamed func() (frames, nodes []Segment)) []Segment {
	var frames, nodes []Segment
	var wg sync.WaitGroup
	if streamed != nil {
		wg.Go(func() { frames, nodes = streamed() })
	} else {
		wg.Go(func() { frames = encodeFrames(in) })
		wg.Go(func() { nodes = encodeNodeSegments(in) })
	}
	segs := encodeStringSegments(in)
	wg.Wait()
	return append(append(segs, frames...), nodes...)
}

// emitSegment appends to segs a segment of kind: a header (format, first
// entry, count) and columns, each compressed with zstd but the last
// stored of them (and the header, when all are), which are stored as
// they are. Segments of one kind are numbered from 0 in segs.
func emitSegment(segs []Segment, kind SegmentKind, format byte, first, n, stored int, cols ...[]byte) []Segment {
	h := enc{}
	h.byte(format)
	h.uvarint(uint64(first))
	h.uvarint(uint64(n))
	seq := int32(0)
	if len(segs) > 0 && segs[len(segs)-1].Kind == kind {
		seq = segs[len(segs)-1].Seq + 1
	}
	all := append([][]byte{h.b}, cols...)
	k := len(all) - min(stored, len(all))
	data := zstdColumns(all[:k]...)
	if k < len(all) {
		data = append(data, storedFrame(all[k:]...)...)
	}
	return append(segs, Segment{Kind: kind, Seq: seq, Data: data})
}

// encodeStringSegments returns the strings' segments, in format 3.
func encodeStringSegments(in *subsecond.Interner) []Segment {
	var segs []Segment
	// Strings end in a NUL byte, except those holding one, which are
	// listed first with their lengths.
	var nuls, body enc
	var listed []uint64
	first := 1
	flush := func(to int) {
		nuls.uvarint(uint64(len(listed) / 2))
		for _, v := range listed {
			nuls.uvarint(v)
		}
		segs = emitSegment(segs, SegStrings, 3, first, to-first, 0, nuls.b, body.b)
		nuls, body, listed, first = enc{}, enc{}, listed[:0], to
	}
	last := first // the index after the latest string listed
	for i := 1; i < len(in.Strings); i++ {
		s := in.Strings[i]
		if strings.IndexByte(s, 0) >= 0 {
			listed = append(listed, uint64(i-max(last, first)), uint64(len(s)))
			last = i + 1
		}
		body.b = append(append(body.b, s...), 0)
		if len(body.b) >= segmentBytes || i+1-first >= segmentEntries {
			flush(i + 1)
		}
	}
	if first < len(in.Strings) {
		flush(len(in.Strings))
	}
	return segs
}

// encodeFrames returns the frames' segments, in format 4.
func encodeFrames(in *subsecond.Interner) []Segment {
	return newFrameStream().finish(len(in.Strings), in.Frames, in.Nodes)
}

// encodeNodeSegments returns the stack nodes' segments, in format 5.
func encodeNodeSegments(in *subsecond.Interner) []Segment {
	return newNodeStream().finish(in.Nodes, len(in.Frames))
}

// packSegments returns segs as SegPacked segments, each a run of them
// while it holds at most segmentBytes (or one, when larger): a format
// byte (1), their count, then per segment its kind, its Seq, its length
// (uvarints) and its data. A profile's tables are one row of a few
// hundred KB rather than one per kind: in SQLite, each row keeps the
// part of it that does not fill whole overflow pages in the table's
// b-tree leaves, where the three of a profile, up to 4 KB each, take a
// leaf or two of their own (on the real 27 s capture, 276 KB of
// segments took 68 pages as three rows, 67 as one).
func packSegments(segs []Segment) []Segment {
	var out []Segment
	for len(segs) > 0 {
		n, size := 0, 0
		for n < len(segs) && (n == 0 || size+len(segs[n].Data) <= segmentBytes) {
			size += len(segs[n].Data)
			n++
		}
		e := enc{b: make([]byte, 0, size+16*n+8)}
		e.byte(1)
		e.uvarint(uint64(n))
		for _, s := range segs[:n] {
			e.uvarint(uint64(s.Kind))
			e.uvarint(uint64(s.Seq))
			e.bytes(s.Data)
		}
		out = append(out, Segment{Kind: SegPacked, Seq: int32(len(out)), Data: e.b})
		segs = segs[n:]
	}
	return out
}

// unpackSegments returns segs with each SegPacked segment replaced by
// the segments it holds, which share its data.
func unpackSegments(segs []Segment) ([]Segment, error) {
	if !slices.ContainsFunc(segs, func(s Segment) bool { return s.Kind == SegPacked }) {
		return segs, nil
	}
	var out []Segment
	for _, s := range segs {
		if s.Kind != SegPacked {
			out = append(out, s)
			continue
		}
		d := dec{b: s.Data}
		if f := d.byte(); f != 1 && d.err == nil {
			d.fail(fmt.Sprintf("packed segments format %d", f))
		}
		n := d.count(len(s.Data) / 3) // a segment takes 3 bytes at least
		for range n {
			k, seq := d.uvarint(), d.uvarint()
			data := d.bytes()
			if d.err != nil {
				break
			}
			if k == uint64(SegPacked) || k > math.MaxInt32 || seq > math.MaxInt32 {
				d.fail(fmt.Sprintf("packed segment of kind %d, seq %d", k, seq))
				break
			}
			out = append(out, Segment{Kind: SegmentKind(k), Seq: int32(seq), Data: data})
		}
		if err := d.end(); err != nil {
			return nil, fmt.Errorf("table segment %d/%d: %w", s.Kind, s.Seq, err)
		}
	}
	return out, nil
}

// zigzag maps signed values of small magnitude to small unsigned ones.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// framePredictor predicts a frame's address from the frames before it:
// the latest address of its symbol, else of its DSO, else 0. Strings are
// indexes below the size it was made for.
type framePredictor struct {
	bySym, byDSO []uint64
	symSet       []bool
}

func newFramePredictor(strings int) *framePredictor {
	return &framePredictor{bySym: make([]uint64, strings), byDSO: make([]uint64, strings), symSet: make([]bool, strings)}
}

func (p *framePredictor) predict(sym, dso uint32) uint64 {
	if p.symSet[sym] {
		return p.bySym[sym]
	}
	return p.byDSO[dso]
}

func (p *framePredictor) seen(sym, dso uint32, addr uint64) {
	p.bySym[sym], p.symSet[sym], p.byDSO[dso] = addr, true, addr
}

// nodePredictor codes a node's frame from the nodes before it (see the
// format above).
type nodePredictor struct {
	next   int32   // the frame after the highest used so far
	rowLen int     // recent child frames kept per parent frame: mtfLen, or mtf4Len in formats 4 and 5
	mtf    []int32 // per parent frame + 1 (0: the root), its recent child frames, most recent first; -1 when none

	// Formats 4 and 5: models of frame codes, run lengths and parents,
	// whether the latest parent was near, far by index or (format 5) far
	// by age, and per node the class of its frame's code (see codeClass).
	trees       []smallModel
	runTree     bitTree
	runTrees    [3]bitTree
	parentTrees [3]byteTree
	farBefore   int
	classes     []byte

	// Format 5's ages of parents: per node, 1 + the number of parents
	// coded before it was last one (0: never), as the encoder keeps them;
	// the parents in the order coded, as the decoder keeps them.
	branches   int32
	lastParent []int32
	byAge      []int32
}

func newNodePredictor(frames, rowLen int) *nodePredictor {
	p := &nodePredictor{rowLen: rowLen, trees: newSmallModels(10 + 5*10), classes: []byte{4}}
	p.runTree = newBitTrees(1)[0]
	p.runTrees = [3]bitTree(newBitTrees(3))
	p.parentTrees = [3]byteTree(newByteTrees(3))
	p.growFrames(frames)
	return p
}

// frame returns the frame of code c under a parent whose frame is pf, and
// notes it; false when c names no frame below limit.
func (p *nodePredictor) frame(pf int32, c uint64, limit int) (int32, bool) {
	row := p.row(pf)
	var f int64
	switch {
	case c == 0:
		f = int64(p.next)
	case c <= mtfLen:
		f = int64(row[c-1])
	default:
		f = int64(c - mtfLen - 1)
	}
	if f < 0 || f >= int64(limit) {
		return 0, false
	}
	p.note(row, int32(f))
	return int32(f), true
}

// note moves frame to the front of row and raises next past it.
func (p *nodePredictor) note(row []int32, frame int32) {
	k := slices.Index(row, frame)
	if k < 0 {
		k = len(row) - 1
	}
	copy(row[1:k+1], row[:k])
	row[0] = frame
	if frame >= p.next {
		p.next = frame + 1
	}
}

// decodeSegments rebuilds the tables of c from segs, which must be ordered
// by kind and sequence and hold every entry exactly once.
func decodeSegments(segs []Segment, c *subsecond.Capture) error {
	segs, err := unpackSegments(segs)
	if err != nil {
		return err
	}
	c.Strings = []string{""}
	c.Frames = nil
	c.Nodes = []subsecond.StackNode{{Parent: -1, Frame: -1}}
	var buf []byte
	var fp *framePredictor
	type pending struct {
		s        Segment
		d        dec
		from, to int
		format   byte
	}
	var later []pending
	var np, np4, np5 *nodePredictor
	for _, s := range segs {
		raw, err := unzstd(buf[:0], s.Data)
		if err != nil {
			return fmt.Errorf("table segment %d/%d: %w", s.Kind, s.Seq, err)
		}
		buf = raw
		d := dec{b: raw}
		f := d.byte()
		if (f < 1 || f > segmentFormat) && d.err == nil {
			return fmt.Errorf("table segment %d/%d: %w: format %d", s.Kind, s.Seq, errCorrupt, f)
		}
		first := d.uvarint()
		n := d.count(max(len(raw), segmentEntries)) // format 4's nodes may take less than a byte each
		switch {
		case s.Kind == SegStrings && f == 1:
			if first != uint64(len(c.Strings)) {
				d.fail("strings segment out of order")
			}
			// One string holds the segment; entries are substrings of it.
			all, size := string(d.b), len(d.b)
			for range n {
				l := d.length()
				if d.err != nil {
					break
				}
				at := size - len(d.b)
				c.Strings = append(c.Strings, all[at:at+l])
				d.b = d.b[l:]
			}
		case s.Kind == SegStrings && f == 3:
			if first != uint64(len(c.Strings)) {
				d.fail("strings segment out of order")
			}
			listed := make([][2]int, d.count(n)) // the index in the segment and length of each string that holds a NUL byte
			from := 0
			for j := range listed {
				if from >= n {
					d.fail("more strings with NUL bytes than strings")
					break
				}
				i := from + d.count(n-1-from)
				listed[j] = [2]int{i, d.count(len(raw))}
				from = i + 1
			}
			if d.err != nil {
				break
			}
			all := string(d.b) // one string holds the segment; entries are substrings of it
			at := 0
			for i := range n {
				l := strings.IndexByte(all[at:], 0)
				if len(listed) > 0 && listed[0][0] == i {
					l, listed = listed[0][1], listed[1:]
				}
				if l < 0 || at+l >= len(all) || all[at+l] != 0 {
					d.fail("strings do not end in NUL bytes")
					break
				}
				c.Strings = append(c.Strings, all[at:at+l])
				at += l + 1
			}
			if d.err == nil && (at != len(all) || len(listed) > 0) {
				d.fail("strings and their bytes do not match")
			}
			d.b = nil
		case s.Kind == SegStrings && f == 2:
			if first != uint64(len(c.Strings)) {
				d.fail("strings segment out of order")
			}
			lens := make([]int, n)
			total := 0
			for i := range lens {
				lens[i] = d.count(len(raw))
				total += lens[i]
			}
			if d.err == nil && total != len(d.b) {
				d.fail("strings' lengths do not add up to their bytes")
			}
			if d.err != nil {
				break
			}
			all := string(d.b) // one string holds the segment; entries are substrings of it
			at := 0
			for _, l := range lens {
				c.Strings = append(c.Strings, all[at:at+l])
				at += l
			}
			d.b = nil
		case s.Kind == SegFrames && f == 1:
			if first != uint64(len(c.Frames)) {
				d.fail("frames segment out of order")
			}
			ns := len(c.Strings)
			for range n {
				f := subsecond.FrameRec{Symbol: uint32(d.index(ns)), DSO: uint32(d.index(ns)), SrcLine: uint32(d.index(ns)),
					Addr: d.uvarint(), Kind: subsecond.FrameKind(d.byte())}
				inl := d.byte()
				if inl > 1 || f.Kind > subsecond.KindInlined {
					d.fail("bad frame kind")
				}
				f.Inline = inl == 1
				c.Frames = append(c.Frames, f)
			}
		case s.Kind == SegFrames && (f == 3 || f == 4):
			// The frames are read after the nodes, which give each its
			// caller.
			if first != uint64(len(c.Frames)) {
				d.fail("frames segment out of order")
			}
			if per := 7 - int(f); n > len(d.b)/per { // each frame takes at least 4 bytes in format 3, 3 in format 4
				d.fail("more frames than bytes")
				break
			}
			later = append(later, pending{s, d, len(c.Frames), len(c.Frames) + n, f})
			c.Frames = slices.Grow(c.Frames, n)[:len(c.Frames)+n]
			buf, d.b = nil, nil // the pending segment keeps raw
		case s.Kind == SegFrames && f == 2:
			if first != uint64(len(c.Frames)) {
				d.fail("frames segment out of order")
			}
			if fp == nil {
				fp = newFramePredictor(len(c.Strings))
			}
			if n > len(d.b)/5 { // each frame takes at least 5 bytes
				d.fail("more frames than bytes")
				break
			}
			base := len(c.Frames)
			c.Frames = slices.Grow(c.Frames, n)[:base+n]
			fs := c.Frames[base:]
			ns := len(c.Strings)
			for i := range fs {
				fs[i].Symbol = uint32(d.index(ns))
			}
			for i := range fs {
				fs[i].DSO = uint32(d.index(ns))
			}
			for i := range fs {
				fs[i].SrcLine = uint32(d.index(ns))
			}
			if d.err != nil {
				break
			}
			for i := range fs {
				fr := &fs[i]
				fr.Addr = fp.predict(fr.Symbol, fr.DSO) + uint64(unzigzag(d.uvarint()))
				fp.seen(fr.Symbol, fr.DSO, fr.Addr)
			}
			for i := range fs {
				k := d.byte()
				fs[i].Kind, fs[i].Inline = subsecond.FrameKind(k&^(1<<7)), k&(1<<7) != 0
				if fs[i].Kind > subsecond.KindInlined {
					d.fail("bad frame kind")
				}
			}
		case s.Kind == SegNodes && (f == 4 || f == 5):
			if first != uint64(len(c.Nodes)) {
				d.fail("nodes segment out of order")
			}
			p := &np4
			if f == 5 {
				p = &np5
			}
			if *p == nil {
				*p = newNodePredictor(len(c.Frames), mtf4Len)
			}
			if len((*p).classes) != len(c.Nodes) {
				d.fail(fmt.Sprintf("format %d stack nodes after nodes of another format", f))
				break
			}
			base := len(c.Nodes)
			c.Nodes = slices.Grow(c.Nodes, n)[:base+n]
			decodeNodes(&d, c.Nodes, base, n, len(c.Frames), *p, f)
			if d.err != nil {
				c.Nodes = c.Nodes[:base]
			}
		case s.Kind == SegNodes && f == 1:
			if first != uint64(len(c.Nodes)) {
				d.fail("nodes segment out of order")
			}
			nf := len(c.Frames)
			for range n {
				idx := len(c.Nodes)
				back := d.uvarint()
				fr := d.index(nf)
				if back == 0 || back > uint64(idx) {
					d.fail("stack node's parent out of range")
				}
				if d.err != nil {
					break
				}
				parent := int32(idx - int(back))
				c.Nodes = append(c.Nodes, subsecond.StackNode{Parent: parent, Frame: int32(fr), Depth: c.Nodes[parent].Depth + 1})
			}
		case s.Kind == SegNodes && f <= 3:
			if first != uint64(len(c.Nodes)) {
				d.fail("nodes segment out of order")
			}
			if np == nil {
				np = newNodePredictor(len(c.Frames), mtfLen)
			}
			if n > len(d.b) { // each node takes at least its frame's byte
				d.fail("more nodes than bytes")
				break
			}
			base := len(c.Nodes)
			c.Nodes = slices.Grow(c.Nodes, n)[:base+n]
			left := -1 // nodes left in the current run of those whose parent is the node before them; -1: a run's length comes next
			for i := base; i < base+n && d.err == nil; i++ {
				if left < 0 {
					left = d.count(base + n - i)
				}
				x := int32(i - 1)
				if left > 0 {
					left--
					c.Nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: c.Nodes[x].Depth + 1}
					continue
				}
				// The run is over: this node's parent is written.
				code := d.uvarint()
				if up := code / 2; code != 0 && code%2 == 0 && up <= maxUp {
					for ; up > 0 && x > 0; up-- {
						x = c.Nodes[x].Parent
					}
					if up > 0 {
						d.fail("stack node's parent above the root")
					}
				} else if back := (code + 1) / 2; code%2 == 0 || back > uint64(i) {
					d.fail("stack node's parent out of range")
				} else {
					x = int32(i - int(back))
				}
				if d.err != nil {
					break
				}
				left = -1
				c.Nodes[i] = subsecond.StackNode{Parent: x, Frame: -1, Depth: c.Nodes[x].Depth + 1}
			}
			for i := base; i < base+n && d.err == nil; i++ {
				nd := &c.Nodes[i]
				fr, ok := np.frame(c.Nodes[nd.Parent].Frame, d.uvarint(), len(c.Frames))
				if !ok {
					d.fail("stack node's frame out of range")
				}
				nd.Frame = fr
			}
			if d.err != nil {
				c.Nodes = c.Nodes[:base]
			}
		case s.Kind == SegStrings || s.Kind == SegFrames:
			d.fail(fmt.Sprintf("format %d of segment kind %d", f, s.Kind))
		default:
			d.fail(fmt.Sprintf("unknown segment kind %d", s.Kind))
		}
		if err := d.end(); err != nil {
			return fmt.Errorf("table segment %d/%d: %w", s.Kind, s.Seq, err)
		}
	}
	if len(c.Nodes) > 1 && len(c.Frames) == 0 {
		return fmt.Errorf("%w: stack nodes without frames", errCorrupt)
	}
	if len(later) > 0 {
		fc := newFrameCoder(len(c.Strings), c.Frames, c.Nodes)
		for _, p := range later {
			if p.format == 4 {
				fc.decode4(&p.d, p.from, p.to, len(c.Strings))
			} else {
				fc.decode(&p.d, p.from, p.to, len(c.Strings))
			}
			if err := p.d.end(); err != nil {
				return fmt.Errorf("table segment %d/%d: %w", p.s.Kind, p.s.Seq, err)
			}
		}
	}
	return nil
}

// encodeStrings encodes a list of strings (a profile's comm list).
func encodeStrings(list []string) []byte {
	e := enc{}
	e.byte(commsFormat)
	e.uvarint(uint64(len(list)))
	for _, s := range list {
		e.bytes([]byte(s))
	}
	return e.b
}

// decodeStrings decodes what encodeStrings wrote.
func decodeStrings(b []byte) ([]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := dec{b: b}
	if f := d.byte(); f != commsFormat && d.err == nil {
		return nil, fmt.Errorf("%w: string list format %d", errCorrupt, f)
	}
	n := d.count(len(b))
	list := make([]string, 0, n)
	for range n {
		v := d.bytes()
		if d.err != nil {
			break
		}
		list = append(list, string(v))
	}
	return list, d.end()
}

// growFrames makes room for the recent child frames of parents' frames
// below frames. The rows are doubled: an import's table feed grows them a
// merged part at a time, and grown by a quarter (append's policy) they
// were 10 MB of copies on the real 27 s capture, a tenth of the page
// faults of its `subsecond import`.
func (p *nodePredictor) growFrames(frames int) {
	p.mtf = grown(p.mtf, (frames+1)*p.rowLen, -1)
}

// row returns the recent child frames of the parent frame pf (−1: the
// root).
func (p *nodePredictor) row(pf int32) []int32 {
	at := (int(pf) + 1) * p.rowLen
	return p.mtf[at : at+p.rowLen]
}
