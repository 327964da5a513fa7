// Package flame builds flame graphs of a capture's time range: a tree
// root → command → frames root-first, each node with its name, kind, DSO,
// total and self sample counts, and the differential tree of two ranges.
// It writes them as JSON for the web UI, folded stacks, pprof protobuf and
// a standalone interactive SVG.
//
// The JSON shape (docs/contracts.md) is built for a canvas that draws 50k+
// nodes: parallel arrays over the nodes in depth-first pre-order, node 0
// the root "all", children of each node sorted by name, strings interned:
//
//	{"start_ns": 1000000000, "end_ns": 2000000000, "total": 3,
//	 "strings": ["all", "java", "main", "[kernel.kallsyms]", ""],
//	 "kinds": ["unknown","kernel","user","jit","inlined","comm","root"],
//	 "name": [0, 1, 2], "dso": [4, 4, 4], "kind": [6, 5, 2],
//	 "depth": [0, 1, 2], "total_n": [3, 3, 3], "self_n": [0, 0, 3]}
//
// A node's children follow it directly; its subtree ends at the next node
// whose depth is not greater. Counts are samples. A differential graph adds
// "base_start_ns", "base_end_ns", "base_total", "base_n" and "base_self_n",
// the base range's counts on the same nodes; nodes seen only in the base
// have total_n 0. Compare shares, not counts: total_n/total against
// base_n/base_total.
//
// Graphs come from a per-capture index (built on first use and kept with
// the capture): the tree of every sample's stack, numbered in pre-order,
// and each sample's node. A query counts its samples into an array, folds
// the counts up the tree in one pass and emits the nodes with a count, so
// its cost is one array increment per sample plus one step per node.
//
//	g, err := flame.Build(capture, filter, subsecond.Range{Start: t0 + 1e9, End: t0 + 2e9})
//	if err != nil { … }
//	err = g.Export(w, "svg")
package flame

import (
	"fmt"
	bits64 "math/bits"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Node kinds beyond the frame kinds: a command name and the root.
const (
	KindComm = 5
	KindRoot = 6
)

// Kinds names the values of Graph.Kind.
var kindNames = []string{"unknown", "kernel", "user", "jit", "inlined", "comm", "root"}

// Graph is a flame graph in depth-first pre-order; see the package doc.
// Index i of each slice describes node i.
type Graph struct {
	Start   int64    `json:"start_ns"`
	End     int64    `json:"end_ns"`
	Total   int64    `json:"total"`
	Strings []string `json:"strings"`
	Kinds   []string `json:"kinds"`
	Name    []int32  `json:"name"`
	DSO     []int32  `json:"dso"`
	Kind    []int32  `json:"kind"`
	Depth   []int32  `json:"depth"`
	TotalN  []int64  `json:"total_n"`
	SelfN   []int64  `json:"self_n"`
	// Unrecorded is how much of the range no capture recorded, in
	// nanoseconds: set for a host's range across captures
	// (timeline.Selection), 0 within one capture.
	Unrecorded int64 `json:"unrecorded_ns,omitempty"`

	BaseStart int64   `json:"base_start_ns,omitempty"`
	BaseEnd   int64   `json:"base_end_ns,omitempty"`
	BaseTotal int64   `json:"base_total,omitempty"`
	BaseN     []int64 `json:"base_n,omitempty"`
	BaseSelfN []int64 `json:"base_self_n,omitempty"`
	// BaseUnrecorded is Unrecorded of the base range.
	BaseUnrecorded int64 `json:"base_unrecorded_ns,omitempty"`

	Parent []int32 `json:"-"` // -1 for the root

	selfW     []int64 // summed sample weights (periods) behind SelfN
	baseSelfW []int64 // the same behind BaseSelfN
	node      []int32 // each node's number in ix (nil for a graph of two captures)
	ix        *index  // the capture's index the graph was emitted from
	bc        *subsecond.Capture
	bix       *index // the base capture's index when it is not c

	c *subsecond.Capture
	f query.Filter
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.Name) }

