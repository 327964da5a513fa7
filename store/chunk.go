package store

import (
	"fmt"
	"math"

	"github.com/subsecond/subsecond"
)

// A chunk's samples are stored column by column, each column encoded for
// its usual shape, and the whole compressed with zstd:
//
//	format byte, n
//	time     first time (varint), g, then n-1 deltas divided by g (uvarint):
//	         samples are sorted by time, and perf prints microseconds, so
//	         g = the deltas' greatest common divisor is usually 1000
//	cpu      n varints
//	thread   a dictionary of the chunk's distinct (pid, tid, comm) triples,
//	         then n indexes into it: a thread keeps its pid and nearly
//	         always its comm, so one small index stands for three columns
//	event    run-length pairs (value, run): nearly always one run
//	weight   run-length pairs: a fixed sampling period is one run
//	stack    n uvarints (stack prefix-tree nodes)
//
// Measured on the bundled 96-CPU capture this is about 3.4 bytes a sample
// (1,932,436 bytes of chunk data for 564,480 samples), before the tables
// and the chunks' summaries (see bench/ingest).

// maxChunkSamples bounds the samples of one stored chunk; the pipeline
// starts a further chunk of the same second (Seq+1) past it.
const maxChunkSamples = 1 << 20

type thread struct {
	pid, tid int32
	comm     uint32
}

// encodeChunk encodes samples [lo, hi) of c, which are sorted by time.
func encodeChunk(c *subsecond.Columns, lo, hi int) []byte {
	n := hi - lo
	e := enc{b: make([]byte, 0, 8*n+64)}
	e.byte(chunkFormat)
	e.uvarint(uint64(n))
	if n == 0 {
		return zstdBlob(e.b)
	}

	times := c.Time[lo:hi]
	var g uint64
	for i := 1; i < n; i++ {
		g = gcd(g, uint64(times[i]-times[i-1]))
	}
	if g == 0 {
		g = 1
	}
	e.varint(times[0])
	e.uvarint(g)
	for i := 1; i < n; i++ {
		e.uvarint(uint64(times[i]-times[i-1]) / g)
	}

	for _, cpu := range c.CPU[lo:hi] {
		e.varint(int64(cpu))
	}

	dict := make(map[thread]uint32, 256)
	var order []thread
	idx := make([]uint32, n)
	for i := range n {
		th := thread{c.PID[lo+i], c.TID[lo+i], c.Comm[lo+i]}
		k, ok := dict[th]
		if !ok {
			k = uint32(len(order))
			dict[th] = k
			order = append(order, th)
		}
		idx[i] = k
	}
	e.uvarint(uint64(len(order)))
	for _, th := range order {
		e.varint(int64(th.pid))
		e.varint(int64(th.tid))
		e.uvarint(uint64(th.comm))
	}
	for _, k := range idx {
		e.uvarint(uint64(k))
	}

	runs(&e, c.Event[lo:hi])
	runs(&e, c.Weight[lo:hi])

	for _, s := range c.Stack[lo:hi] {
		e.uvarint(uint64(s))
	}
	return zstdBlob(e.b)
}

// runs writes v as run-length pairs, preceded by their number.
func runs[T uint16 | uint64](e *enc, v []T) {
	var pairs []uint64
	for i := 0; i < len(v); {
		j := i + 1
		for j < len(v) && v[j] == v[i] {
			j++
		}
		pairs = append(pairs, uint64(v[i]), uint64(j-i))
		i = j
	}
	e.uvarint(uint64(len(pairs) / 2))
	for _, p := range pairs {
		e.uvarint(p)
	}
}

// limits are the sizes of the tables a chunk's samples index; decodeChunk
// refuses samples beyond them.
type limits struct {
	strings, nodes, events int
}

// noLimits accepts any index that fits the column types.
var noLimits = limits{strings: math.MaxUint32, nodes: math.MaxInt32, events: subsecond.MaxEvents}

// decodeChunk appends the samples of an encoded chunk to cols. buf is
// scratch space for the decompressed bytes, returned for reuse.
func decodeChunk(data []byte, cols *subsecond.Columns, lim limits, buf []byte) ([]byte, error) {
	raw, err := unzstd(buf[:0], data)
	if err != nil {
		return buf, err
	}
	return raw, decodeColumns(raw, cols, lim)
}

// decodeColumns appends the samples of a decompressed chunk to cols; on
// error cols keeps only what it held before.
func decodeColumns(raw []byte, cols *subsecond.Columns, lim limits) error {
	d := dec{b: raw}
	if f := d.byte(); f != chunkFormat && d.err == nil {
		return fmt.Errorf("%w: chunk format %d", errCorrupt, f)
	}
	n := d.count(min(maxChunkSamples, len(raw))) // every sample takes bytes in several columns
	if d.err != nil || n == 0 {
		return d.end()
	}
	base := cols.Len()
	grow(cols, n)

	t := d.varint()
	g := d.uvarint()
	cols.Time[base] = t
	for i := 1; i < n; i++ {
		delta := d.uvarint()
		if g != 0 && delta > math.MaxInt64/g {
			d.fail("time delta overflows")
		}
		t += int64(delta * g)
		cols.Time[base+i] = t
	}
	for i := range n {
		cols.CPU[base+i] = d.int32()
	}

	nt := d.count(n)
	threads := make([]thread, nt)
	for k := range threads {
		threads[k] = thread{pid: d.int32(), tid: d.int32(), comm: uint32(d.index(lim.strings))}
	}
	for i := range n {
		k := d.index(nt)
		if d.err != nil {
			break
		}
		th := threads[k]
		cols.PID[base+i], cols.TID[base+i], cols.Comm[base+i] = th.pid, th.tid, th.comm
	}

	unruns(&d, cols.Event[base:], uint64(lim.events), func(v uint64) uint16 { return uint16(v) })
	unruns(&d, cols.Weight[base:], 0, func(v uint64) uint64 { return v })

	for i := range n {
		cols.Stack[base+i] = int32(d.index(lim.nodes))
	}
	if err := d.end(); err != nil {
		cut(cols, base)
		return err
	}
	return nil
}

// unruns reads run-length pairs into dst, which they must fill exactly;
// values must be below max unless max is 0.
func unruns[T any](d *dec, dst []T, max uint64, conv func(uint64) T) {
	np := d.count(len(dst))
	at := 0
	for range np {
		v := d.uvarint()
		run := d.count(len(dst) - at)
		if max != 0 && v >= max {
			d.fail(fmt.Sprintf("value %d out of range", v))
		}
		if d.err != nil {
			return
		}
		x := conv(v)
		for i := at; i < at+run; i++ {
			dst[i] = x
		}
		at += run
	}
	if at != len(dst) {
		d.fail("runs do not cover the chunk")
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// chunkSecond returns the Second of the chunk holding time t: t / 1 s
// rounded down. Samples without a time (subsecond.NoTime) share the
// lowest second.
func chunkSecond(t int64) int64 {
	q := t / subsecond.ChunkSpan
	if t%subsecond.ChunkSpan < 0 {
		q--
	}
	return q
}
