package subsecond

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/subsecond/subsecond/internal/probe"
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
	frames  frameIndex
	kids    []kidLink // by node, beside Nodes
	nodes   nodeTable // the children of wide nodes
}

// kidLink lists a stack node's children while it has at most wideKids of
// them, and links the node into its parent's list. Most nodes of a real
// capture's tree have one child, and a new node's parent is the node made
// just before it: looking a child up in a list that the parent heads costs
// no cache miss where the node table costs one per new node, and the
// links take 16 bytes a node where the table takes 24 to 48.
type kidLink struct {
	frame int32 // the node's frame, a copy of its StackNode's beside the link
	next  int32 // the child of the same parent added before this one; 0 ends the list
	last  int32 // the child added last; 0 when none, wide when its children are in the node table
	n     int32 // how many children the list holds
}

// wide marks a node whose children are in the node table.
const wide = -1

// wideKids is how many children a node lists before they move to the node
// table: past it, walking the list costs more cache misses than the table.
const wideKids = 8

// NewInterner returns an Interner holding only the empty string and the root
// stack node.
func NewInterner() *Interner {
	return &Interner{
		Strings: []string{""},
		Nodes:   []StackNode{{Parent: -1, Frame: -1}},
		strings: map[string]uint32{"": 0},
		kids:    []kidLink{{frame: -1}},
	}
}

// String returns the index of s, adding it if new.
func (in *Interner) String(s string) uint32 {
	if i, ok := in.strings[s]; ok {
		return i
	}
	i := uint32(len(in.Strings))
	in.Strings = append(doubled(in.Strings), s)
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
	return in.Rec(rec)
}

// Rec returns the index of the frame rec, whose strings are indexes of
// in.Strings, adding it if new.
func (in *Interner) Rec(rec FrameRec) int32 {
	t := &in.frames
	if t.n != len(in.Frames) {
		in.indexFrames()
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow(in.Frames)
	}
	h := rec.hash()
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.idx1 == 0 {
			n := int32(len(in.Frames))
			in.Frames = append(doubled(in.Frames), rec)
			*s = frameSlot{tag: uint32(h), idx1: n + 1}
			t.n++
			return n
		}
		if s.tag == uint32(h) && in.Frames[s.idx1-1] == rec {
			return s.idx1 - 1
		}
	}
}

// indexFrames puts the frames that an Interner made from tables (not by
// NewInterner) holds into its index, as Rec would have.
func (in *Interner) indexFrames() {
	t := &in.frames
	if 2*len(in.Frames) > len(t.slots) {
		t.grow(in.Frames)
	}
	for n := t.n; n < len(in.Frames); n++ {
		t.put(in.Frames[n].hash(), int32(n))
	}
}

// frameIndex finds a frame's index by its fields. It is a hash table with
// open addressing and linear probing, at most half full, whose slots hold
// part of the frame's hash beside its index: a look-up costs one cache
// miss, and one more in Frames when the hash matches, where a Go map keyed
// by the whole FrameRec hashed each field and probed groups of slots
// (Rec was 6% of an import of a real capture with deep stacks).
type frameIndex struct {
	slots []frameSlot // a power of two of them; idx1 0 marks a free slot
	n     int
	shift uint8 // 64 − log2(len(slots))
}

type frameSlot struct {
	tag  uint32 // the low half of the frame's hash
	idx1 int32  // the frame's index + 1
}

// hash mixes a frame's fields; its top bits choose a slot.
func (r *FrameRec) hash() uint64 {
	h := (uint64(r.Symbol)<<32 | uint64(r.DSO)) * 0x9E3779B97F4A7C15
	h ^= (r.Addr + uint64(r.SrcLine)<<40 + uint64(r.Kind)<<32) * 0xC2B2AE3D27D4EB4F
	if r.Inline {
		h ^= 0x165667B19E3779F9
	}
	return (h ^ h>>29) * 0xBF58476D1CE4E5B9
}

// put adds frame idx, whose hash is h, which t does not hold.
func (t *frameIndex) put(h uint64, idx int32) {
	mask := uint64(len(t.slots) - 1)
	i := h >> t.shift
	for t.slots[i].idx1 != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = frameSlot{tag: uint32(h), idx1: idx + 1}
	t.n++
}

