package flame

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// WritePprof writes g's samples as a gzipped pprof profile (profile.proto,
// read by go tool pprof). Each sample has two values, samples/count and
// cpu/nanoseconds (the perf period, which is nanoseconds for cpu-clock; when
// the selection carries no periods, one sampling interval 1e9/FrequencyHz
// per sample), labels comm, cpu, pid and tid (the ids left out when perf
// recorded none), and the stack leaf-first with the filter's Only applied.
// A capture frame is a location (an inlined chain "A->B" one location with
// B's line first), a DSO a mapping, a (name, DSO) pair a function.
// DurationNanos is the range's length and a comment names the range in
// seconds from T0; TimeNanos is its start as wall-clock time, when the
// capture has one (subsecond.WallClock), else 0: perf's own clock counts
// from boot, which pprof would show as a date in 1970. The profile passes
// profile.CheckValid.
//
// For a differential graph the profile is the target's samples plus the
// base's with their values negated and the label pprof::base=true: exactly
// the profile `go tool pprof -diff_base=BASE TARGET` builds from the two
// ranges' own exports, so `go tool pprof -top DIFF` lists each function's
// change in raw counts (target − base). The ranges' lengths are not
// normalised, as -diff_base does not normalise.
//
// The protobuf is written straight from the capture's arrays, as the Go
// runtime writes its own profiles: strings, mappings, functions and
// locations are numbered and written when first met, between the samples
// (profile.proto's fields may come in any order), so a request allocates a
// few buffers and tables, not an object per sample or location. Samples are
// grouped without a map lookup per sample: the kept samples are bucketed by
// stack node with a counting sort, and each bucket ordered by command, CPU,
// pid and tid.
func (g *Graph) WritePprof(w io.Writer) error {
	c := g.c
	m, err := g.f.Compile(c)
	if err != nil {
		return err
	}
	bc, bm := g.baseCapture(), m
	if g.BaseN != nil && bc != c {
		if bm, err = g.f.Compile(bc); err != nil {
			return fmt.Errorf("base profile: %w", err)
		}
	}
	// klauspost's gzip writes the same format as the standard library's
	// (which profile.Write uses) in about a third of the time.
	zw := gzip.NewWriter(w)
	e := newPprofWriter(zw)
	e.valueType(profSampleType, "samples", "count")
	e.valueType(profSampleType, "cpu", "nanoseconds")
	e.valueType(profPeriodType, "cpu", "nanoseconds")
	e.int(profPeriod, interval(c))
	if wc := c.Profile.Wall; wc.Known() {
		e.int(profTimeNanos, wc.Wall(g.Start))
	}
	e.int(profDurationNanos, g.End-g.Start)
	if len(c.Profile.Events) > 0 {
		ev := g.f.Event
		if ev == "" {
			ev = c.Profile.Events[c.Profile.DefaultEvent()].Name
		}
		e.comment("event: " + ev)
	}
	t0 := c.Profile.T0()
	e.comment(fmt.Sprintf("range: %s from T0 of %s", query.DisplayRange(g.Start-t0, g.End-t0), c.Profile.Name))
	if g.BaseN != nil {
		e.comment("differential: samples labelled pprof::base=true are the base range's, negated (as go tool pprof -diff_base makes them)")
	}

	target := &pprofCapture{c: c, ix: g.ix}
	lo, hi := c.Window(subsecond.Range{Start: g.Start, End: g.End})
	e.samples(target, m, lo, hi, false)
	if g.BaseN != nil {
		base := target
		if bc != c {
			base = &pprofCapture{c: bc, ix: g.baseIndex()}
		}
		lo, hi := bc.Window(subsecond.Range{Start: g.BaseStart, End: g.BaseEnd})
		e.samples(base, bm, lo, hi, true)
	}
	if err := e.flush(); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}

// interval returns c's sampling interval in nanoseconds, 0 when unknown.
func interval(c *subsecond.Capture) int64 {
	if hz := c.Profile.FrequencyHz; hz > 0 {
		return int64(math.Round(1e9 / hz))
	}
	return 0
}