// NameOf returns node i's name.
func (g *Graph) NameOf(i int) string { return g.Strings[g.Name[i]] }

// Path returns the names from the command down to node i (the root "all"
// left out), root-first.
func (g *Graph) Path(i int) []string {
	var p []string
	for ; i > 0; i = int(g.Parent[i]) {
		p = append(p, g.NameOf(i))
	}
	for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// Build returns the flame graph of the samples of c in r that pass f.
// It fails with an error wrapping subsecond.ErrInvalid when r is empty or
// f is bad, and subsecond.ErrEmptyRange when r holds no samples at all
// (past the end, or in a gap); a range whose samples the filter all drops
// yields a graph of the root alone.
func Build(c *subsecond.Capture, f query.Filter, r subsecond.Range) (*Graph, error) {
	m, ix, err := prepare(c, f)
	if err != nil {
		return nil, err
	}
	lo, hi, err := CheckRange(c, r)
	if err != nil {
		return nil, err
	}
	t := ix.count(c, m, lo, hi)
	g := ix.graph(t, nil)
	ix.tallies.Put(t)
	g.Start, g.End = r.Start, r.End
	g.c, g.f = c, f
	return g, nil
}

// Diff returns the differential flame graph from base to target: the union
// of both trees, TotalN/SelfN counting target's samples and BaseN/BaseSelfN
// base's.
func Diff(c *subsecond.Capture, f query.Filter, base, target subsecond.Range) (*Graph, error) {
	m, ix, err := prepare(c, f)
	if err != nil {
		return nil, err
	}
	lo, hi, err := CheckRange(c, target)
	if err != nil {
		return nil, err
	}
	blo, bhi, err := CheckRange(c, base)
	if err != nil {
		return nil, fmt.Errorf("base range: %w", err)
	}
	t, b := ix.count(c, m, lo, hi), ix.count(c, m, blo, bhi)
	g := ix.graph(t, b)
	ix.tallies.Put(t)
	ix.tallies.Put(b)
	g.Start, g.End = target.Start, target.End
	g.BaseStart, g.BaseEnd = base.Start, base.End
	g.c, g.f = c, f
	return g, nil
}

// DiffProfiles returns the differential flame graph from the range base of
// capture bc to the range target of capture c: the same as Diff when bc is
// c, else the union of the two captures' graphs, frames matched by their
// path of names and DSOs. Filters mean the same on both sides (an event
// named in f must exist in both). Errors about the base name it.
func DiffProfiles(c, bc *subsecond.Capture, f query.Filter, base, target subsecond.Range) (*Graph, error) {
	if bc == c {
		return Diff(c, f, base, target)
	}
	t, err := Build(c, f, target)
	if err != nil {
		return nil, err
	}
	b, err := Build(bc, f, base)
	if err != nil {
		return nil, fmt.Errorf("base profile %s: %w", bc.Profile.ID, err)
	}
	g := merge(t, b)
	g.Start, g.End, g.BaseStart, g.BaseEnd = target.Start, target.End, base.Start, base.End
	g.c, g.f, g.ix, g.bc, g.bix = c, f, t.ix, bc, b.ix
	return g, nil
}

// merge returns the union of graphs t (the target) and b (the base), both
// in pre-order with children sorted by name and DSO, as a differential
// graph: children lists are merged like sorted lists.
func merge(t, b *Graph) *Graph {
	g := &Graph{Kinds: kindNames, Total: t.Total, BaseTotal: b.Total}
	strs := map[string]int32{}
	use := func(s string) int32 {
		i, ok := strs[s]
		if !ok {
			i = int32(len(g.Strings))
			g.Strings = append(g.Strings, s)
			strs[s] = i
		}
		return i
	}
	tEnd, bEnd := t.ends(), b.ends()
	child := func(end []int32, i int32) int32 { // first child of i, or -1
		if i+1 < end[i] {
			return i + 1
		}
		return -1
	}
	next := func(end []int32, parentEnd, i int32) int32 { // i's next sibling, or -1
		if end[i] < parentEnd {
			return end[i]
		}
		return -1
	}
	order := func(ti, bi int32) int { // compares the nodes' names and DSOs; -1 sorts last
		switch {
		case bi < 0:
			return -1
		case ti < 0:
			return 1
		}
		if c := strings.Compare(t.NameOf(int(ti)), b.NameOf(int(bi))); c != 0 {
			return c
		}
		return strings.Compare(t.Strings[t.DSO[ti]], b.Strings[b.DSO[bi]])
	}
	var emit func(ti, bi, parent, depth int32)
	emit = func(ti, bi, parent, depth int32) {
		at := int32(len(g.Name))
		src, i := t, ti
		if ti < 0 {
			src, i = b, bi
		}
		g.Name = append(g.Name, use(src.NameOf(int(i))))
		g.DSO = append(g.DSO, use(src.Strings[src.DSO[i]]))
		g.Kind = append(g.Kind, src.Kind[i])
		g.Depth = append(g.Depth, depth)
		g.Parent = append(g.Parent, parent)
		var tt, ts, tw, bt, bs, bw int64
		if ti >= 0 {
			tt, ts, tw = t.TotalN[ti], t.SelfN[ti], t.selfW[ti]
		}
		if bi >= 0 {
			bt, bs, bw = b.TotalN[bi], b.SelfN[bi], b.selfW[bi]
		}
		g.TotalN, g.SelfN, g.selfW = append(g.TotalN, tt), append(g.SelfN, ts), append(g.selfW, tw)
		g.BaseN, g.BaseSelfN, g.baseSelfW = append(g.BaseN, bt), append(g.BaseSelfN, bs), append(g.baseSelfW, bw)
		tc, bc := int32(-1), int32(-1)
		if ti >= 0 {
			tc = child(tEnd, ti)
		}
		if bi >= 0 {
			bc = child(bEnd, bi)
		}
		for tc >= 0 || bc >= 0 {
			switch o := order(tc, bc); {
			case o < 0:
				emit(tc, -1, at, depth+1)
				tc = next(tEnd, tEnd[ti], tc)
			case o > 0:
				emit(-1, bc, at, depth+1)
				bc = next(bEnd, bEnd[bi], bc)
			default:
				emit(tc, bc, at, depth+1)
				tc = next(tEnd, tEnd[ti], tc)
				bc = next(bEnd, bEnd[bi], bc)
			}
		}
	}
	emit(0, 0, -1, 0)
	return g
}

// ends returns, per node, one past the last node of its subtree.
func (g *Graph) ends() []int32 {
	n := g.Len()
	end := make([]int32, n)
	for i := n - 1; i >= 0; i-- {
		if end[i] == 0 {
			end[i] = int32(i + 1)
		}
		if p := g.Parent[i]; p >= 0 && end[p] < end[i] {
			end[p] = end[i]
		}
	}
	return end
}

// baseCapture returns the capture of a differential graph's base.
func (g *Graph) baseCapture() *subsecond.Capture {
	if g.bc != nil {
		return g.bc
	}
	return g.c
}

// baseIndex returns the index of a differential graph's base capture.
func (g *Graph) baseIndex() *index {
	if g.bix != nil {
		return g.bix
	}
	return g.ix
}

// prepare compiles f for c and returns c's index under f's Only setting.
func prepare(c *subsecond.Capture, f query.Filter) (*query.Match, *index, error) {
	m, err := f.Compile(c)
	if err != nil {
		return nil, nil, err
	}
	return m, indexOf(c, f.Only, m.KeepFrame), nil
}

// CheckRange reports whether r can be drawn from c: not empty and holding
// samples. Errors wrap subsecond.ErrInvalid or subsecond.ErrEmptyRange and
// give the range in seconds from T0.
func CheckRange(c *subsecond.Capture, r subsecond.Range) (lo, hi int, err error) {
	t0 := c.Profile.T0()
	span := func(r subsecond.Range) string {
		return query.DisplayRange(r.Start-t0, r.End-t0)
	}
	if r.Empty() {
		return 0, 0, fmt.Errorf("range %s is empty: end must be after start: %w", span(r), subsecond.ErrInvalid)
	}
	lo, hi = c.Window(r)
	if lo == hi {
		n := len(c.Samples.Time)
		switch {
		case n == 0:
			return 0, 0, fmt.Errorf("range %s: the profile has no samples: %w", span(r), subsecond.ErrEmptyRange)
		case r.Start > c.Samples.Time[n-1]:
			return 0, 0, fmt.Errorf("range %s is past the end of the profile (last sample at %s s): %w",
				span(r), query.DisplaySeconds(c.Samples.Time[n-1]-t0), subsecond.ErrEmptyRange)
		default:
			return 0, 0, fmt.Errorf("range %s: %w", span(r), subsecond.ErrEmptyRange)
		}
	}
	return lo, hi, nil
}

// tally is one range's counts on an index's nodes: samples whose stack
// ends at the node (self) and their summed periods (weight), with a bit
// set in hit for each node with samples. Tallies are recycled through the
// index's pool: a deep capture's arrays are megabytes, and allocating them
// per request would mostly feed the garbage collector; a tally taken from
// the pool is cleared where its bits say, not whole.
type tally struct {
	self, weight []int64
	hit          []uint64
	total        int64   // all the samples counted
	nodes        []int32 // graph's list of the nodes it emits, kept for reuse
}

// count tallies the samples [lo, hi) of c that m keeps: one array
// increment per sample. The totals of the nodes' subtrees are summed as
// the graph is emitted (graph), over the nodes that have some.
func (ix *index) count(c *subsecond.Capture, m *query.Match, lo, hi int) *tally {
	n := ix.Len()
	t, _ := ix.tallies.Get().(*tally)
	if t == nil {
		buf := make([]int64, 2*n)
		t = &tally{self: buf[:n:n], weight: buf[n:], hit: make([]uint64, n/64+1)}
	} else {
		t.clear()
	}
	leaf := ix.leaf[lo:hi]
	weight := c.Samples.Weight[lo:hi]
	if ev, idle, ok := m.Simple(); ok {
		events := c.Samples.Event[lo:hi]
		for j, k := range leaf {
			if events[j] == ev && (idle || !m.Idle(lo+j)) {
				t.self[k]++
				t.weight[k] += int64(weight[j])
			}
		}
	} else {
		for j, k := range leaf {
			if m.Keep(lo + j) {
				t.self[k]++
				t.weight[k] += int64(weight[j])
			}
		}
	}
	// The bits of the nodes counted: found again from the samples when
	// they are few beside the nodes, else from the counts.
	self, hit := t.self, t.hit
	if len(leaf) <= n/8 {
		for _, k := range leaf {
			if self[k] != 0 && hit[k>>6]&(1<<(k&63)) == 0 {
				hit[k>>6] |= 1 << (k & 63)
				t.total += self[k]
			}
		}
	} else {
		for k, v := range self {
			if v != 0 {
				hit[k>>6] |= 1 << (k & 63)
				t.total += v
			}
		}
	}
	return t
}

// clear zeroes the counts of the nodes whose bits are set, and the bits.
func (t *tally) clear() {
	t.total = 0
	for w, bits := range t.hit {
		for bits != 0 {
			k := w<<6 | bits64.TrailingZeros64(bits)
			t.self[k], t.weight[k] = 0, 0
			bits &= bits - 1
		}
		t.hit[w] = 0
	}
}

// nextHit returns the first node from k on with samples in t or base
// (nil for none), or n when there is none.
func nextHit(t, base *tally, k, n int) int {
	for w := k >> 6; w < len(t.hit); w++ {
		bits := t.hit[w]
		if base != nil {
			bits |= base.hit[w]
		}
		if w == k>>6 {
			bits &^= 1<<(k&63) - 1
		}
		if bits != 0 {
			return min(n, w<<6|bits64.TrailingZeros64(bits))
		}
	}
	return n
}

// graph emits the nodes with samples in their subtrees in t (or in base,
// for a differential graph), in index order, which is the pre-order of the
// pruned tree. The walk goes up the index from the root and steps over
// each subtree without samples ([k, end[k]) holds no node with a bit set
// in the tallies), so that it visits the nodes it emits and their empty
// siblings rather than the whole index: on the real 27 s capture, a 1 s
// range's 16,576 nodes of 99,305. The totals are then summed over the
// nodes emitted, each into its parent, last first.
func (ix *index) graph(t, base *tally) *Graph {
	n := ix.Len()
	// The walk lists the nodes; then they are emitted.
	if t.nodes == nil {
		t.nodes = make([]int32, 0, n)
	}
	list := t.nodes[:0]
	for k, hit := 0, 0; k < n; {
		if hit < k {
			hit = nextHit(t, base, k, n)
		}
		if k > 0 && hit >= int(ix.end[k]) {
			k = int(ix.end[k])
			continue
		}
		list = append(list, int32(k))
		k++
	}
	t.nodes = list
	size := len(list)
	g := &Graph{Kinds: kindNames, Total: t.total, ix: ix}
	i32 := make([]int32, 5*size)
	g.Name, g.DSO, g.Kind = i32[:0:size], i32[size:size:2*size], i32[2*size:2*size:3*size]
	g.Depth, g.Parent = i32[3*size:3*size:4*size], i32[4*size:4*size:5*size]
	g.node = make([]int32, 0, size)
	cols := 3
	if base != nil {
		cols = 6
	}
	i64 := make([]int64, cols*size)
	g.TotalN, g.SelfN, g.selfW = i64[:size:size], i64[size:size:2*size], i64[2*size:2*size:3*size]
	if base != nil {
		g.BaseTotal = base.total
		g.BaseN, g.BaseSelfN, g.baseSelfW = i64[3*size:4*size:4*size], i64[4*size:4*size:5*size], i64[5*size:5*size:6*size]
	}
	str := make([]int32, len(ix.strings)) // output string + 1; 0 when not yet used
	use := func(s int32) int32 {
		if str[s] == 0 {
			g.Strings = append(g.Strings, ix.strings[s])
			str[s] = int32(len(g.Strings))
		}
		return str[s] - 1
	}
	var last []int32 // per depth: the output node emitted last
	for _, k := range list {
		d := ix.depth[k]
		at := int32(len(g.Name))
		parent := int32(-1)
		if d > 0 {
			parent = last[d-1]
		}
		last = append(last[:d], at)
		g.Name = append(g.Name, use(ix.name[k]))
		g.DSO = append(g.DSO, use(ix.dso[k]))
		g.Kind = append(g.Kind, int32(ix.kind[k]))
		g.Depth = append(g.Depth, d)
		g.Parent = append(g.Parent, parent)
		g.node = append(g.node, k)
		g.TotalN[at] = t.self[k]
		g.SelfN = append(g.SelfN, t.self[k])
		g.selfW = append(g.selfW, t.weight[k])
		if base != nil {
			g.BaseN[at] = base.self[k]
			g.BaseSelfN = append(g.BaseSelfN, base.self[k])
			g.baseSelfW = append(g.baseSelfW, base.weight[k])
		}
	}
	// The totals, children (later in pre-order) before their parents.
	for i := size - 1; i > 0; i-- {
		g.TotalN[g.Parent[i]] += g.TotalN[i]
		if base != nil {
			g.BaseN[g.Parent[i]] += g.BaseN[i]
		}
	}
	return g
}