// grow doubles the slots (to 1,024 at first, or more to hold twice
// frames) and puts every frame back.
func (t *frameIndex) grow(frames []FrameRec) {
	size := max(1024, 2*len(t.slots))
	for size < 2*(len(frames)+1) {
		size *= 2
	}
	t.slots = probe.Make[frameSlot](size)
	t.shift = uint8(64 - bits.Len(uint(size-1)))
	n := t.n // t holds frames[:n]
	t.n = 0
	for i := range frames[:n] {
		t.put(frames[i].hash(), int32(i))
	}
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

// Node returns the stack node for frame (an index of Frames) called from
// node parent, adding it if new.
func (in *Interner) Node(parent, frame int32) int32 { return in.child(parent, frame) }

func (in *Interner) child(parent, frame int32) int32 {
	if len(in.kids) != len(in.Nodes) {
		in.link()
	}
	if in.kids[parent].last != wide {
		for k := in.kids[parent].last; k != 0; k = in.kids[k].next {
			if in.kids[k].frame == frame {
				return k
			}
		}
		n := int32(len(in.Nodes))
		in.Nodes = append(doubled(in.Nodes), StackNode{Parent: parent, Frame: frame, Depth: in.Nodes[parent].Depth + 1})
		in.attach(n)
		return n
	}
	t := &in.nodes
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := nodeHash(parent, frame) >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.node == 0 {
			n := int32(len(in.Nodes))
			in.Nodes = append(doubled(in.Nodes), StackNode{Parent: parent, Frame: frame, Depth: in.Nodes[parent].Depth + 1})
			in.kids = append(doubled(in.kids), kidLink{frame: frame})
			*s = nodeSlot{parent: parent, frame: frame, node: n}
			t.n++
			return n
		}
		if s.parent == parent && s.frame == frame {
			return s.node
		}
	}
}

// attach links node n, the last of Nodes, to its parent: into the parent's
// list, which moves to the node table when it grows past wideKids; or
// into the table, when the parent is wide.
func (in *Interner) attach(n int32) {
	nd := &in.Nodes[n]
	in.kids = append(doubled(in.kids), kidLink{frame: nd.Frame})
	p := &in.kids[nd.Parent]
	if p.last == wide {
		in.nodes.put(nd.Parent, nd.Frame, n)
		return
	}
	in.kids[n].next, p.last = p.last, n
	if p.n++; p.n > wideKids {
		for k := p.last; k != 0; k = in.kids[k].next {
			in.nodes.put(nd.Parent, in.kids[k].frame, k)
		}
		p.last = wide
	}
}

// link links the nodes that an Interner made from tables (not by
// NewInterner) holds, as child would have.
func (in *Interner) link() {
	if len(in.kids) == 0 {
		in.kids = append(in.kids, kidLink{frame: -1})
	}
	for n := len(in.kids); n < len(in.Nodes); n++ {
		in.attach(int32(n))
	}
}

// doubled returns s with room for one more element: a full s is copied
// into twice its capacity, where append grows a large slice by a quarter.
// The tables grow to hundreds of thousands of entries, and a quarter at a
// time their copies were garbage four times their final size, which the
// collector chased and the process faulted in (about 50 MB of an import
// of the real 27 s capture, across the workers' and the merger's tables).
func doubled[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 64))
}

// nodeTable finds a wide node's child by its parent and frame. It is a hash table
// with open addressing and linear probing, at most half full, whose slots
// hold the key beside the node: a look-up costs one cache miss where a Go
// map of 160,000 nodes costs two or three (measured on a real capture with
// deep stacks, where finding nodes was a fifth of an import's CPU time).
type nodeTable struct {
	slots []nodeSlot // a power of two of them; node 0 marks a free slot (the root is no one's child)
	n     int
	shift uint8 // 64 − log2(len(slots))
}

type nodeSlot struct{ parent, frame, node int32 }

// nodeHash mixes a node's key; its top bits choose a slot.
func nodeHash(parent, frame int32) uint64 {
	return (uint64(uint32(parent))<<32 | uint64(uint32(frame))) * 0x9E3779B97F4A7C15
}

// put adds node, the child of parent with frame, which t does not hold.
func (t *nodeTable) put(parent, frame, node int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	i := nodeHash(parent, frame) >> t.shift
	for t.slots[i].node != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = nodeSlot{parent: parent, frame: frame, node: node}
	t.n++
}

// grow doubles the slots (to 1,024 at first) and puts every node back.
func (t *nodeTable) grow() {
	t.slots, t.shift = probe.Grow(t.slots, 1024, func(s *nodeSlot) bool { return s.node != 0 },
		func(s *nodeSlot) uint64 { return nodeHash(s.parent, s.frame) })
}

// Stats accumulates a profile's summary figures (events, first and last
// sample time, sample and CPU counts, sampling frequency) from its samples.
type Stats struct {
	events  map[string]int
	list    []EventCount
	start   int64
	end     int64
	samples int64
	cpus    [][]cpuSpan         // by event, by CPU, for small CPU numbers
	bigCPUs map[cpuKey]*cpuSpan // the rest
}

type cpuSpan struct {
	first, last int64
	n           int64
}

// cpuKey is one CPU's samples of one event.
type cpuKey struct {
	event uint16
	cpu   int32
}

// denseCPUs is the CPU number up to which Stats keeps spans in a slice.
const denseCPUs = 1 << 12

// NewStats returns empty Stats.
func NewStats() *Stats {
	return &Stats{events: map[string]int{}, start: NoTime, end: NoTime, bigCPUs: map[cpuKey]*cpuSpan{}}
}