// The field numbers of profile.proto (github.com/google/pprof,
// proto/profile.proto) that WritePprof writes.
const (
	profSampleType    = 1 // Profile.sample_type: repeated ValueType
	profSample        = 2 // Profile.sample: repeated Sample
	profMapping       = 3 // Profile.mapping: repeated Mapping
	profLocation      = 4 // Profile.location: repeated Location
	profFunction      = 5 // Profile.function: repeated Function
	profStringTable   = 6 // Profile.string_table: repeated string, [0] = ""
	profTimeNanos     = 9
	profDurationNanos = 10
	profPeriodType    = 11 // ValueType
	profPeriod        = 12
	profComment       = 13 // repeated int64, string table indices

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1 // repeated uint64, leaf first
	sampleValue      = 2 // repeated int64
	sampleLabel      = 3 // repeated Label
	labelKey         = 1
	labelStr         = 2

	mappingID           = 1
	mappingFilename     = 5
	mappingHasFunctions = 7

	locationID        = 1
	locationMappingID = 2
	locationAddress   = 3
	locationLine      = 4 // repeated Line
	lineFunctionID    = 1

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
	functionFilename   = 4
)

// pprofFlush is how many encoded bytes pprofWriter holds before it writes
// them on.
const pprofFlush = 32 << 10

// pprofWriter encodes a pprof profile as it goes. Its string table, and
// its mappings, functions and locations, are shared by the samples of
// both captures of a differential graph.
type pprofWriter struct {
	w   io.Writer
	err error
	out []byte // encoded top-level fields not yet written to w
	msg []byte // the message being built

	strs  map[string]int64    // string table indices
	nums  map[int32]int64     // string table indices of decimal label values
	files map[int64]uint64    // mapping id by file name's string index
	funcs map[[2]int64]uint64 // function id by name's and file's string indices
	nloc  uint64              // locations written

	locs  []uint64 // the current sample's location ids, leaf first
	lines []uint64 // the current location's function ids

	// String table indices of the label keys.
	comm, cpu, pid, tid, base, yes int64
}

func newPprofWriter(w io.Writer) *pprofWriter {
	e := &pprofWriter{w: w, out: make([]byte, 0, pprofFlush+4<<10),
		strs: map[string]int64{}, nums: map[int32]int64{}, files: map[int64]uint64{}, funcs: map[[2]int64]uint64{}}
	e.str("") // string_table[0] must be ""
	e.comm, e.cpu, e.pid, e.tid = e.str("comm"), e.str("cpu"), e.str("pid"), e.str("tid")
	e.base, e.yes = e.str("pprof::base"), e.str("true")
	return e
}

// str returns s's index in the string table, adding it when new.
func (e *pprofWriter) str(s string) int64 {
	i, ok := e.strs[s]
	if !ok {
		i = e.entry()
		e.strs[s] = i
		e.out = protowire.AppendString(e.out, s)
	}
	return i
}

// num returns the index in the string table of v written in decimal.
// Numbers are string labels: pprof drops numeric labels whose value is 0,
// and CPU 0 and the idle task's pid 0 matter.
func (e *pprofWriter) num(v int32) int64 {
	i, ok := e.nums[v]
	if !ok {
		i = e.entry()
		e.nums[v] = i
		var d [16]byte
		e.out = protowire.AppendBytes(e.out, strconv.AppendInt(d[:0], int64(v), 10))
	}
	return i
}

// entry starts the next entry of the string table, its bytes to follow,
// and returns its index.
func (e *pprofWriter) entry() int64 {
	e.out = protowire.AppendTag(e.out, profStringTable, protowire.BytesType)
	return int64(len(e.strs) + len(e.nums))
}

// int writes the top-level int64 field num, unless v is 0 (its default).
func (e *pprofWriter) int(num protowire.Number, v int64) {
	e.out = appendField(e.out, num, v)
}

// comment adds s to the profile's comments.
func (e *pprofWriter) comment(s string) {
	e.int(profComment, e.str(s))
}

// valueType writes the top-level ValueType field num.
func (e *pprofWriter) valueType(num protowire.Number, typ, unit string) {
	t, u := e.str(typ), e.str(unit)
	m := e.msg[:0]
	m = appendField(m, valueTypeType, t)
	m = appendField(m, valueTypeUnit, u)
	e.message(num, m)
}

