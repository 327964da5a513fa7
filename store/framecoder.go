package store

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/subsecond/subsecond"
)

// frameCoder codes the frames of format 3 segments, each from the frames
// before it (in the segment and the segments of its kind before it); see
// the format in tables.go. Strings are indexes below the size it was made
// for.
type frameCoder struct {
	top     uint32  // the highest string a frame has used so far
	prevDSO uint32  // the previous frame's DSO
	caller  []int32 // per frame, the frame of the parent of the first node with it; -1: none or the root
	frames  []subsecond.FrameRec
	row     int     // the current frame's row of callees
	callees []int32 // per caller symbol + 1 (0: no caller), the symbols of its callees' frames, most recent first; -1 when none
	recent  [recentSyms]int32
	symDSO  []uint32     // per symbol, the DSO of its latest frame; 0 before any
	symAddr []uint64     // per symbol, the address of its latest frame
	dsoAddr []uint64     // per DSO, the address of its latest frame
	dsoKind []byte       // per DSO, the kind byte of its latest frame
	models  *frameModels // format 4's
}

// afterLen callee symbols are kept per caller symbol, recentSyms in all.
const (
	afterLen   = 8
	recentSyms = 64
)

// rawAddr marks in a frame's kind byte an address stored whole (8 bytes,
// little-endian) rather than as its difference from the predicted one:
// those of broken unwinds ([unknown] frames whose addresses are stack
// garbage) are no nearer the prediction than random numbers.
const (
	inlineBit  = 1 << 7
	rawAddrBit = 1 << 6
	// rawAddrAbove is the zig-zag difference from which an address is
	// stored whole: its varint takes 7 bytes or more.
	rawAddrAbove = 1 << 42
)

// newFrameCoder returns a coder of frames, all of which are the given
// slice (whose records the decoder fills), of the nodes given and of
// strings below the count given.
func newFrameCoder(strings int, frames []subsecond.FrameRec, nodes []subsecond.StackNode) *frameCoder {
	p := emptyFrameCoder()
	p.growStrings(strings)
	p.frames, p.caller = frames, callers(len(frames), nodes)
	return p
}

// emptyFrameCoder returns a coder of no frames and no strings yet.
func emptyFrameCoder() *frameCoder {
	p := &frameCoder{}
	for i := range p.recent {
		p.recent[i] = -1
	}
	return p
}

// callers returns, per frame, the frame of the parent of the first node
// with it; -1 for none or the root.
func callers(frames int, nodes []subsecond.StackNode) []int32 {
	c := make([]int32, frames)
	for i := range c {
		c[i] = -2
	}
	for _, n := range nodes[1:] {
		if c[n.Frame] == -2 {
			c[n.Frame] = nodes[n.Parent].Frame
		}
	}
	for i, f := range c {
		if f == -2 {
			c[i] = -1
		}
	}
	return c
}

// at readies the coder for frame i: its row of callees is its caller's
// (decoded before it), or the row of frames without one.
func (p *frameCoder) at(i int) {
	p.row = 0
	if c := p.caller[i]; c >= 0 && int(c) < i {
		p.row = int(p.frames[c].Symbol) + 1
	}
	p.row *= afterLen
}

// symCode returns the code of sym: 0 for the string after the highest
// used so far, 1..afterLen its rank among the callees of its frame's
// caller's symbol, then its rank among the recent symbols, else sym past them.
func (p *frameCoder) symCode(sym uint32) uint64 {
	if sym == p.top+1 {
		return 0
	}
	row := p.callees[p.row:][:afterLen]
	if k := slices.Index(row, int32(sym)); k >= 0 {
		return uint64(k + 1)
	}
	if k := slices.Index(p.recent[:], int32(sym)); k >= 0 {
		return uint64(afterLen + 1 + k)
	}
	return uint64(sym) + afterLen + recentSyms + 1
}

// sym returns the symbol of code c, false when c names none below limit.
func (p *frameCoder) sym(c uint64, limit int) (uint32, bool) {
	var s int64
	switch {
	case c == 0:
		s = int64(p.top) + 1
	case c <= afterLen:
		s = int64(p.callees[p.row+int(c)-1])
	case c <= afterLen+recentSyms:
		s = int64(p.recent[c-afterLen-1])
	default:
		s = int64(c - afterLen - recentSyms - 1)
	}
	if s < 0 || s >= int64(limit) {
		return 0, false
	}
	return uint32(s), true
}