// Add counts s and returns the index of its event in order of first
// appearance. A sample whose event would be the capture's MaxEvents+1st is
// not counted, and Add returns an error wrapping ErrTooLarge.
func (st *Stats) Add(s *Sample) (uint16, error) {
	ev, err := st.Event(s.Event)
	if err != nil {
		return 0, fmt.Errorf("line %d: %w", s.Line, err)
	}
	st.Count(ev, s.Time, s.CPU)
	return ev, nil
}

// Event returns the index of the event called name in order of first
// appearance, adding it if new. Past MaxEvents names it returns an error
// wrapping ErrTooLarge.
func (st *Stats) Event(name string) (uint16, error) {
	ev, ok := st.events[name]
	if !ok {
		if len(st.list) >= MaxEvents {
			return 0, fmt.Errorf("the capture has more than %d distinct event names, the most a profile can hold: %w", MaxEvents, ErrTooLarge)
		}
		ev = len(st.list)
		st.events[name] = ev
		st.list = append(st.list, EventCount{Name: name})
	}
	return uint16(ev), nil
}

// Count counts one sample of event ev (an index Event returned) at time t
// on cpu. Add is Event followed by Count.
func (st *Stats) Count(ev uint16, t int64, cpu int32) {
	st.list[ev].Samples++
	st.samples++
	if t != NoTime {
		if st.start == NoTime || t < st.start {
			st.start = t
		}
		if st.end == NoTime || t > st.end {
			st.end = t
		}
	}
	if cpu == Unknown {
		return
	}
	var c *cpuSpan
	if cpu >= 0 && cpu < denseCPUs {
		if int(ev) >= len(st.cpus) {
			st.cpus = append(st.cpus, make([][]cpuSpan, int(ev)+1-len(st.cpus))...)
		}
		spans := st.cpus[ev]
		if int(cpu) >= len(spans) {
			spans = append(spans, make([]cpuSpan, int(cpu)+1-len(spans))...)
			st.cpus[ev] = spans
		}
		c = &spans[cpu]
	} else if c = st.bigCPUs[cpuKey{ev, cpu}]; c == nil {
		c = new(cpuSpan)
		st.bigCPUs[cpuKey{ev, cpu}] = c
	}
	if c.n == 0 {
		c.first, c.last = t, t
	}
	if t != NoTime {
		c.first = min(c.first, t)
		c.last = max(c.last, t)
	}
	c.n++
}

// Fill writes the accumulated figures into p, and the figures that follow
// from them and p.Meta: p.Host when empty (the capture's hostname made
// valid for HostProblem, else UnknownHost) and p.Wall.
func (st *Stats) Fill(p *Profile) {
	p.Events = append([]EventCount(nil), st.list...)
	p.EventCount = len(p.Events)
	p.Samples = st.samples
	p.Start, p.End = st.start, st.end
	if p.Start == NoTime {
		p.Start, p.End = 0, 0
	}
	if p.Host == "" {
		p.Host = hostOf(p.Meta)
	}
	p.Wall = p.Anchor()
	// CPUs counts the CPUs of every event; the rate is the default
	// event's (DefaultEvent), as tracepoints fire at no rate.
	def := uint16(DefaultEvent(st.list))
	var rates []float64
	seen := map[int32]bool{}
	span := func(ev uint16, cpu int32, c *cpuSpan) {
		if c.n > 0 {
			seen[cpu] = true
		}
		if ev == def && c.n > 1 && c.last > c.first {
			rates = append(rates, float64(c.n-1)/(float64(c.last-c.first)/1e9))
		}
	}
	for ev, spans := range st.cpus {
		for cpu := range spans {
			span(uint16(ev), int32(cpu), &spans[cpu])
		}
	}
	for k, c := range st.bigCPUs {
		span(k.event, k.cpu, c)
	}
	p.CPUs = len(seen)
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
	row   Row
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	b := &Builder{in: NewInterner(), stats: NewStats()}
	b.row = Row{Strings: b.in, Stack: func() int32 { return b.in.Stack(b.row.Sample.Frames) }}
	return b
}

// Add appends s. The Builder keeps no reference to s or its frames. It
// fails, adding nothing, when s would be the capture's MaxEvents+1st event
// (an error wrapping ErrTooLarge).
func (b *Builder) Add(s *Sample) error {
	ev, err := b.stats.Add(s)
	if err != nil {
		return err
	}
	b.row.Sample, b.row.Event = s, ev
	b.cols.Append(&b.row)
	b.row.Sample = nil
	return nil
}

// Capture returns the samples added so far, sorted by time, with p's
// identity fields kept and its summary figures filled in.
func (b *Builder) Capture(p Profile) *Capture {
	b.stats.Fill(&p)
	c := &Capture{Profile: p, Strings: b.in.Strings, Frames: b.in.Frames, Nodes: b.in.Nodes, Samples: b.cols}
	SortColumns(&c.Samples)
	return c
}
