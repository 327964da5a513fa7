package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/subsecond/subsecond"
)

// A chunk's samples are stored column by column, each column encoded for
// its usual shape (its Encoding in the column list, subsecond.SampleColumns),
// and the whole compressed with zstd. Format 1 is:
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
// A column added later is stored after these, and the format byte is the
// highest Since (or Recoded) of the columns written; a chunk of an earlier
// format decodes the columns it lacks as zeros, and a column whose
// encoding changed since in the encoding it was written in (Recoded).
// Format 2 added cgroup (a Dict of its own). Format 3 stores stack as Rising: a byte 1
// and each node as the zig-zag difference from the largest node before it
// in the chunk, as a stack met for the first time is the latest node made
// (on the real 27 s capture with deep stacks, 20,329 distinct stacks in
// 47,290 samples, the stack columns shrink from 114 KB to 62 KB
// compressed), or a byte 0 and n uvarints as before, whichever is shorter
// (the generated incident's few stacks are small numbers in any order).
// Format 4 stores stack as Recent: the shorter of those two or, when its
// first samples compress smaller, a byte 2 and each node coded from the latest nodes
// of its sample's thread (recentCodes): on the same capture, 63 KB -> 53
// KB compressed; the generated incident keeps plain. Format 4 also stores
// time as PerCPU, after the CPUs (see clockPart): m27's times 42 KB -> 33
// KB, the generated incident's 865 KB -> 596 KB. Format 5 stores the
// thread's dictionary (pid, tid, comm) as CPUDict: its indexes range coded,
// each from its sample's CPU's sample before (see cpudict.go). Format 6
// stores stack as Tree: as Recent, but in its mode 3 (treeMode) the
// number of stack nodes the chunk was coded from follows the mode byte,
// and a stack met for the first time is coded from the node tree (see
// chains): on the real 27 s capture, 97,605 -> 87,960 bytes of chunks.
//
// Measured on the bundled 96-CPU capture this is about 2.7 bytes a sample
// (1,513,153 bytes of chunk data for 564,480 samples; 1,599,938 in format
// 4, 1,933,781 in format 3), before the tables and the chunks' summaries
// (see bench/ingest); on the real 27 s capture with deep stacks, 1.86
// (87,960 bytes for 47,290 samples; 97,605 in format 5, 103,329 in format
// 4, 127,933 in format 3).

// maxChunkSamples bounds the samples of one stored chunk; the pipeline
// starts a further chunk of the same second (Seq+1) past it.
const maxChunkSamples = 1 << 20

// chunkFormat is the format byte of the chunks written now: the highest
// Since or Recoded of the column list.
var chunkFormat = func() byte {
	f := 0
	for _, k := range subsecond.SampleColumns() {
		f = max(f, k.Info().Format())
	}
	return byte(f)
}()

// chunkParts are the parts of a chunk in the order it stores them: one
// per column, except that adjacent Dict columns of the same Since share
// one dictionary.
var chunkParts = func() []chunkPart {
	var parts []chunkPart
	for _, k := range storeColumns {
		info := k.Info()
		if n := len(parts); isDict(info.Encoding) && n > 0 {
			if d, ok := parts[n-1].(*dictPart); ok && d.since == info.Since && len(d.cols) < maxDict {
				d.cols = append(d.cols, k)
				continue
			}
		}
		if n := len(parts); n > 0 && info.Name == "cpu" {
			if t, ok := parts[n-1].(*typed[int64]); ok && t.Encoding == subsecond.PerCPU {
				parts[n-1] = &clockPart{time: t, cpu: k.(*typed[int32])}
				continue
			}
		}
		if isDict(info.Encoding) {
			parts = append(parts, &dictPart{since: info.Since, cols: []storeColumn{k}})
		} else {
			parts = append(parts, k)
		}
	}
	return parts
}()

// clockPart is a PerCPU time column and the CPU column after it. Chunks
// of formats where time is stored as Deltas hold the times, then the
// CPUs; later ones the CPUs, then a byte 0 and the times as Deltas, or a
// byte 1, the first time (varint), g (the deltas' greatest common
// divisor, as Deltas), p (the median of the first 64 differences between
// a sample's time and its CPU's latest, divided by g), then per sample
// after the first: 2 zig-zag((t − t of the CPU's latest) / g − p), or for
// a CPU's first sample 2 (t − t of the sample before) / g + 1; the
// shorter of the two is kept.
type clockPart struct {
	time *typed[int64]
	cpu  *typed[int32]
}

