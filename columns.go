package subsecond

import (
	"cmp"
	"slices"
	"sort"
	"unsafe"
)

// Sample is one perf sample. Frames are leaf-first.
type Sample struct {
	Comm   string // complete command name, spaces included
	PID    int32  // Unknown when absent
	TID    int32  // Unknown when absent
	CPU    int32  // Unknown when absent
	Time   int64  // nanoseconds as perf printed them; NoTime when absent
	Period uint64 // sample period; 0 when absent
	Event  string // event name with modifiers (":ppp", ":u") removed
	Cgroup string // cgroup path (perf record --all-cgroups, perf script -F +cgroup); "" when absent
	Frames []Frame
	Line   int // line number of the sample's header line, 1-based
}

// Columns holds one entry per sample in each slice, all of the same length.
// Comm indexes Capture.Strings; Event indexes Capture.Profile.Events;
// Stack indexes Capture.Nodes.
//
// Each slice is one row of the column list (SampleColumns), which says how
// a builder fills it, how the store encodes it and which table it indexes;
// the operations on whole Columns below go through that list, so a new
// per-sample field is a slice here and a row there.
type Columns struct {
	Time   []int64
	CPU    []int32
	PID    []int32
	TID    []int32
	Comm   []uint32
	Event  []uint16
	Weight []uint64 // the sample's period, or 1 when the input had none
	Stack  []int32
	Cgroup []uint32 // indexes Capture.Strings; 0 ("") when the input had none
}

// sampleColumns is the column list: one row per slice of Columns, in the
// order a chunk stores them. A new column goes at the end, with a Since
// above every other's.
var sampleColumns = []Column{
	newCol(ColumnInfo{Name: "time", Encoding: PerCPU, Since: 1, Recoded: []Recoding{{4, Deltas}}},
		func(c *Columns) *[]int64 { return &c.Time }, func(r *Row) int64 { return r.Sample.Time }),
	newCol(ColumnInfo{Name: "cpu", Encoding: Plain, Since: 1},
		func(c *Columns) *[]int32 { return &c.CPU }, func(r *Row) int32 { return r.Sample.CPU }),
	newCol(ColumnInfo{Name: "pid", Encoding: CPUDict, Since: 1, Recoded: []Recoding{{5, Dict}}},
		func(c *Columns) *[]int32 { return &c.PID }, func(r *Row) int32 { return r.Sample.PID }),
	newCol(ColumnInfo{Name: "tid", Encoding: CPUDict, Since: 1, Recoded: []Recoding{{5, Dict}}},
		func(c *Columns) *[]int32 { return &c.TID }, func(r *Row) int32 { return r.Sample.TID }),
	newCol(ColumnInfo{Name: "comm", Encoding: CPUDict, Table: StringTable, Since: 1, Recoded: []Recoding{{5, Dict}}},
		func(c *Columns) *[]uint32 { return &c.Comm }, func(r *Row) uint32 { return r.Strings.String(r.Sample.Comm) }),
	newCol(ColumnInfo{Name: "event", Encoding: Runs, Table: EventTable, Since: 1},
		func(c *Columns) *[]uint16 { return &c.Event }, func(r *Row) uint16 { return r.Event }),
	newCol(ColumnInfo{Name: "weight", Encoding: Runs, Since: 1},
		func(c *Columns) *[]uint64 { return &c.Weight }, func(r *Row) uint64 { return cmp.Or(r.Sample.Period, 1) }),
	newCol(ColumnInfo{Name: "stack", Encoding: Tree, Table: NodeTable, Since: 1, Recoded: []Recoding{{3, Plain}, {4, Rising}, {6, Recent}}},
		func(c *Columns) *[]int32 { return &c.Stack }, func(r *Row) int32 { return r.Stack() }),
	newCol(ColumnInfo{Name: "cgroup", Encoding: Dict, Table: StringTable, Since: 2},
		func(c *Columns) *[]uint32 { return &c.Cgroup }, func(r *Row) uint32 { return r.Strings.String(r.Sample.Cgroup) }),
}

// SampleColumns returns the column list: one Column per slice of Columns,
// in the order a chunk stores them.
func SampleColumns() []Column { return slices.Clone(sampleColumns) }

// ColumnInfo is what a column is besides its values: its name, how a chunk
// stores it, the table its values index, and the first chunk format that
// holds it. A column added to the list takes a Since above every earlier
// column's, so that older chunks, which lack it, still decode: their
// samples get the zero value. A column whose encoding changes keeps its
// Since and adds to Recoded the first format with the new encoding, above
// every Since and Recoded before, beside the encoding it replaces, so that
// older chunks still decode as written.
type ColumnInfo struct {
	Name     string
	Encoding Encoding
	Table    Table
	Since    int
	Recoded  []Recoding // the column's former encodings, oldest first; none: Encoding since Since
}