// dsoPrediction is the DSO of the latest frame of sym, or for a symbol's
// first frame the previous frame's.
func (p *frameCoder) dsoPrediction(sym uint32) uint32 {
	if d := p.symDSO[sym]; d != 0 {
		return d
	}
	return p.prevDSO
}

// dsoCode returns the code of the DSO of a frame of sym: 0 for the
// prediction, 1 for the string after the highest used so far (sym
// included), else dso + 2.
func (p *frameCoder) dsoCode(sym, dso uint32) uint64 {
	switch dso {
	case p.dsoPrediction(sym):
		return 0
	case max(p.top, sym) + 1:
		return 1
	}
	return uint64(dso) + 2
}

func (p *frameCoder) dso(sym uint32, c uint64, limit int) (uint32, bool) {
	var d uint64
	switch c {
	case 0:
		d = uint64(p.dsoPrediction(sym))
	case 1:
		d = uint64(max(p.top, sym)) + 1
	default:
		d = c - 2
	}
	return uint32(d), d < uint64(limit)
}

// addrPrediction is the address of the latest frame of the same symbol
// and DSO, else of the same DSO, else 0.
func (p *frameCoder) addrPrediction(sym, dso uint32) uint64 {
	if p.symDSO[sym] == dso && dso != 0 {
		return p.symAddr[sym]
	}
	return p.dsoAddr[dso]
}

// seen notes frame f, whose kind byte is k.
func (p *frameCoder) seen(f *subsecond.FrameRec, k byte) {
	p.dsoKind[f.DSO] = k
	note(p.callees[p.row:][:afterLen], int32(f.Symbol))
	note(p.recent[:], int32(f.Symbol))
	p.symDSO[f.Symbol], p.symAddr[f.Symbol], p.dsoAddr[f.DSO] = f.DSO, f.Addr, f.Addr
	p.prevDSO = f.DSO
	p.top = max(p.top, f.Symbol, f.DSO, f.SrcLine)
}

// kind sets the kind and inline flag of f, whose DSO is set, from its
// stored kind byte b, and returns its kind byte; false for no kind.
func (p *frameCoder) kind(f *subsecond.FrameRec, b byte) (byte, bool) {
	k := b ^ p.dsoKind[f.DSO]
	f.Kind, f.Inline = subsecond.FrameKind(k&^(inlineBit|rawAddrBit)), k&inlineBit != 0
	return k, f.Kind <= subsecond.KindInlined
}

// note moves v to the front of row, which it enters if absent.
func note(row []int32, v int32) {
	k := slices.Index(row, v)
	if k < 0 {
		k = len(row) - 1
	}
	copy(row[1:k+1], row[:k])
	row[0] = v
}

// encode returns the columns of frames [from, to) in format 3.
func (p *frameCoder) encode(from, to int) [][]byte {
	var sym, dso, src, addr, raw enc
	kind := make([]byte, 0, to-from)
	for i := from; i < to; i++ {
		f := &p.frames[i]
		p.at(i)
		sym.uvarint(p.symCode(f.Symbol))
		dso.uvarint(p.dsoCode(f.Symbol, f.DSO))
		src.uvarint(uint64(f.SrcLine))
		k := byte(f.Kind)
		if f.Inline {
			k |= inlineBit
		}
		if d := zigzag(int64(f.Addr - p.addrPrediction(f.Symbol, f.DSO))); d < rawAddrAbove {
			addr.uvarint(d)
		} else {
			k |= rawAddrBit
			raw.b = binary.LittleEndian.AppendUint64(raw.b, f.Addr)
		}
		kind = append(kind, k^p.dsoKind[f.DSO])
		p.seen(f, k)
	}
	nraw := enc{}
	nraw.uvarint(uint64(len(raw.b) / 8))
	return [][]byte{sym.b, dso.b, src.b, kind, nraw.b, raw.b, addr.b}
}