// appendField appends the int64 field num with value v, unless v is 0.
func appendField(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// sizeField returns the size of the int64 field num with value v as
// appendField encodes it: 0 when v is 0, which it leaves out.
func sizeField(num protowire.Number, v int64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(uint64(v))
}

// appendPacked appends vs as the packed repeated varint field num.
func appendPacked(b []byte, num protowire.Number, vs ...uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// message writes the encoded message m as the top-level field num, and
// keeps m's buffer for the next message.
func (e *pprofWriter) message(num protowire.Number, m []byte) {
	e.out = protowire.AppendTag(e.out, num, protowire.BytesType)
	e.out = protowire.AppendBytes(e.out, m)
	e.msg = m[:0]
	if len(e.out) >= pprofFlush {
		e.flush()
	}
}

// flush writes what is encoded to w and returns the first error of any
// write.
func (e *pprofWriter) flush() error {
	if e.err == nil && len(e.out) > 0 {
		_, e.err = e.w.Write(e.out)
	}
	e.out = e.out[:0]
	return e.err
}

// mapping returns the id of the mapping of the file with string index
// file, writing it when new.
func (e *pprofWriter) mapping(file int64) uint64 {
	if id, ok := e.files[file]; ok {
		return id
	}
	id := uint64(len(e.files) + 1)
	e.files[file] = id
	m := e.msg[:0]
	m = appendField(m, mappingID, int64(id))
	m = appendField(m, mappingFilename, file)
	m = appendField(m, mappingHasFunctions, 1)
	e.message(profMapping, m)
	return id
}

// function returns the id of the function name in file (string indices),
// writing it when new.
func (e *pprofWriter) function(name, file int64) uint64 {
	k := [2]int64{name, file}
	if id, ok := e.funcs[k]; ok {
		return id
	}
	id := uint64(len(e.funcs) + 1)
	e.funcs[k] = id
	m := e.msg[:0]
	m = appendField(m, functionID, int64(id))
	m = appendField(m, functionName, name)
	m = appendField(m, functionSystemName, name)
	m = appendField(m, functionFilename, file)
	e.message(profFunction, m)
	return id
}

// pprofCapture is a capture whose samples a pprofWriter writes, with the
// location ids of its frames.
type pprofCapture struct {
	c  *subsecond.Capture
	ix *index
	// locs[j][fr] is the location of capture frame fr without (j = 0) and
	// with (1) the Java tidying of commands named java*; 0 until written.
	locs [2][]uint64
}

// location returns the location id of pc's frame fr as commands with
// tidying java see it, writing the location (and its mapping and
// functions) when new.
func (e *pprofWriter) location(pc *pprofCapture, fr int32, java int) uint64 {
	locs := pc.locs[java]
	if locs == nil {
		locs = make([]uint64, len(pc.c.Frames))
		pc.locs[java] = locs
	}
	if id := locs[fr]; id != 0 {
		return id
	}
	ix := pc.ix
	dso := ix.strings[ix.frDSO[fr]]
	file := e.str(dso)
	var mp uint64
	if dso != "" {
		mp = e.mapping(file)
	}
	// An inlined chain "A->B" is one location with B's line first.
	names := ix.frNames[java][fr]
	e.lines = e.lines[:0]
	for i := len(names) - 1; i >= 0; i-- {
		e.lines = append(e.lines, e.function(e.str(ix.strings[names[i]]), file))
	}
	e.nloc++
	id := e.nloc
	m := e.msg[:0]
	m = appendField(m, locationID, int64(id))
	m = appendField(m, locationMappingID, int64(mp))
	m = appendField(m, locationAddress, int64(pc.c.Frames[fr].Addr))
	for _, fn := range e.lines {
		m = protowire.AppendTag(m, locationLine, protowire.BytesType)
		m = protowire.AppendVarint(m, uint64(sizeField(lineFunctionID, int64(fn))))
		m = appendField(m, lineFunctionID, int64(fn))
	}
	e.message(profLocation, m)
	locs[fr] = id
	return id
}

// appendLabel appends a Label {key, str} as field sampleLabel. A str of 0,
// the empty string (a command perf printed no name for), is left out.
func appendLabel(b []byte, key, str int64) []byte {
	b = protowire.AppendTag(b, sampleLabel, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sizeField(labelKey, key)+sizeField(labelStr, str)))
	b = appendField(b, labelKey, key)
	return appendField(b, labelStr, str)
}

// samples writes the samples [lo, hi) of pc's capture that m keeps, one
// pprof sample per stack node, command, CPU, pid and tid, with negated
// values and the label pprof::base=true when base is set.
func (e *pprofWriter) samples(pc *pprofCapture, m *query.Match, lo, hi int, base bool) {
	c := pc.c
	s := &c.Samples
	kept := sortedSamples(c, m, lo, hi)
	periods := false
	for _, i := range kept {
		if s.Weight[i] != 1 {
			periods = true
			break
		}
	}
	iv := interval(c)
	sign := int64(1)
	if base {
		sign = -1
	}
	stackOf, javaOf := int32(-1), 0 // the stack node, and tidying, whose locations e.locs holds
	for a := 0; a < len(kept); {
		i := kept[a]
		k := keyOf(s, i)
		var n, w int64
		b := a
		for ; b < len(kept) && s.Stack[kept[b]] == s.Stack[i] && keyOf(s, kept[b]) == k; b++ {
			n++
			w += int64(s.Weight[kept[b]])
		}
		a = b
		comm := c.Strings[k.comm]
		java := 0
		if strings.HasPrefix(comm, "java") {
			java = 1
		}
		if node := s.Stack[i]; node != stackOf || java != javaOf {
			e.locs = e.locs[:0]
			for q := node; q > 0; q = c.Nodes[q].Parent {
				if fr := c.Nodes[q].Frame; m.KeepFrame(fr) {
					e.locs = append(e.locs, e.location(pc, fr, java))
				}
			}
			stackOf, javaOf = node, java
		}
		if !periods && iv > 0 {
			w = n * iv
		}
		commStr := e.str(comm)
		msg := appendPacked(e.msg[:0], sampleLocationID, e.locs...)
		msg = appendPacked(msg, sampleValue, uint64(sign*n), uint64(sign*w))
		msg = appendLabel(msg, e.comm, commStr)
		if k.cpu != subsecond.Unknown {
			msg = appendLabel(msg, e.cpu, e.num(k.cpu))
		}
		if k.pid != subsecond.Unknown {
			msg = appendLabel(msg, e.pid, e.num(k.pid))
		}
		if base {
			msg = appendLabel(msg, e.base, e.yes)
		}
		if k.tid != subsecond.Unknown {
			msg = appendLabel(msg, e.tid, e.num(k.tid))
		}
		e.message(profSample, msg)
	}
}

// sampleKey is what tells a capture's samples apart within a stack node.
type sampleKey struct {
	comm          uint32
	cpu, pid, tid int32
}

func keyOf(s *subsecond.Columns, i int32) sampleKey {
	return sampleKey{s.Comm[i], s.CPU[i], s.PID[i], s.TID[i]}
}

// sortedSamples returns the samples of [lo, hi) that m keeps, ordered by
// stack node (a counting sort), then command, CPU, pid and tid.
func sortedSamples(c *subsecond.Capture, m *query.Match, lo, hi int) []int32 {
	s := &c.Samples
	start := make([]int32, len(c.Nodes)+1)
	n := 0
	keep := make([]bool, hi-lo)
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			keep[i-lo] = true
			start[s.Stack[i]+1]++
			n++
		}
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	out := make([]int32, n)
	for i := lo; i < hi; i++ {
		if keep[i-lo] {
			node := s.Stack[i]
			out[start[node]] = int32(i)
			start[node]++
		}
	}
	// start[node] is now the end of node's run.
	from := int32(0)
	for node := range c.Nodes {
		to := start[node]
		if to-from > 1 {
			slices.SortFunc(out[from:to], func(a, b int32) int {
				ka, kb := keyOf(s, a), keyOf(s, b)
				return cmp.Or(cmp.Compare(ka.comm, kb.comm), cmp.Compare(ka.cpu, kb.cpu),
					cmp.Compare(ka.pid, kb.pid), cmp.Compare(ka.tid, kb.tid))
			})
		}
		from = to
	}
	return out
}