func (p *clockPart) Since() int { return p.time.Since() }

func (p *clockPart) zero(cols *subsecond.Columns, base, n int) {
	p.time.zero(cols, base, n)
	p.cpu.zero(cols, base, n)
}

func (p *clockPart) encode(b []byte, c *subsecond.Columns, lo, hi int, nodes []subsecond.StackNode) []byte {
	b = p.cpu.encode(b, c, lo, hi, nodes)
	at := len(b)
	b = append(b, 0)
	b = deltas(b, c.Time[lo:hi])
	deltasEnd := len(b)
	b = perCPUTimes(b, c.Time[lo:hi], c.CPU[lo:hi])
	// The shorter is kept: zstd finds few matches in either (on m27 and
	// the generated incident, keeping the one that compresses smaller
	// would save 0.8 KB of 33 KB and nothing, for two compressions).
	if len(b)-deltasEnd < deltasEnd-at {
		return append(b[:at], b[deltasEnd:]...)
	}
	return b[:deltasEnd]
}

func (p *clockPart) decode(d dec, f int, cols *subsecond.Columns, base, n int, lim limits) dec {
	if p.time.EncodingIn(f) == subsecond.Deltas {
		d = p.time.decode(d, f, cols, base, n, lim)
		return p.cpu.decode(d, f, cols, base, n, lim)
	}
	d = p.cpu.decode(d, f, cols, base, n, lim)
	times := cols.Time[base : base+n]
	switch d.byte() {
	case 0:
		undeltas(&d, times)
	case 1:
		unPerCPUTimes(&d, times, cols.CPU[base:base+n])
	default:
		d.fail("bad time encoding")
	}
	return d
}

// deltas appends v, which is sorted, as Deltas stores it.
func deltas(b []byte, v []int64) []byte {
	var g uint64
	for i := 1; i < len(v); i++ {
		g = gcd(g, uint64(v[i]-v[i-1]))
	}
	if g == 0 {
		g = 1
	}
	b = binary.AppendVarint(b, v[0])
	b = binary.AppendUvarint(b, g)
	for i := 1; i < len(v); i++ {
		b = binary.AppendUvarint(b, uint64(v[i]-v[i-1])/g)
	}
	return b
}

// undeltas reads what deltas wrote into dst.
func undeltas(d *dec, dst []int64) {
	t := d.varint()
	g := d.uvarint()
	dst[0] = t
	for i := 1; i < len(dst); i++ {
		delta := d.uvarint()
		if g != 0 && delta > math.MaxInt64/g {
			d.fail("time delta overflows")
		}
		t += int64(delta * g)
		dst[i] = t
	}
}

// byCPU holds a value per CPU: in slices by CPU for the usual CPUs, in a
// map for others (Unknown, or numbers from maxDirectCPU on).
type byCPU[T any] struct {
	v     []T    // by CPU
	met   []bool // by CPU: v holds its value
	other map[int32]T
}

// cpuClock holds the time of each CPU's latest sample.
type cpuClock = byCPU[int64]

const maxDirectCPU = 4096

// get returns cpu's value; false when it has none.
func (k *byCPU[T]) get(cpu int32) (T, bool) {
	if cpu >= 0 && int(cpu) < len(k.v) {
		return k.v[cpu], k.met[cpu]
	}
	v, ok := k.other[cpu]
	return v, ok
}

// set notes v as cpu's value.
func (k *byCPU[T]) set(cpu int32, v T) {
	if cpu >= 0 && cpu < maxDirectCPU {
		if int(cpu) >= len(k.v) {
			k.v = append(k.v, make([]T, int(cpu)+1-len(k.v))...)
			k.met = append(k.met, make([]bool, int(cpu)+1-len(k.met))...)
		}
		k.v[cpu], k.met[cpu] = v, true
		return
	}
	if k.other == nil {
		k.other = map[int32]T{}
	}
	k.other[cpu] = v
}