// decode reads frames [from, to) in format 3 from d; strings are below
// ns.
func (p *frameCoder) decode(d *dec, from, to int, ns int) {
	fs := p.frames[from:to]
	n := len(fs)
	sym, rest, ok := uvarints(d.b, n)
	dso, rest, ok2 := uvarints(rest, n)
	src, rest, ok3 := uvarints(rest, n)
	if !ok || !ok2 || !ok3 || len(rest) < n {
		d.fail("truncated frames")
		return
	}
	kinds, rest := rest[:n], rest[n:]
	d.b = rest
	nraw := d.count(min(n, len(rest)/8))
	if d.err != nil {
		return
	}
	raw := d.b[:8*nraw]
	addr, rest, ok := uvarints(d.b[8*nraw:], n-nraw)
	if !ok {
		d.fail("truncated frame addresses")
		return
	}
	d.b = rest
	sd, dd, srcd, ad := dec{b: sym}, dec{b: dso}, dec{b: src}, dec{b: addr}
	for i := range fs {
		f := &fs[i]
		p.at(from + i)
		s, ok := p.sym(sd.uvarint(), ns)
		if !ok {
			d.fail("frame's symbol out of range")
			return
		}
		f.Symbol = s
		if f.DSO, ok = p.dso(s, dd.uvarint(), ns); !ok {
			d.fail("frame's DSO out of range")
			return
		}
		f.SrcLine = uint32(srcd.index(ns))
		k, ok := p.kind(f, kinds[i])
		if !ok {
			d.fail("bad frame kind")
			return
		}
		if k&rawAddrBit != 0 {
			if len(raw) < 8 {
				d.fail("more whole addresses than stored")
				return
			}
			f.Addr, raw = binary.LittleEndian.Uint64(raw), raw[8:]
		} else {
			f.Addr = p.addrPrediction(f.Symbol, f.DSO) + uint64(unzigzag(ad.uvarint()))
		}
		if srcd.err != nil || ad.err != nil {
			d.fail("bad frame")
			return
		}
		p.seen(f, k)
	}
	if len(raw) != 0 {
		d.fail("fewer whole addresses than stored")
	}
}

// uvarints splits off the first n uvarints of b; false when b holds fewer.
func uvarints(b []byte, n int) (col, rest []byte, ok bool) {
	at := 0
	for range n {
		_, k := binary.Uvarint(b[at:])
		if k <= 0 {
			return nil, nil, false
		}
		at += k
	}
	return b[:at], b[at:], true
}

// Format 4 frames segments hold format 3's source lines and kind bytes
// (compressed), then the length of a stream of the range coder
// (rangecoder.go) and the stream, then the bits it leaves out, packed most
// significant first (bitWriter), both stored as they are. Per frame the
// stream holds:
//
//	symbol   its format 3 code if below symRaw, else symRaw + b − 1 where
//	         b is the bit length of symbol + 1 (its bits below the
//	         leading one in the bits); in one of two models, by whether
//	         the frame has a caller
//	DSO      see encodeDSO
//	address  for a whole address, its 8 bytes from the highest, each in
//	         a model of its place and the classes of the two bytes before
//	         it (byteClass); else the bit length of the zig-zag difference
//	         from the predicted address (its bits below the leading one in
//	         the bits), in a model of where the prediction came from (the
//	         symbol's latest frame, the DSO's, none) and the frame's kind
//
// On the real 27 s capture (31,506 frames, 4,500 whole addresses) the
// frames segment takes 98.6 KB instead of 108.4 KB: the symbols, DSOs and
// addresses 98.0 KB instead of 107.8 KB as zstd-compressed varints and
// whole addresses (the range coder shrinks the bit lengths, the models of
// whole addresses their bytes of text, zeros and pointers).
const symRaw = afterLen + recentSyms + 1

// frameModels are the models of format 4 frames' range-coded parts, and
// 1 + the DSOs of the latest frames, most recent first (0: none).
type frameModels struct {
	dsos [recentDSOs]uint32
	dso  [2]byteTree
	sym  [2]byteTree
	addr [3 * 4]byteTree
	raw  [8 * 4 * 4]byteTree
}

func newFrameModels() *frameModels {
	m := &frameModels{}
	for _, ts := range [][]byteTree{m.dso[:], m.sym[:], m.addr[:], m.raw[:]} {
		for i := range ts {
			for j := range ts[i] {
				ts[i][j] = probInit
			}
		}
	}
	return m
}

