package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The stored blobs (chunks, summaries, table segments) are sequences of
// varints behind a format byte; chunks and segments are then compressed
// with zstd. Decoding checks every length and index, so that a damaged
// blob yields an error rather than a panic or a capture that indexes out
// of range.

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("corrupt stored data")

// Format bytes of the blobs besides chunks (see chunkFormat).
const (
	summaryFormat = 1
	segmentFormat = 5 // formats 1 to 4 are still read; format 5 is that of stack nodes, whose frames are format 4 and strings format 3
	commsFormat   = 1
)

// maxBlob bounds a blob once decompressed, so that a damaged or hostile
// database cannot make a reader allocate without bound. Encoders cut their
// output well below it.
const maxBlob = 256 << 20

var (
	zenc      *zstd.Encoder
	zdec      *zstd.Decoder
	zencOnce  sync.Once
	zsegs     *zstd.Encoder
	zsegsOnce sync.Once
	zdecOnce  sync.Once
)

// zstdBlob returns b compressed as one zstd frame. The encoder is shared
// and safe for concurrent use.
func zstdBlob(b []byte) []byte {
	return encoder().EncodeAll(b, make([]byte, 0, len(b)/3+64))
}

// zstdColumns returns the columns given, one after the other, compressed
// as one zstd frame per column (a column shorter than minFrame joins the
// next one's frame): what zstd decompresses to their concatenation, as it
// does one frame of them. A frame of its own gives each column Huffman and
// sequence tables of its own, where one frame's 128 KiB blocks mix
// columns of different values: on the real 27 s capture the frames'
// segment compresses to 109 KB instead of 118 KB, the nodes' to 156 KB
// instead of 168 KB.
func zstdColumns(cols ...[]byte) []byte {
	const minFrame = 256
	size := 0
	for _, c := range cols {
		size += len(c)
	}
	out := make([]byte, 0, size/3+64)
	var small []byte // short columns waiting to join the next
	for i, c := range cols {
		if len(small) > 0 || (len(c) < minFrame && i < len(cols)-1) {
			small = append(small, c...)
			if len(small) < minFrame && i < len(cols)-1 {
				continue
			}
			c = small
		}
		if len(c) > 0 || len(out) == 0 && i == len(cols)-1 {
			out = segmentEncoder().EncodeAll(c, out)
		}
		small = small[:0]
	}
	return out
}

// storedFrame returns the columns given, one after the other, as one zstd
// frame of raw blocks: what unzstd reads as it does compressed ones, for
// bytes that zstd would not shrink (a range coder's) at no cost.
func storedFrame(cols ...[]byte) []byte {
	const maxBlock = 128 << 10
	size := 0
	for _, c := range cols {
		size += len(c)
	}
	// The magic number, a frame header of a single segment whose content
	// size takes 4 bytes, then the content size.
	out := make([]byte, 0, size+16+3*(size/maxBlock))
	out = append(out, 0x28, 0xb5, 0x2f, 0xfd, 0xa0)
	out = binary.LittleEndian.AppendUint32(out, uint32(size))
	all := slices.Concat(cols...)
	for {
		n := min(len(all), maxBlock)
		h := uint32(n) << 3 // raw block
		if n == len(all) {
			h |= 1 // the last
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out, all = append(out, all[:n]...), all[n:]
		if len(all) == 0 {
			return out
		}
	}
}

// segmentEncoder compresses table segments, written once per capture, at
// zstd's "better" level: on the real 27 s capture its strings take 51.7 KB
// instead of 54.4 KB, its frames and nodes 1.5 KB less, in about the CPU
// time of the default level (the segments are a quarter of a MB).
func segmentEncoder() *zstd.Encoder {
	zsegsOnce.Do(func() {
		zsegs, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true), zstd.WithLowerEncoderMem(true))
	})
	return zsegs
}

func encoder() *zstd.Encoder {
	zencOnce.Do(func() {
		zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true), zstd.WithLowerEncoderMem(true))
	})
	return zenc
}

// zstdSize returns the size of b compressed as zstdBlob compresses it, to
// compare encodings of the same values by. (Compressed at zstd's fastest
// level, the generated incident's plain and recent stack columns compare
// the other way round in a quarter of its chunks.)
func zstdSize(b []byte) int {
	buf := zstdScratch.Get().(*[]byte)
	defer zstdScratch.Put(buf)
	*buf = encoder().EncodeAll(b, (*buf)[:0])
	return len(*buf)
}

var zstdScratch = sync.Pool{New: func() any { return new([]byte) }}

// unzstd appends the content of zstd frame b to dst.
func unzstd(dst, b []byte) ([]byte, error) {
	zdecOnce.Do(func() {
		zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlob),
			zstd.WithDecoderMaxWindow(maxBlob))
	})
	out, err := zdec.DecodeAll(b, dst)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return out, nil
}

// enc appends varints to a byte slice.
type enc struct{ b []byte }

func (e *enc) byte(v byte)      { e.b = append(e.b, v) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bytes(v []byte) {
	e.uvarint(uint64(len(v)))
	e.b = append(e.b, v...)
}

// dec reads what enc wrote; the first problem sticks in err and every later
// read returns zero.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, what)
	}
}

func (d *dec) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count that must be at most max.
func (d *dec) count(max int) int {
	v := d.uvarint()
	if v > uint64(max) {
		d.fail(fmt.Sprintf("count %d exceeds %d", v, max))
		return 0
	}
	return int(v)
}

// length reads the length of what follows, which must be at most the
// bytes left after it.
func (d *dec) length() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.fail(fmt.Sprintf("length %d exceeds the %d bytes left", v, len(d.b)))
		return 0
	}
	return int(v)
}

// int32 reads a signed varint that must fit an int32.
func (d *dec) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("value out of int32 range")
		return 0
	}
	return int32(v)
}

// index reads an unsigned varint that must be below n.
func (d *dec) index(n int) int {
	v := d.uvarint()
	if v >= uint64(n) {
		d.fail(fmt.Sprintf("index %d out of range %d", v, n))
		return 0
	}
	return int(v)
}

func (d *dec) bytes() []byte {
	n := d.length()
	if d.err != nil {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// end fails unless every byte was read.
func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)))
	}
	return d.err
}