// perCPUTimes appends a byte 1 and times v (sorted) of samples on CPUs
// cpu as clockPart describes.
func perCPUTimes(b []byte, v []int64, cpu []int32) []byte {
	var g uint64
	for i := 1; i < len(v); i++ {
		g = gcd(g, uint64(v[i]-v[i-1]))
	}
	if g == 0 {
		g = 1
	}
	var clock cpuClock
	ds := make([]int64, 0, 64)
	for i, t := range v {
		if len(ds) == cap(ds) {
			break
		}
		if last, ok := clock.get(cpu[i]); ok {
			ds = append(ds, (t-last)/int64(g))
		}
		clock.set(cpu[i], t)
	}
	var p int64
	if len(ds) > 0 {
		slices.Sort(ds)
		p = ds[len(ds)/2]
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, v[0])
	b = binary.AppendUvarint(b, g)
	b = binary.AppendVarint(b, p)
	clear(clock.met)
	clear(clock.other)
	clock.set(cpu[0], v[0])
	for i := 1; i < len(v); i++ {
		if last, ok := clock.get(cpu[i]); ok {
			b = binary.AppendUvarint(b, 2*zigzag((v[i]-last)/int64(g)-p))
		} else {
			b = binary.AppendUvarint(b, 2*(uint64(v[i]-v[i-1])/g)+1)
		}
		clock.set(cpu[i], v[i])
	}
	return b
}

// unPerCPUTimes reads what perCPUTimes wrote after its byte 1 into dst;
// the times must come out sorted.
func unPerCPUTimes(d *dec, dst []int64, cpu []int32) {
	t := d.varint()
	g := d.uvarint()
	p := d.varint()
	if g == 0 && d.err == nil {
		d.fail("time divisor 0")
	}
	if d.err != nil {
		return
	}
	dst[0] = t
	var clock cpuClock
	clock.set(cpu[0], t)
	for i := 1; i < len(dst); i++ {
		c := d.uvarint()
		last, met := clock.get(cpu[i])
		var from, q int64
		if c&1 == 1 {
			if met {
				d.fail("time from the sample before for a CPU met already")
			}
			from, q = dst[i-1], int64(c>>1)
		} else {
			if !met {
				d.fail("time from a CPU not met yet")
			}
			from, q = last, unzigzag(c>>1)+p
		}
		if q < 0 || uint64(q) > math.MaxInt64/g {
			d.fail("time delta out of range")
		}
		if d.err != nil {
			return
		}
		t := from + q*int64(g)
		if t < dst[i-1] {
			d.fail("times out of order")
			return
		}
		dst[i] = t
		clock.set(cpu[i], t)
	}
}

// chunkPart encodes and decodes one part of a chunk: samples [lo, hi) of
// c appended to b, or n samples read from d into cols from index base on.
// The encoder and decoder are passed by value, so that they stay on the
// stack.
type chunkPart interface {
	Since() int
	encode(b []byte, c *subsecond.Columns, lo, hi int, nodes []subsecond.StackNode) []byte
	decode(d dec, f int, cols *subsecond.Columns, base, n int, lim limits) dec
	zero(cols *subsecond.Columns, base, n int)
}

// encodeChunk encodes samples [lo, hi) of c, which are sorted by time;
// nodes are the stack nodes made so far, which a Tree column codes from
// (their decoder needs the same nodes and may have more).
func encodeChunk(c *subsecond.Columns, lo, hi int, nodes []subsecond.StackNode) []byte {
	n := hi - lo
	e := enc{b: make([]byte, 0, 8*n+64)}
	e.byte(chunkFormat)
	e.uvarint(uint64(n))
	if n == 0 {
		return zstdBlob(e.b)
	}
	for _, p := range chunkParts {
		e.b = p.encode(e.b, c, lo, hi, nodes)
	}
	return zstdBlob(e.b)
}

// limits are the sizes of the tables a chunk's samples index; decodeChunk
// refuses samples beyond them. tree is the profile's stack nodes, which a
// Tree column is coded from; a chunk with one fails to decode without
// them.
type limits struct {
	strings, nodes, events int
	tree                   []subsecond.StackNode
}

// tableLimits returns the limits of capture c's tables and its profile's
// events.
func tableLimits(c *subsecond.Capture) limits {
	return limits{strings: len(c.Strings), nodes: len(c.Nodes), events: len(c.Profile.Events), tree: c.Nodes}
}

