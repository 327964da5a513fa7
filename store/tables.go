package store

import (
	"fmt"

	"github.com/subsecond/subsecond"
)

// A profile's interned tables (subsecond.Interner: strings, frames, stack
// prefix-tree nodes) are stored as segments, each a zstd-compressed run of
// consecutive entries:
//
//	format byte, index of the first entry, count, entries
//	strings  length-prefixed bytes, from index 1 ("" is index 0, implied)
//	frames   symbol, dso, srcline (string indexes), addr, kind byte, inline byte
//	nodes    index − parent (≥ 1), frame; from index 1 (the root is implied)
//
// Rows per entry cost more than the entries themselves and a round trip
// each when loaded; a few blobs are read in one query and decoded in
// place.

// segmentBytes bounds a segment's encoded size before compression.
const segmentBytes = 8 << 20

// encodeSegments returns the segments of in's tables.
func encodeSegments(in *subsecond.Interner) []Segment {
	var segs []Segment
	emit := func(kind SegmentKind, first, n int, body *enc) {
		h := enc{b: make([]byte, 0, len(body.b)+24)}
		h.byte(segmentFormat)
		h.uvarint(uint64(first))
		h.uvarint(uint64(n))
		h.b = append(h.b, body.b...)
		seq := int32(0)
		if len(segs) > 0 && segs[len(segs)-1].Kind == kind {
			seq = segs[len(segs)-1].Seq + 1
		}
		segs = append(segs, Segment{Kind: kind, Seq: seq, Data: zstdBlob(h.b)})
	}
	cutAt := func(kind SegmentKind, from, to int, put func(e *enc, i int)) {
		var body enc
		first := from
		for i := from; i < to; i++ {
			put(&body, i)
			if len(body.b) >= segmentBytes {
				emit(kind, first, i+1-first, &body)
				body, first = enc{}, i+1
			}
		}
		if first < to {
			emit(kind, first, to-first, &body)
		}
	}
	cutAt(SegStrings, 1, len(in.Strings), func(e *enc, i int) { e.bytes([]byte(in.Strings[i])) })
	cutAt(SegFrames, 0, len(in.Frames), func(e *enc, i int) {
		f := &in.Frames[i]
		e.uvarint(uint64(f.Symbol))
		e.uvarint(uint64(f.DSO))
		e.uvarint(uint64(f.SrcLine))
		e.uvarint(f.Addr)
		e.byte(byte(f.Kind))
		if f.Inline {
			e.byte(1)
		} else {
			e.byte(0)
		}
	})
	cutAt(SegNodes, 1, len(in.Nodes), func(e *enc, i int) {
		n := &in.Nodes[i]
		e.uvarint(uint64(int32(i) - n.Parent))
		e.uvarint(uint64(n.Frame))
	})
	return segs
}

// decodeSegments rebuilds the tables of c from segs, which must be ordered
// by kind and sequence and hold every entry exactly once.
func decodeSegments(segs []Segment, c *subsecond.Capture) error {
	c.Strings = []string{""}
	c.Frames = nil
	c.Nodes = []subsecond.StackNode{{Parent: -1, Frame: -1}}
	var buf []byte
	for _, s := range segs {
		raw, err := unzstd(buf[:0], s.Data)
		if err != nil {
			return fmt.Errorf("table segment %d/%d: %w", s.Kind, s.Seq, err)
		}
		buf = raw
		d := dec{b: raw}
		if f := d.byte(); f != segmentFormat && d.err == nil {
			return fmt.Errorf("table segment %d/%d: %w: format %d", s.Kind, s.Seq, errCorrupt, f)
		}
		first := d.uvarint()
		n := d.count(len(raw))
		switch s.Kind {
		case SegStrings:
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
		case SegFrames:
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
		case SegNodes:
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
	return nil
}

// encodeStrings encodes a list of strings (a profile's comm list).
func encodeStrings(list []string) []byte {
	e := enc{}
	e.byte(segmentFormat)
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
	if f := d.byte(); f != segmentFormat && d.err == nil {
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
