package store

import "math/bits"

// A binary adaptive range coder (LZMA's): each bit is coded with the
// probability of a zero that its context's model holds, which learns from
// the bits it codes. Symbols are coded as bit trees: their bits from the
// highest, each in the context of the bits above it.

const (
	probBits  = 11
	probInit  = 1 << (probBits - 1)
	moveBits  = 5
	rangeTop  = 1 << 24
	symBits   = 6 // the bits of a symbol of a bitTree
	treeProbs = 1 << symBits
)

// bitTree is the model of symbols below 1<<symBits; byteTree of bytes.
type (
	bitTree  [treeProbs]uint16
	byteTree [256]uint16
)

// smallModel is the model of symbols below 2 + 1<<symBits, mostly 0 or
// 1: a bit for "not 0", a bit for "not 1", then a bitTree for the others;
// two decisions for most symbols rather than symBits.
type smallModel struct {
	zero, one uint16
	rest      bitTree
}

func newSmallModels(n int) []smallModel {
	m := make([]smallModel, n)
	for i := range m {
		m[i] = smallModel{zero: probInit, one: probInit, rest: newBitTrees(1)[0]}
	}
	return m
}

func newByteTrees(n int) []byteTree {
	t := make([]byteTree, n)
	for i := range t {
		for j := range t[i] {
			t[i][j] = probInit
		}
	}
	return t
}

func newBitTrees(n int) []bitTree {
	t := make([]bitTree, n)
	for i := range t {
		for j := range t[i] {
			t[i][j] = probInit
		}
	}
	return t
}

type rangeEncoder struct {
	low       uint64
	rng       uint32
	cache     byte
	cacheSize int
	out       []byte
}

func newRangeEncoder() *rangeEncoder {
	return &rangeEncoder{rng: 0xFFFFFFFF, cacheSize: 1}
}

func (e *rangeEncoder) shiftLow() {
	if uint32(e.low) < 0xFF000000 || e.low>>32 != 0 {
		carry := byte(e.low >> 32)
		temp := e.cache
		for {
			e.out = append(e.out, temp+carry)
			temp = 0xFF
			if e.cacheSize--; e.cacheSize == 0 {
				break
			}
		}
		e.cache = byte(uint32(e.low) >> 24)
	}
	e.cacheSize++
	e.low = uint64(uint32(e.low) << 8)
}

// bit codes b with model p. It is small enough to be inlined into the
// loops that code symbols; renormalising, once every few bits, is not.
func (e *rangeEncoder) bit(p *uint16, b int) {
	bound := (e.rng >> probBits) * uint32(*p)
	if b == 0 {
		e.rng = bound
		*p += (1<<probBits - *p) >> moveBits
	} else {
		e.low += uint64(bound)
		e.rng -= bound
		*p -= *p >> moveBits
	}
	if e.rng < rangeTop {
		e.normalize()
	}
}

func (e *rangeEncoder) normalize() {
	for e.rng < rangeTop {
		e.rng <<= 8
		e.shiftLow()
	}
}

// symbol codes s < 1<<symBits with model t.
func (e *rangeEncoder) symbol(t *bitTree, s int) { e.tree(t[:], s, symBits) }

// tree codes the n low bits of s from the highest, each with the model
// t[m] where m is 1 and the bits above it: bit's arithmetic, with the
// coder's state in locals.
func (e *rangeEncoder) tree(t []uint16, s, n int) {
	rng, low := e.rng, e.low
	m := 1
	for i := n - 1; i >= 0; i-- {
		b := s >> i & 1
		p := &t[m]
		bound := (rng >> probBits) * uint32(*p)
		if b == 0 {
			rng = bound
			*p += (1<<probBits - *p) >> moveBits
		} else {
			low += uint64(bound)
			rng -= bound
			*p -= *p >> moveBits
		}
		if rng < rangeTop {
			e.rng, e.low = rng, low
			e.normalize()
			rng, low = e.rng, e.low
		}
		m = m<<1 | b
	}
	e.rng, e.low = rng, low
}

// small codes s < 2 + 1<<symBits with model m.
func (e *rangeEncoder) small(m *smallModel, s int) {
	if s == 0 {
		e.bit(&m.zero, 0)
		return
	}
	e.bit(&m.zero, 1)
	if s == 1 {
		e.bit(&m.one, 0)
		return
	}
	e.bit(&m.one, 1)
	e.symbol(&m.rest, s-2)
}