// Recoding is a change of a column's encoding: chunks of formats below
// Format store it as Was.
type Recoding struct {
	Format int
	Was    Encoding
}

// EncodingIn returns how a chunk of format f stores the column.
func (i ColumnInfo) EncodingIn(f int) Encoding {
	for _, r := range i.Recoded {
		if f < r.Format {
			return r.Was
		}
	}
	return i.Encoding
}

// Format returns the first chunk format that stores the column as it is
// stored now.
func (i ColumnInfo) Format() int {
	f := i.Since
	for _, r := range i.Recoded {
		f = max(f, r.Format)
	}
	return f
}

// Encoding says how a chunk stores a column; each suits a shape of values.
type Encoding uint8

// Encodings. Values are written as varints, signed ones zig-zag; the values
// of a column that indexes a table (Table) are unsigned.
const (
	// Deltas: sorted values, as the first, the deltas' greatest common
	// divisor, then each delta divided by it.
	Deltas Encoding = iota + 1
	// Plain: one value per sample.
	Plain
	// Runs: run-length pairs (value, run), for values that seldom change.
	Runs
	// Dict: adjacent Dict columns of the same Since share one dictionary
	// of their distinct tuples in order of first appearance, then one
	// index per sample, for values that go together (a thread's pid, tid
	// and comm).
	Dict
	// Rising: for the indexes of a table that grows as the capture is read
	// (a stack met for the first time is among the latest nodes, just
	// above the largest so far), either each value as the zig-zag
	// difference from the largest value before it in the chunk (0 before
	// the first) or, when that is longer, one value per sample.
	Rising
	// Recent: as Rising, or, when that compresses smaller (judged on the
	// first samples), each value coded from the latest values of its
	// sample's thread (Columns.TID, stored before) in the chunk: a stack
	// met for the first time just above the largest so far, a thread's
	// recent stack as its rank among the thread's latest, else as its
	// difference below the largest. A thread in a loop samples a few
	// stacks over and over.
	Recent
	// PerCPU: for the times of samples sorted by time, followed in the
	// list by their CPU column, which a chunk then stores first, before
	// the times: as Deltas, or, when that compresses smaller, each time
	// from the time of the latest sample of its CPU (a CPU is sampled at a
	// nearly fixed interval: the difference from it is a few
	// microseconds), or from the sample before for its CPU's first.
	PerCPU
	// CPUDict: as Dict, but each sample's index coded from its CPU's
	// sample before (the CPU column is stored before): a CPU runs one
	// thread for milliseconds at a time, so the same tuple is most likely,
	// else one of the tuples met most recently.
	CPUDict
	// Tree: as Recent, but a stack met for the first time is coded from
	// the stack prefix tree (Capture.Nodes) rather than from the largest
	// value before it: a new stack's new nodes are made in a row, each
	// the child of the one before, so the stack is nearly always the last
	// node of the chain that starts just above the largest so far.
	Tree
)

// Table names the table a column's values index, so that they can be
// checked against its size and renumbered when tables are merged.
type Table uint8

// Tables.
const (
	NoTable     Table = iota
	StringTable       // Capture.Strings
	NodeTable         // Capture.Nodes
	EventTable        // Capture.Profile.Events
)

// Value is the type of a column's values.
type Value interface {
	int64 | int32 | uint64 | uint32 | uint16
}

// Column is one row of the column list. Its methods act on the same slice
// of every Columns; Col is its only implementation.
type Column interface {
	Info() ColumnInfo

	appendRow(c *Columns, r *Row)
	appendRange(dst, src *Columns, lo, hi int)
	copyAt(dst *Columns, at int, src *Columns)
	slice(dst, src *Columns, lo, hi, max int)
	make(c *Columns, n int)
	resize(c *Columns, n int)
	fill(c *Columns)
	permute(c *Columns, idx []int)
	bytes(c *Columns) int64
}

// Col is a column of values of type T. Of returns its slice of a Columns;
// From gives one sample's value, as a builder appends it.
type Col[T Value] struct {
	ColumnInfo
	Of   func(*Columns) *[]T
	From func(*Row) T
	off  uintptr
}

// Info returns the column's description.
func (k *Col[T]) Info() ColumnInfo { return k.ColumnInfo }

