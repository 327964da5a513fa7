package subsecond

import (
	"math"
	"sort"
)

// Interner assigns dense indexes to strings, frames and stack nodes, the
// tables of a Capture. Indexes only grow, so a caller that persists the
// tables (the store) can write out what was added since its last flush.
// Memory is bounded by the number of distinct strings, frames and stacks,
// not by the number of samples.
type Interner struct {
	Strings []string
	Frames  []FrameRec
	Nodes   []StackNode

	strings map[string]uint32
	frames  map[FrameRec]int32
	nodes   map[[2]int32]int32
}

// NewInterner returns an Interner holding only the empty string and the root
// stack node.
func NewInterner() *Interner {
	return &Interner{
		Strings: []string{""},
		Nodes:   []StackNode{{Parent: -1, Frame: -1}},
		strings: map[string]uint32{"": 0},
		frames:  map[FrameRec]int32{},
		nodes:   map[[2]int32]int32{},
	}
}

// String returns the index of s, adding it if new.
func (in *Interner) String(s string) uint32 {
	if i, ok := in.strings[s]; ok {
		return i
	}
	i := uint32(len(in.Strings))
	in.Strings = append(in.Strings, s)
	in.strings[s] = i
	return i
}

// Frame returns the index of f, adding it if new.
func (in *Interner) Frame(f *Frame) int32 {
	rec := FrameRec{
		Symbol:  in.String(f.Symbol),
		DSO:     in.String(f.DSO),
		SrcLine: in.String(f.SrcLine),
		Addr:    f.Addr,
		Kind:    f.Kind,
		Inline:  f.Inline,
	}
	if i, ok := in.frames[rec]; ok {
		return i
	}
	i := int32(len(in.Frames))
	in.Frames = append(in.Frames, rec)
	in.frames[rec] = i
	return i
}

// Stack returns the stack node of frames (leaf-first), adding nodes as needed.
// An empty call chain is node 0.
func (in *Interner) Stack(frames []Frame) int32 {
	n := int32(0)
	for i := len(frames) - 1; i >= 0; i-- {
		n = in.child(n, in.Frame(&frames[i]))
	}
	return n
}

func (in *Interner) child(parent, frame int32) int32 {
	k := [2]int32{parent, frame}
	if i, ok := in.nodes[k]; ok {
		return i
	}
	i := int32(len(in.Nodes))
	in.Nodes = append(in.Nodes, StackNode{Parent: parent, Frame: frame, Depth: in.Nodes[parent].Depth + 1})
	in.nodes[k] = i
	return i
}

// Stats accumulates a profile's summary figures (events, first and last
// sample time, sample and CPU counts, sampling frequency) from its samples.
type Stats struct {
	events  map[string]int
	list    []EventCount
	start   int64
	end     int64
	samples int64
	cpus    map[int32]*cpuSpan
}

type cpuSpan struct {
	first, last int64
	n           int64
}

// NewStats returns empty Stats.
func NewStats() *Stats {
	return &Stats{events: map[string]int{}, start: NoTime, end: NoTime, cpus: map[int32]*cpuSpan{}}
}

// Add counts s and returns the index of its event in order of first appearance.
func (st *Stats) Add(s *Sample) uint16 {
	ev, ok := st.events[s.Event]
	if !ok {
		ev = len(st.list)
		st.events[s.Event] = ev
		st.list = append(st.list, EventCount{Name: s.Event})
	}
	st.list[ev].Samples++
	st.samples++
	if s.Time != NoTime {
		if st.start == NoTime || s.Time < st.start {
			st.start = s.Time
		}
		if st.end == NoTime || s.Time > st.end {
			st.end = s.Time
		}
	}
	if s.CPU != Unknown && ev == 0 {
		c := st.cpus[s.CPU]
		if c == nil {
			c = &cpuSpan{first: s.Time, last: s.Time}
			st.cpus[s.CPU] = c
		}
		if s.Time != NoTime {
			c.first = min(c.first, s.Time)
			c.last = max(c.last, s.Time)
		}
		c.n++
	}
	return uint16(ev)
}

// Fill writes the accumulated figures into p, and the figures that follow
// from them and p.Meta: p.Host when empty (the capture's hostname made
// valid for CheckHost, else UnknownHost) and p.Wall.
func (st *Stats) Fill(p *Profile) {
	p.Events = append([]EventCount(nil), st.list...)
	p.Samples = st.samples
	p.Start, p.End = st.start, st.end
	if p.Start == NoTime {
		p.Start, p.End = 0, 0
	}
	if p.Host == "" {
		p.Host = hostOf(p.Meta)
	}
	p.Wall = Anchor(p.Meta, p.End)
	p.CPUs = len(st.cpus)
	var rates []float64
	for _, c := range st.cpus {
		if c.n > 1 && c.last > c.first {
			rates = append(rates, float64(c.n-1)/(float64(c.last-c.first)/1e9))
		}
	}
	if len(rates) > 0 {
		sort.Float64s(rates)
		p.FrequencyHz = math.Round(rates[len(rates)/2]*10) / 10
	}
}

// Builder turns a stream of samples into a Capture held in memory. The store
// uses Interner and Stats directly so that it can flush samples in batches;
// Builder is for analysing a file without storing it, and for tests.
type Builder struct {
	in    *Interner
	stats *Stats
	cols  Columns
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{in: NewInterner(), stats: NewStats()}
}

// Add appends s. The Builder keeps no reference to s or its frames.
func (b *Builder) Add(s *Sample) {
	ev := b.stats.Add(s)
	w := s.Period
	if w == 0 {
		w = 1
	}
	c := &b.cols
	c.Time = append(c.Time, s.Time)
	c.CPU = append(c.CPU, s.CPU)
	c.PID = append(c.PID, s.PID)
	c.TID = append(c.TID, s.TID)
	c.Comm = append(c.Comm, b.in.String(s.Comm))
	c.Event = append(c.Event, ev)
	c.Weight = append(c.Weight, w)
	c.Stack = append(c.Stack, b.in.Stack(s.Frames))
}

// Capture returns the samples added so far, sorted by time, with p's
// identity fields kept and its summary figures filled in.
func (b *Builder) Capture(p Profile) *Capture {
	b.stats.Fill(&p)
	c := &Capture{Profile: p, Strings: b.in.Strings, Frames: b.in.Frames, Nodes: b.in.Nodes, Samples: b.cols}
	SortColumns(&c.Samples)
	return c
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
	c.Time = permute(c.Time, idx)
	c.CPU = permute(c.CPU, idx)
	c.PID = permute(c.PID, idx)
	c.TID = permute(c.TID, idx)
	c.Comm = permute(c.Comm, idx)
	c.Event = permute(c.Event, idx)
	c.Weight = permute(c.Weight, idx)
	c.Stack = permute(c.Stack, idx)
}

func permute[T any](s []T, idx []int) []T {
	out := make([]T, len(s))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}