// recentDSOs are kept by format 4's frame coder, whose DSO codes are
// dsoRaw + b − 1 from dsoRaw on.
const (
	recentDSOs = 64
	dsoRaw     = 2 + recentDSOs
)

// encodeDSO codes the DSO of a frame of sym to e and w: its format 3 code
// when 0 or 1, else 2 + its rank among the DSOs of the latest frames, or
// dsoRaw + b − 1 where b is the bit length of DSO + 1 (its bits below
// the leading one to w), in a model of whether the symbol had a frame
// before.
func (p *frameCoder) encodeDSO(e *rangeEncoder, w *bitWriter, sym, dso uint32) {
	m := p.models
	t := &m.dso[min(p.symDSO[sym], 1)]
	c := p.dsoCode(sym, dso)
	if c > 1 {
		if k := slices.Index(m.dsos[:], dso+1); k >= 0 {
			c = 2 + uint64(k)
		} else {
			b := bits.Len64(uint64(dso) + 1)
			c = dsoRaw + uint64(b) - 1
			w.write(uint64(dso)+1, uint(b-1))
		}
	}
	e.byteSym(t, byte(c))
	p.noteDSO(dso)
}

// decodeDSO reads what encodeDSO wrote; false when it names no DSO below
// limit.
func (p *frameCoder) decodeDSO(d *rangeDecoder, r *bitReader, sym uint32, limit int) (uint32, bool) {
	m := p.models
	c := uint64(d.byteSym(&m.dso[min(p.symDSO[sym], 1)]))
	var dso uint64
	switch {
	case c <= 1:
		v, ok := p.dso(sym, c, limit)
		if !ok {
			return 0, false
		}
		dso = uint64(v)
	case c < dsoRaw:
		if m.dsos[c-2] == 0 { // no DSO of that rank yet
			return 0, false
		}
		dso = uint64(m.dsos[c-2]) - 1
	case c-dsoRaw < 32:
		b := c - dsoRaw + 1
		dso = (1<<(b-1) | r.read(uint(b-1))) - 1
	default:
		return 0, false
	}
	if dso >= uint64(limit) || r.bad {
		return 0, false
	}
	p.noteDSO(uint32(dso))
	return uint32(dso), true
}

// noteDSO moves dso to the front of the DSOs of the latest frames.
func (p *frameCoder) noteDSO(dso uint32) {
	if l := &p.models.dsos; l[0] != dso+1 {
		k := slices.Index(l[:], dso+1)
		if k < 0 {
			k = len(l) - 1
		}
		copy(l[1:k+1], l[:k])
		l[0] = dso + 1
	}
}

// byteClass is the class of a byte of a whole address that the next is
// coded in the context of: zero, printable ASCII, 0xff, other (stack
// garbage is often text, small numbers or pointers).
func byteClass(b byte) int {
	switch {
	case b == 0:
		return 0
	case b >= 0x20 && b < 0x7f:
		return 1
	case b == 0xff:
		return 2
	}
	return 3
}

// addrContext returns the model (of frameModels.addr) of the bit length of
// an address's difference from its prediction, for a frame of sym, dso
// and kind k: 4 × where the prediction comes from (addrPrediction: the
// symbol's latest frame, the DSO's, none) + k mod 4.
func (p *frameCoder) addrContext(sym, dso uint32, k subsecond.FrameKind) int {
	src := 2
	switch {
	case p.symDSO[sym] == dso && dso != 0:
		src = 0
	case p.dsoAddr[dso] != 0:
		src = 1
	}
	return src*4 + int(k&3)
}

// frameSegCoder holds the columns of a format 4 segment being coded; rc
// is set when it is made.
type frameSegCoder struct {
	src  enc
	bw   bitWriter
	rc   *rangeEncoder
	kind []byte
}