// newCol returns the column of info whose slice of a Columns Of returns,
// and whose value for a sample From returns.
func newCol[T Value](info ColumnInfo, of func(*Columns) *[]T, from func(*Row) T) *Col[T] {
	var c Columns
	return &Col[T]{ColumnInfo: info, Of: of, From: from, off: uintptr(unsafe.Pointer(of(&c))) - uintptr(unsafe.Pointer(&c))}
}

func (k *Col[T]) appendRow(c *Columns, r *Row) {
	s := (*[]T)(unsafe.Add(unsafe.Pointer(c), k.off))
	*s = append(*s, k.From(r))
}

func (k *Col[T]) appendRange(dst, src *Columns, lo, hi int) {
	s := k.Of(dst)
	*s = append(*s, (*k.Of(src))[lo:hi]...)
}

func (k *Col[T]) copyAt(dst *Columns, at int, src *Columns) { copy((*k.Of(dst))[at:], *k.Of(src)) }

func (k *Col[T]) slice(dst, src *Columns, lo, hi, max int) { *k.Of(dst) = (*k.Of(src))[lo:hi:max] }

func (k *Col[T]) make(c *Columns, n int) { *k.Of(c) = make([]T, 0, n) }

func (k *Col[T]) resize(c *Columns, n int) {
	s := k.Of(c)
	if n > len(*s) {
		*s = slices.Grow(*s, n-len(*s))
	}
	*s = (*s)[:n]
}

func (k *Col[T]) fill(c *Columns) {
	if s := k.Of(c); len(*s) < c.Len() {
		*s = append(*s, make([]T, c.Len()-len(*s))...)
	}
}

func (k *Col[T]) permute(c *Columns, idx []int) {
	s := k.Of(c)
	out := make([]T, len(*s))
	for i, j := range idx {
		out[i] = (*s)[j]
	}
	*s = out
}

func (k *Col[T]) bytes(c *Columns) int64 { return SliceBytes(*k.Of(c)) }

// Row is one sample as a builder appends it (Columns.Append): the parsed
// sample, the index of its event, where its names are interned, and how
// its stack node is found. Stack is called after the names of the columns
// before it are interned, so that a serial and a parallel build number
// strings alike.
type Row struct {
	Sample  *Sample
	Event   uint16
	Strings *Interner
	Stack   func() int32
}

// MakeColumns returns empty columns with room for n samples.
func MakeColumns(n int) Columns {
	var c Columns
	for _, k := range sampleColumns {
		k.make(&c, n)
	}
	return c
}

// Len returns the number of samples.
func (c *Columns) Len() int { return len(c.Time) }

// Append adds one sample.
func (c *Columns) Append(r *Row) {
	for _, k := range sampleColumns {
		k.appendRow(c, r)
	}
}

// AppendRange appends samples [lo, hi) of src.
func (c *Columns) AppendRange(src *Columns, lo, hi int) {
	for _, k := range sampleColumns {
		k.appendRange(c, src, lo, hi)
	}
}

// CopyAt writes src's samples over c's from index at on.
func (c *Columns) CopyAt(at int, src *Columns) {
	for _, k := range sampleColumns {
		k.copyAt(c, at, src)
	}
}

// Slice returns samples [lo, hi) of c as columns of their own that share
// c's arrays, with capacity up to index max.
func (c *Columns) Slice(lo, hi, max int) Columns {
	var out Columns
	for _, k := range sampleColumns {
		k.slice(&out, c, lo, hi, max)
	}
	return out
}

// Resize sets the number of samples to n: it shortens every column, or
// extends it with values to be overwritten.
func (c *Columns) Resize(n int) {
	for _, k := range sampleColumns {
		k.resize(c, n)
	}
}

// Fill extends every column shorter than Time to its length with the zero
// value: the columns that a source of samples does not have.
func (c *Columns) Fill() {
	for _, k := range sampleColumns {
		k.fill(c)
	}
}

// Bytes returns the bytes of the columns' arrays, by their capacity.
func (c *Columns) Bytes() int64 {
	var n int64
	for _, k := range sampleColumns {
		n += k.bytes(c)
	}
	return n
}

// SortColumns orders the samples by time, keeping input order among equal
// times.
func SortColumns(c *Columns) {
	if sort.SliceIsSorted(c.Time, func(i, j int) bool { return c.Time[i] < c.Time[j] }) {
		return
	}
	idx := make([]int, c.Len())
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return c.Time[idx[i]] < c.Time[idx[j]] })
	for _, k := range sampleColumns {
		k.permute(c, idx)
	}
}