// byteSym codes byte s with model t.
func (e *rangeEncoder) byteSym(t *byteTree, s byte) { e.tree(t[:], int(s), 8) }

// direct codes the n low bits of v, most significant first, each as
// likely 0 as 1.
func (e *rangeEncoder) direct(v uint64, n int) {
	for i := n - 1; i >= 0; i-- {
		e.rng >>= 1
		if v>>i&1 != 0 {
			e.low += uint64(e.rng)
		}
		for e.rng < rangeTop {
			e.rng <<= 8
			e.shiftLow()
		}
	}
}

// long codes v < 1<<32: its bit length in model t, then the bits below
// its leading one.
func (e *rangeEncoder) long(t *bitTree, v uint64) {
	b := bits.Len64(v)
	e.symbol(t, b)
	if b > 1 {
		e.direct(v, b-1)
	}
}

// bytes flushes the coder and returns what it wrote.
func (e *rangeEncoder) bytes() []byte {
	for range 5 {
		e.shiftLow()
	}
	return e.out
}

type rangeDecoder struct {
	b    []byte
	at   int
	rng  uint32
	code uint32
	bad  bool // read past the end
}

func newRangeDecoder(b []byte) *rangeDecoder {
	d := &rangeDecoder{b: b, rng: 0xFFFFFFFF}
	for range 5 {
		d.code = d.code<<8 | uint32(d.next())
	}
	return d
}

func (d *rangeDecoder) next() byte {
	if d.at >= len(d.b) {
		d.bad = true
		return 0
	}
	d.at++
	return d.b[d.at-1]
}

func (d *rangeDecoder) bit(p *uint16) int {
	bound := (d.rng >> probBits) * uint32(*p)
	var b int
	if d.code < bound {
		d.rng = bound
		*p += (1<<probBits - *p) >> moveBits
	} else {
		d.code -= bound
		d.rng -= bound
		*p -= *p >> moveBits
		b = 1
	}
	for d.rng < rangeTop {
		d.rng <<= 8
		d.code = d.code<<8 | uint32(d.next())
	}
	return b
}

func (d *rangeDecoder) symbol(t *bitTree) int { return d.tree(t[:], symBits) - treeProbs }

// tree reads what rangeEncoder.tree wrote: n bits, returned below a
// leading 1.
func (d *rangeDecoder) tree(t []uint16, n int) int {
	rng, code := d.rng, d.code
	m := 1
	for range n {
		p := &t[m]
		bound := (rng >> probBits) * uint32(*p)
		if code < bound {
			rng = bound
			*p += (1<<probBits - *p) >> moveBits
			m <<= 1
		} else {
			code -= bound
			rng -= bound
			*p -= *p >> moveBits
			m = m<<1 | 1
		}
		for rng < rangeTop {
			rng <<= 8
			code = code<<8 | uint32(d.next())
		}
	}
	d.rng, d.code = rng, code
	return m
}

func (d *rangeDecoder) small(m *smallModel) int {
	if d.bit(&m.zero) == 0 {
		return 0
	}
	if d.bit(&m.one) == 0 {
		return 1
	}
	return 2 + d.symbol(&m.rest)
}

func (d *rangeDecoder) byteSym(t *byteTree) byte { return byte(d.tree(t[:], 8)) }

func (d *rangeDecoder) direct(n int) uint64 {
	var v uint64
	for range n {
		d.rng >>= 1
		b := uint64(0)
		if d.code >= d.rng {
			d.code -= d.rng
			b = 1
		}
		v = v<<1 | b
		for d.rng < rangeTop {
			d.rng <<= 8
			d.code = d.code<<8 | uint32(d.next())
		}
	}
	return v
}

// long reads what rangeEncoder.long wrote; false for a bit length above
// 32.
func (d *rangeDecoder) long(t *bitTree) (uint64, bool) {
	b := d.symbol(t)
	switch {
	case b > 32:
		return 0, false
	case b <= 1:
		return uint64(b), true
	}
	return 1<<(b-1) | d.direct(b-1), true
}

// done reports whether the decoder read all of its bytes and no more.
func (d *rangeDecoder) done() bool { return !d.bad && d.at == len(d.b) }
