package store

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

// bitTree is the model of symbols below 1<<symBits.
type bitTree [treeProbs]uint16

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
	for e.rng < rangeTop {
		e.rng <<= 8
		e.shiftLow()
	}
}

// symbol codes s < 1<<symBits with model t.
func (e *rangeEncoder) symbol(t *bitTree, s int) {
	m := 1
	for i := symBits - 1; i >= 0; i-- {
		b := s >> i & 1
		e.bit(&t[m], b)
		m = m<<1 | b
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

func (d *rangeDecoder) symbol(t *bitTree) int {
	m := 1
	for range symBits {
		m = m<<1 | d.bit(&t[m])
	}
	return m - treeProbs
}

// done reports whether the decoder read all of its bytes and no more.
func (d *rangeDecoder) done() bool { return !d.bad && d.at == len(d.b) }