// code4 codes frames [from, to) into sc, after the frames it holds.
func (p *frameCoder) code4(sc *frameSegCoder, from, to int) {
	if p.models == nil {
		p.models = newFrameModels()
	}
	m, rc, bw := p.models, sc.rc, &sc.bw
	for i := from; i < to; i++ {
		f := &p.frames[i]
		p.at(i)
		st := &m.sym[min(p.row, 1)]
		if c := p.symCode(f.Symbol); c < symRaw {
			rc.byteSym(st, byte(c))
		} else {
			b := bits.Len64(uint64(f.Symbol) + 1)
			rc.byteSym(st, byte(symRaw+b-1))
			bw.write(uint64(f.Symbol)+1, uint(b-1))
		}
		p.encodeDSO(rc, bw, f.Symbol, f.DSO)
		sc.src.uvarint(uint64(f.SrcLine))
		k := byte(f.Kind)
		if f.Inline {
			k |= inlineBit
		}
		if d := zigzag(int64(f.Addr - p.addrPrediction(f.Symbol, f.DSO))); d < rawAddrAbove {
			b := bits.Len64(d)
			rc.byteSym(&m.addr[p.addrContext(f.Symbol, f.DSO, f.Kind)], byte(b))
			if b > 1 {
				bw.write(d, uint(b-1))
			}
		} else {
			k |= rawAddrBit
			c1, c2 := 0, 0
			for at := 56; at >= 0; at -= 8 {
				v := byte(f.Addr >> at)
				rc.byteSym(&m.raw[(at/8*4+c1)*4+c2], v)
				c1, c2 = byteClass(v), c1
			}
		}
		sc.kind = append(sc.kind, k^p.dsoKind[f.DSO])
		p.seen(f, k)
	}
}

// cols ends the segment and returns its columns: those to compress, then
// those to store.
func (sc *frameSegCoder) cols() (packed, stored [][]byte) {
	var lens enc
	r := sc.rc.bytes()
	lens.uvarint(uint64(len(r)))
	return [][]byte{sc.src.b, sc.kind, lens.b}, [][]byte{r, sc.bw.bytes()}
}

// decode4 reads frames [from, to) in format 4 from d; strings are below
// ns.
func (p *frameCoder) decode4(d *dec, from, to int, ns int) {
	if p.models == nil {
		p.models = newFrameModels()
	}
	m := p.models
	fs := p.frames[from:to]
	n := len(fs)
	src, rest, ok := uvarints(d.b, n)
	if !ok || len(rest) < n {
		d.fail("truncated frames")
		return
	}
	kinds := rest[:n]
	d.b = rest[n:]
	l := d.length()
	if d.err != nil {
		return
	}
	if l > len(d.b) {
		d.fail("truncated frames")
		return
	}
	rc, br := newRangeDecoder(d.b[:l]), bitReader{b: d.b[l:]}
	d.b = nil
	srcd := dec{b: src}
	for i := range fs {
		f := &fs[i]
		p.at(from + i)
		c := uint64(rc.byteSym(&m.sym[min(p.row, 1)]))
		var s uint32
		if c < symRaw {
			s, ok = p.sym(c, ns)
		} else if b := c - symRaw + 1; b <= 32 {
			v := 1<<(b-1) | br.read(uint(b-1))
			s, ok = uint32(v-1), v-1 < uint64(ns)
		} else {
			ok = false
		}
		if !ok || rc.bad || br.bad {
			d.fail("frame's symbol out of range")
			return
		}
		f.Symbol = s
		if f.DSO, ok = p.decodeDSO(rc, &br, s, ns); !ok {
			d.fail("frame's DSO out of range")
			return
		}
		f.SrcLine = uint32(srcd.index(ns))
		k, ok := p.kind(f, kinds[i])
		if !ok {
			d.fail("bad frame kind")
			return
		}
		if k&rawAddrBit != 0 {
			c1, c2 := 0, 0
			f.Addr = 0
			for at := 7; at >= 0; at-- {
				v := rc.byteSym(&m.raw[(at*4+c1)*4+c2])
				f.Addr = f.Addr<<8 | uint64(v)
				c1, c2 = byteClass(v), c1
			}
		} else {
			b := uint(rc.byteSym(&m.addr[p.addrContext(f.Symbol, f.DSO, f.Kind)]))
			if b > 42 {
				d.fail("bad frame address")
				return
			}
			z := uint64(b) // 0 or 1
			if b > 1 {
				z = 1<<(b-1) | br.read(b-1)
			}
			f.Addr = p.addrPrediction(f.Symbol, f.DSO) + uint64(unzigzag(z))
		}
		if srcd.err != nil || rc.bad || br.bad {
			d.fail("bad frame")
			return
		}
		p.seen(f, k)
	}
	if !rc.done() || !br.done() || len(srcd.b) != 0 {
		d.fail("frames' bytes do not match their count")
	}
}