// of returns the size of table t, 0 for none.
func (l limits) of(t subsecond.Table) int {
	n, _ := byTable(t, l.strings, l.nodes, l.events)
	return n
}

// byTable returns the one of strings, nodes and events that belongs to
// table t; false for NoTable.
func byTable[V any](t subsecond.Table, strings, nodes, events V) (V, bool) {
	switch t {
	case subsecond.StringTable:
		return strings, true
	case subsecond.NodeTable:
		return nodes, true
	case subsecond.EventTable:
		return events, true
	}
	var zero V
	return zero, false
}

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
	f := d.byte()
	if (f < 1 || f > chunkFormat) && d.err == nil {
		return fmt.Errorf("%w: chunk format %d", errCorrupt, f)
	}
	n := d.count(min(maxChunkSamples, len(raw))) // every sample takes bytes in several columns
	if d.err != nil || n == 0 {
		return d.end()
	}
	base := cols.Len()
	cols.Resize(base + n)
	for _, p := range chunkParts {
		if p.Since() > int(f) {
			p.zero(cols, base, n)
		} else {
			d = p.decode(d, int(f), cols, base, n, lim)
		}
	}
	if err := d.end(); err != nil {
		cols.Resize(base)
		return err
	}
	return nil
}

// maxDict bounds the columns of one dictionary.
const maxDict = 4

// isDict reports whether columns of encoding e share a dictionary with
// the Dict columns of their Since beside them.
func isDict(e subsecond.Encoding) bool { return e == subsecond.Dict || e == subsecond.CPUDict }

// dictPart is adjacent Dict columns: the number of their distinct tuples,
// the tuples in order of first appearance, then one index per sample.
type dictPart struct {
	since int
	cols  []storeColumn
}

func (p *dictPart) Since() int { return p.since }

// dictBatch is how many samples' tuples encode gathers at a time.
const dictBatch = 4096

func (p *dictPart) encode(b []byte, c *subsecond.Columns, lo, hi int, _ []subsecond.StackNode) []byte {
	e := enc{b: b}
	n := hi - lo
	dict := make(map[[maxDict]uint64]uint32, 256)
	var first []int // per tuple, its first sample
	idx := make([]uint32, n)
	keys := make([][maxDict]uint64, min(n, dictBatch))
	for at := 0; at < n; at += dictBatch {
		m := min(dictBatch, n-at)
		for j, k := range p.cols {
			k.gather(keys[:m], j, c, lo+at)
		}
		for i, key := range keys[:m] {
			t, ok := dict[key]
			if !ok {
				t = uint32(len(first))
				dict[key] = t
				first = append(first, lo+at+i)
			}
			idx[at+i] = t
		}
	}
	e.uvarint(uint64(len(first)))
	for _, i := range first {
		for _, k := range p.cols {
			e.b = k.put(e.b, c, i)
		}
	}
	if p.cols[0].Info().Encoding == subsecond.CPUDict {
		e.bytes(encodeCPUTuples(idx, c.CPU[lo:hi], len(first)))
		return e.b
	}
	for _, t := range idx {
		e.uvarint(uint64(t))
	}
	return e.b
}

func (p *dictPart) decode(d dec, f int, cols *subsecond.Columns, base, n int, lim limits) dec {
	nt := d.count(n)
	tuples := make([]dictValues, len(p.cols))
	for j, k := range p.cols {
		tuples[j] = k.values(nt)
	}
	for t := range nt {
		for j, k := range p.cols {
			d = tuples[j].read(d, t, lim.of(k.Info().Table))
		}
	}
	idx := make([]uint32, n)
	if p.cols[0].Info().EncodingIn(f) == subsecond.CPUDict {
		if b := d.bytes(); d.err == nil && !decodeCPUTuples(b, idx, cols.CPU[base:base+n], nt) {
			d.fail("bad tuple indexes")
		}
		if d.err != nil {
			return d
		}
	} else {
		for i := range idx {
			idx[i] = uint32(d.index(nt))
			if d.err != nil {
				return d
			}
		}
	}
	for _, v := range tuples {
		v.spread(cols, base, idx)
	}
	return d
}