// frameStream codes a profile's frames into format 4 segments as an
// import's merge makes them, as nodeStream codes its nodes: the same
// segments as encodeFrames makes of the whole table. A frame is coded
// from its caller (callers), the frame of the parent of the first node
// with it, so it waits until such a node is made; frames are coded in
// order, and the last ones when the table is complete (finish).
type frameStream struct {
	fc    *frameCoder
	segs  []Segment
	cur   *frameSegCoder // the open segment; nil when none
	from  int            // the open segment's first frame
	next  int            // the next frame to code
	nodes int            // the nodes whose frames' callers are noted
}

// callerUnknown marks in frameCoder.caller, while a frameStream codes, a
// frame no node has been made with yet.
const callerUnknown = -2

func newFrameStream() *frameStream {
	fc := emptyFrameCoder()
	fc.growStrings(0)
	return &frameStream{fc: fc, nodes: 1}
}

// add codes the frames whose callers are known: strings, frames and
// nodes are the tables so far (appended to, never changed), the nodes'
// frames below len(frames).
func (s *frameStream) add(strings int, frames []subsecond.FrameRec, nodes []subsecond.StackNode) {
	fc := s.fc
	fc.growStrings(strings)
	fc.frames = frames
	fc.caller = grown(fc.caller, len(frames), callerUnknown)
	for _, n := range nodes[min(s.nodes, len(nodes)):] {
		if fc.caller[n.Frame] == callerUnknown {
			fc.caller[n.Frame] = nodes[n.Parent].Frame
		}
	}
	s.nodes = max(s.nodes, len(nodes))
	to := s.next
	for to < len(frames) && fc.caller[to] != callerUnknown {
		to++
	}
	s.code(to)
}

// finish codes the frames left, those without a node as having no
// caller, and returns the segments.
func (s *frameStream) finish(strings int, frames []subsecond.FrameRec, nodes []subsecond.StackNode) []Segment {
	s.add(strings, frames, nodes)
	for i := s.next; i < len(frames); i++ {
		if s.fc.caller[i] == callerUnknown {
			s.fc.caller[i] = -1
		}
	}
	s.code(len(frames))
	if s.cur != nil {
		s.emit()
	}
	return s.segs
}

// code codes frames up to to, cutting segments of segmentEntries.
func (s *frameStream) code(to int) {
	for s.next < to {
		if s.cur == nil {
			s.cur, s.from = &frameSegCoder{rc: newRangeEncoder()}, s.next
		}
		end := min(to, s.from+segmentEntries)
		s.fc.code4(s.cur, s.next, end)
		s.next = end
		if end == s.from+segmentEntries {
			s.emit()
		}
	}
}

func (s *frameStream) emit() {
	packed, stored := s.cur.cols()
	s.segs = emitSegment(s.segs, SegFrames, 4, s.from, s.next-s.from, len(stored), append(packed, stored...)...)
	s.cur = nil
}

// growStrings sizes the coder's tables by string for strings of them,
// doubling them when they grow.
func (p *frameCoder) growStrings(strings int) {
	p.callees = grown(p.callees, (strings+1)*afterLen, -1)
	p.symDSO = grown(p.symDSO, strings, 0)
	p.symAddr = grown(p.symAddr, strings, 0)
	p.dsoAddr = grown(p.dsoAddr, strings, 0)
	p.dsoKind = grown(p.dsoKind, strings, 0)
}

// grown returns s lengthened to n, the new entries set to fill, its
// capacity doubled when too small.
func grown[T any](s []T, n int, fill T) []T {
	old := len(s)
	if n <= old {
		return s
	}
	if n > cap(s) {
		s = slices.Grow(s, max(n, 2*cap(s))-old)
	}
	s = s[:n]
	for i := old; i < n; i++ {
		s[i] = fill
	}
	return s
}