func (p *dictPart) zero(cols *subsecond.Columns, base, n int) {
	for _, k := range p.cols {
		k.zero(cols, base, n)
	}
}

// storeColumn is a column of the list with the store's operations on its
// values: encoding, decoding and renumbering. A Dict column's own encode
// and decode are not used: its dictPart encodes it.
type storeColumn interface {
	chunkPart
	Info() subsecond.ColumnInfo
	// gather sets keys[i][j] to sample at+i's value.
	gather(keys [][maxDict]uint64, j int, c *subsecond.Columns, at int)
	// put writes sample i's value as a Dict column does.
	put(b []byte, c *subsecond.Columns, i int) []byte
	// values returns room for n values of a dictionary.
	values(n int) dictValues
	// renumber replaces every value v by m[v]; m is a slice of the
	// column's value type.
	renumber(c *subsecond.Columns, m any)
}

// dictValues are one column's values in a dictionary being decoded.
type dictValues interface {
	read(d dec, t int, limit int) dec
	spread(cols *subsecond.Columns, base int, idx []uint32)
}

// storeColumns is the column list with the store's operations.
var storeColumns = func() []storeColumn {
	var out []storeColumn
	for _, k := range subsecond.SampleColumns() {
		switch k := k.(type) {
		case *subsecond.Col[int64]:
			out = append(out, newTyped(k))
		case *subsecond.Col[int32]:
			out = append(out, newTyped(k))
		case *subsecond.Col[uint64]:
			out = append(out, newTyped(k))
		case *subsecond.Col[uint32]:
			out = append(out, newTyped(k))
		case *subsecond.Col[uint16]:
			out = append(out, newTyped(k))
		default:
			panic(fmt.Sprintf("store: column %s has a value type without a case here", k.Info().Name))
		}
	}
	return out
}()

// typed is a column whose values have type T.
type typed[T subsecond.Value] struct {
	*subsecond.Col[T]
	signed bool // values are written zig-zag (varint), else as uvarints
}

func newTyped[T subsecond.Value](k *subsecond.Col[T]) *typed[T] {
	return &typed[T]{Col: k, signed: ^T(0) < 0 && k.Table == subsecond.NoTable}
}

func (k *typed[T]) Since() int { return k.ColumnInfo.Since }

func (k *typed[T]) encode(b []byte, c *subsecond.Columns, lo, hi int, nodes []subsecond.StackNode) []byte {
	e := enc{b: b}
	v := (*k.Of(c))[lo:hi]
	switch k.Encoding {
	case subsecond.Deltas:
		var g uint64
		for i := 1; i < len(v); i++ {
			g = gcd(g, uint64(int64(v[i])-int64(v[i-1])))
		}
		if g == 0 {
			g = 1
		}
		e.varint(int64(v[0]))
		e.uvarint(g)
		for i := 1; i < len(v); i++ {
			e.uvarint(uint64(int64(v[i])-int64(v[i-1])) / g)
		}
	case subsecond.Plain:
		if k.signed {
			for _, x := range v {
				e.varint(int64(x))
			}
		} else {
			for _, x := range v {
				e.uvarint(uint64(x))
			}
		}
	case subsecond.Runs:
		runs(&e, v)
	case subsecond.Rising, subsecond.Recent, subsecond.Tree:
		// Written each way: of plain and rising the shorter is kept, as
		// zstd leaves their difference; recent is kept when its first
		// recentProbe samples compress smaller than the other's.
		// Recent's ranks are smaller than rising's differences wherever
		// threads repeat their stacks, but where few stacks recur in the
		// same order (the generated incident's), plain's repeats are
		// zstd matches that ranks break: there recent is the shortest
		// uncompressed and the longest compressed (761 KB against
		// plain's 711 KB). Probing a prefix costs a tenth of comparing
		// whole columns and chooses as they do on m27 and the incident.
		probe := min(len(v), recentProbe)
		at := len(e.b)
		e.byte(risingMode)
		var top int64
		probeEnd := [2]int{}
		for i, x := range v {
			if i == probe {
				probeEnd[0] = len(e.b)
			}
			e.uvarint(zigzag(int64(x) - top))
			top = max(top, int64(x))
		}
		if probe == len(v) {
			probeEnd[0] = len(e.b)
		}
		best, bestProbe := e.b[at:], e.b[at:probeEnd[0]]
		mark := len(e.b)
		e.byte(plainMode)
		for i, x := range v {
			if i == probe {
				probeEnd[1] = len(e.b)
			}
			e.uvarint(uint64(x))
		}
		if probe == len(v) {
			probeEnd[1] = len(e.b)
		}
		if len(e.b)-mark < len(best) {
			best, bestProbe = e.b[mark:], e.b[mark:probeEnd[1]]
		}
		if (k.Encoding == subsecond.Recent || k.Encoding == subsecond.Tree) && k.Table != subsecond.NoTable {
			mark = len(e.b)
			tid := c.TID[lo:hi]
			var ch *chains
			if k.Encoding == subsecond.Tree {
				ch = &chains{nodes: nodes}
			}
			if recent := recentCodes(e.b, v[:probe], tid[:probe], ch); zstdSize(recent[mark:]) < zstdSize(bestProbe) {
				e.b = recentCodes(recent[:mark], v, tid, ch)
				best = e.b[mark:]
			}
		}
		e.b = append(e.b[:at], best...)
	}
	return e.b
}

func (k *typed[T]) decode(d dec, f int, cols *subsecond.Columns, base, n int, lim limits) dec {
	dst := (*k.Of(cols))[base : base+n]
	limit := lim.of(k.Table)
	switch k.EncodingIn(f) {
	case subsecond.Deltas:
		t := d.varint()
		g := d.uvarint()
		dst[0] = T(t)
		for i := 1; i < n; i++ {
			delta := d.uvarint()
			if g != 0 && delta > math.MaxInt64/g {
				d.fail("time delta overflows")
			}
			t += int64(delta * g)
			dst[i] = T(t)
		}
	case subsecond.Plain:
		for i := range dst {
			dst[i] = k.read(&d, limit)
		}
	case subsecond.Runs:
		k.unruns(&d, dst, limit)
	case subsecond.Rising, subsecond.Recent, subsecond.Tree:
		switch mode, e := d.byte(), k.EncodingIn(f); {
		case mode == plainMode:
			for i := range dst {
				dst[i] = k.read(&d, limit)
			}
			return d
		case mode == risingMode:
		case mode == recentMode && e == subsecond.Recent:
			return k.unrecent(d, dst, cols.TID[base:base+n], limit, nil)
		case mode == treeMode && e == subsecond.Tree:
			known := d.uvarint()
			if known > uint64(len(lim.tree)) && d.err == nil {
				d.fail(fmt.Sprintf("stacks coded from %d stack nodes, of which %d are given", known, len(lim.tree)))
			}
			if d.err != nil {
				return d
			}
			return k.unrecent(d, dst, cols.TID[base:base+n], limit, &chains{nodes: lim.tree[:known]})
		default:
			d.fail("bad stack encoding")
			return d
		}
		var top int64
		for i := range dst {
			v := top + unzigzag(d.uvarint())
			if !k.valid(v, limit) {
				d.fail(fmt.Sprintf("value %d out of range", v))
			}
			if d.err != nil {
				return d
			}
			dst[i] = T(v)
			top = max(top, v)
		}
	}
	return d
}

// Modes of a Rising, Recent or Tree column: the byte before its values.
const (
	plainMode  = 0
	risingMode = 1
	recentMode = 2 // Recent only
	treeMode   = 3 // Tree only
)

// recentProbe is how many samples' codes choose between recent and the
// other codes of a Recent column.
const recentProbe = 1024

// recentLen is how many of a thread's latest values Recent keeps. Recent
// is for the indexes of a table, below 2^31.
const recentLen = 16

// threadRows gives each thread of a chunk a row of its latest values,
// most recent first; -1 when none. It is a hash table with open
// addressing, at most half full: a look-up per sample.
type threadRows struct {
	slots []threadSlot // a power of two of them
	n     int
	rows  []int32
}

type threadSlot struct {
	tid int32
	row int32 // 1 + the index of the row's first value; 0: free
}

func newThreadRows() *threadRows {
	return &threadRows{slots: make([]threadSlot, 64), rows: make([]int32, 0, 16*recentLen)}
}

func (t *threadRows) row(tid int32) []int32 {
	mask := uint32(len(t.slots) - 1)
	for i := uint32(tid) * 0x9e3779b1 >> 7 & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.row == 0 {
			at := len(t.rows)
			for range recentLen {
				t.rows = append(t.rows, -1)
			}
			*s = threadSlot{tid: tid, row: int32(at + 1)}
			if t.n++; 2*t.n > len(t.slots) {
				t.grow()
			}
			return t.rows[at : at+recentLen]
		}
		if s.tid == tid {
			return t.rows[s.row-1 : int(s.row-1)+recentLen]
		}
	}
}

func (t *threadRows) grow() {
	old := t.slots
	t.slots = make([]threadSlot, 2*len(old))
	mask := uint32(len(t.slots) - 1)
	for _, s := range old {
		if s.row == 0 {
			continue
		}
		i := uint32(s.tid) * 0x9e3779b1 >> 7 & mask
		for t.slots[i].row != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// moveToFront moves the value at k of row (the last when it enters) to
// the front as v.
func moveToFront(row []int32, k int, v int32) {
	row = row[:k+1]
	for j := k; j > 0; j-- {
		row[j] = row[j-1]
	}
	row[0] = v
}

// recentCodes appends recentMode and the codes of values v of samples of
// threads tid: 3(v − top − 1) for a value above the largest before it
// (top, 0 before the first), 3r + 1 for the r-th latest value of the
// thread, else 3(top − v) + 2. With chains (a Tree column's), it appends
// treeMode and the number of stack nodes the chains know instead, and a
// value above top is 3 zig-zag(e − v) where e is the end of the chain
// after top (chains.end): 6(e − v) at or below it, else 6(v − e) − 3.
func recentCodes[T subsecond.Value](b []byte, v []T, tid []int32, ch *chains) []byte {
	if ch == nil {
		b = append(b, recentMode)
	} else {
		b = binary.AppendUvarint(append(b, treeMode), uint64(len(ch.nodes)))
	}
	t := newThreadRows()
	var top int64
	for i, x := range v {
		x := int64(x)
		row := t.row(tid[i])
		if x > top {
			c := 3 * uint64(x-top-1)
			if ch != nil {
				c = 3 * zigzag(ch.end(top)-x)
			}
			b = binary.AppendUvarint(b, c)
			top = x
			moveToFront(row, recentLen-1, int32(x))
			continue
		}
		r := slices.Index(row, int32(x))
		if r >= 0 {
			b = binary.AppendUvarint(b, 3*uint64(r)+1)
		} else {
			b = binary.AppendUvarint(b, 3*uint64(top-x)+2)
			r = recentLen - 1
		}
		moveToFront(row, r, int32(x))
	}
	return b
}

// unrecent reads what recentCodes wrote (after its mode byte, and for a
// Tree column the count of nodes its chains were made from) into dst.
func (k *typed[T]) unrecent(d dec, dst []T, tid []int32, limit int, ch *chains) dec {
	t := newThreadRows()
	var top int64
	for i := range dst {
		c := d.uvarint()
		row := t.row(tid[i])
		var v int64
		r := recentLen - 1 // a value met first or not among the thread's latest enters its row
		switch c % 3 {
		case 0:
			if ch == nil {
				v = top + 1 + int64(c/3)
			} else if v = ch.end(top) - unzigzag(c/3); v <= top {
				d.fail("new stack not above the stacks before it")
				return d
			}
		case 1:
			if c/3 >= recentLen {
				d.fail("recent value out of range")
				return d
			}
			r = int(c / 3)
			v = int64(row[r])
		default:
			v = top - int64(c/3)
		}
		if v < 0 || c/3 > math.MaxInt32 || !k.valid(v, limit) {
			d.fail(fmt.Sprintf("value %d out of range", v))
		}
		if d.err != nil {
			return d
		}
		dst[i] = T(v)
		top = max(top, v)
		moveToFront(row, r, int32(v))
	}
	return d
}

// chains predicts the stack of a sample met for the first time: a new
// stack's new nodes are made in a row, each the child of the one before,
// so after the largest node so far (top) the stack is nearly always the
// last node of the chain that starts at top + 1 (on the real 27 s capture,
// 28,791 of 28,830 stacks; their codes went from 3(v − top − 1), a few
// bits each, to 0, and its stack columns from 42.9 KB to 33.7 KB
// compressed). Only the nodes given count: those made when the chunk was
// encoded, which its decoder may have more of.
type chains struct {
	nodes       []subsecond.StackNode
	start, last int64 // the latest chain walked: nodes [start, last]
}

// end returns the last node of the chain that starts at top + 1 (top + 1
// itself when it is not among the nodes). A chain's later nodes start
// chains that end where it does, so walking each node once serves a
// chunk's new stacks, which come in the order they were made.
func (ch *chains) end(top int64) int64 {
	s := top + 1
	if s > ch.start && s <= ch.last {
		return ch.last
	}
	w := s
	for w+1 < int64(len(ch.nodes)) && int64(ch.nodes[w+1].Parent) == w {
		w++
	}
	ch.start, ch.last = s, w
	return w
}

// valid reports whether v is a value of the column: an index below limit,
// or a value of type T.
func (k *typed[T]) valid(v int64, limit int) bool {
	if k.Table != subsecond.NoTable {
		return v >= 0 && v < int64(limit)
	}
	return int64(T(v)) == v
}

// read reads one value: an index below limit, or a value of type T.
func (k *typed[T]) read(d *dec, limit int) T {
	if k.Table != subsecond.NoTable {
		return T(d.index(limit))
	}
	if k.signed {
		v := d.varint()
		if int64(T(v)) != v {
			d.fail("value out of range")
			return 0
		}
		return T(v)
	}
	v := d.uvarint()
	if uint64(T(v)) != v {
		d.fail("value out of range")
		return 0
	}
	return T(v)
}

// runs writes v as run-length pairs, preceded by their number.
func runs[T subsecond.Value](e *enc, v []T) {
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

// unruns reads run-length pairs into dst, which they must fill exactly;
// the values of a column that indexes a table must be below limit.
func (k *typed[T]) unruns(d *dec, dst []T, limit int) {
	np := d.count(len(dst))
	at := 0
	for range np {
		v := d.uvarint()
		run := d.count(len(dst) - at)
		if k.Table != subsecond.NoTable && v >= uint64(limit) || !k.fits(v) {
			d.fail(fmt.Sprintf("value %d out of range", v))
		}
		if d.err != nil {
			return
		}
		x := T(v)
		for i := at; i < at+run; i++ {
			dst[i] = x
		}
		at += run
	}
	if at != len(dst) {
		d.fail("runs do not cover the chunk")
	}
}

// fits reports whether v, as runs writes a value, is one of type T.
func (k *typed[T]) fits(v uint64) bool {
	if k.signed {
		return int64(T(v)) == int64(v)
	}
	return uint64(T(v)) == v
}

func (k *typed[T]) zero(cols *subsecond.Columns, base, n int) { clear((*k.Of(cols))[base : base+n]) }

func (k *typed[T]) gather(keys [][maxDict]uint64, j int, c *subsecond.Columns, at int) {
	v := (*k.Of(c))[at : at+len(keys)]
	for i := range keys {
		keys[i][j] = uint64(v[i])
	}
}

func (k *typed[T]) put(b []byte, c *subsecond.Columns, i int) []byte {
	x := (*k.Of(c))[i]
	if k.signed {
		return binary.AppendVarint(b, int64(x))
	}
	return binary.AppendUvarint(b, uint64(x))
}

func (k *typed[T]) values(n int) dictValues { return &typedValues[T]{k: k, v: make([]T, n)} }

func (k *typed[T]) renumber(c *subsecond.Columns, m any) {
	mm := m.([]T)
	v := *k.Of(c)
	for i, x := range v {
		v[i] = mm[x]
	}
}

// typedValues are a dictionary's values of one column.
type typedValues[T subsecond.Value] struct {
	k *typed[T]
	v []T
}

func (t *typedValues[T]) read(d dec, i int, limit int) dec {
	t.v[i] = t.k.read(&d, limit)
	return d
}

func (t *typedValues[T]) spread(cols *subsecond.Columns, base int, idx []uint32) {
	dst := (*t.k.Of(cols))[base:]
	for i, x := range idx {
		dst[i] = t.v[x]
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// noTimeSecond is the Second of the chunks of samples without a time.
var noTimeSecond = chunkSecond(subsecond.NoTime)

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
