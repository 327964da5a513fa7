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
// "base_total" and "base_n", the base range's counts on the same nodes;
// nodes seen only in the base have total_n 0. Compare shares, not counts:
// total_n/total against base_n/base_total.
//
//	g, err := flame.Build(capture, filter, subsecond.Range{Start: t0 + 1e9, End: t0 + 2e9})
//	if err != nil { … }
//	err = g.Export(w, "svg")
package flame

import (
	"fmt"
	"sort"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/folded"
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

	BaseStart int64   `json:"base_start_ns,omitempty"`
	BaseEnd   int64   `json:"base_end_ns,omitempty"`
	BaseTotal int64   `json:"base_total,omitempty"`
	BaseN     []int64 `json:"base_n,omitempty"`

	Parent []int32 `json:"-"` // -1 for the root

	selfW []int64 // summed sample weights (periods) behind SelfN

	c *subsecond.Capture
	f subsecond.Filter
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
func Build(c *subsecond.Capture, f subsecond.Filter, r subsecond.Range) (*Graph, error) {
	b, err := newBuilder(c, f)
	if err != nil {
		return nil, err
	}
	if err := b.add(r, 0); err != nil {
		return nil, err
	}
	g := b.graph(false)
	g.Start, g.End = r.Start, r.End
	return g, nil
}

// Diff returns the differential flame graph from base to target: the union
// of both trees, TotalN/SelfN counting target's samples and BaseN base's.
func Diff(c *subsecond.Capture, f subsecond.Filter, base, target subsecond.Range) (*Graph, error) {
	b, err := newBuilder(c, f)
	if err != nil {
		return nil, err
	}
	if err := b.add(target, 0); err != nil {
		return nil, err
	}
	if err := b.add(base, 1); err != nil {
		return nil, fmt.Errorf("base range: %w", err)
	}
	g := b.graph(true)
	g.Start, g.End = target.Start, target.End
	g.BaseStart, g.BaseEnd = base.Start, base.End
	return g, nil
}

// CheckRange reports whether r can be drawn from c: not empty and holding
// samples. Errors wrap subsecond.ErrInvalid or subsecond.ErrEmptyRange and
// give the range in seconds from T0.
func CheckRange(c *subsecond.Capture, r subsecond.Range) (lo, hi int, err error) {
	t0 := c.Profile.T0()
	span := func(r subsecond.Range) string {
		return fmt.Sprintf("[%s, %s) s", subsecond.FormatSeconds(r.Start-t0), subsecond.FormatSeconds(r.End-t0))
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
				span(r), subsecond.FormatSeconds(c.Samples.Time[n-1]-t0), subsecond.ErrEmptyRange)
		default:
			return 0, 0, fmt.Errorf("range %s: %w", span(r), subsecond.ErrEmptyRange)
		}
	}
	return lo, hi, nil
}

// builder accumulates counts into a tree whose nodes are created parent
// first, so a reverse pass sums totals.
type builder struct {
	c *subsecond.Capture
	f subsecond.Filter
	m *subsecond.Match

	strs    map[string]int32
	strings []string
	frNames [2][][]int32 // per capture frame, without and with Java tidying: output strings of its names
	frDSO   []int32
	commStr map[uint32]int32
	java    int // 1 while resolving a command named java*

	parent []int32
	name   []int32
	dso    []int32
	kind   []int32
	self   [3][]int64 // slot 0 samples, 1 base samples, 2 slot 0's summed weight
	kids   map[[3]int32]int32

	// per stack node memo of the tree node, valid when gen matches
	memo    []int32
	memoGen []int32
	gen     int32
	path    []int32
}

func newBuilder(c *subsecond.Capture, f subsecond.Filter) (*builder, error) {
	m, err := f.Compile(c)
	if err != nil {
		return nil, err
	}
	b := &builder{c: c, f: f, m: m, strs: map[string]int32{}, commStr: map[uint32]int32{}, kids: map[[3]int32]int32{}}
	b.frNames[0] = make([][]int32, len(c.Frames))
	b.frNames[1] = make([][]int32, len(c.Frames))
	b.frDSO = make([]int32, len(c.Frames))
	b.memo = make([]int32, len(c.Nodes))
	b.memoGen = make([]int32, len(c.Nodes))
	b.newNode(-1, b.str("all"), b.str(""), KindRoot)
	return b, nil
}

func (b *builder) str(s string) int32 {
	if i, ok := b.strs[s]; ok {
		return i
	}
	i := int32(len(b.strings))
	b.strings = append(b.strings, s)
	b.strs[s] = i
	return i
}

func (b *builder) newNode(parent, name, dso, kind int32) int32 {
	i := int32(len(b.parent))
	b.parent = append(b.parent, parent)
	b.name = append(b.name, name)
	b.dso = append(b.dso, dso)
	b.kind = append(b.kind, kind)
	for s := range b.self {
		b.self[s] = append(b.self[s], 0)
	}
	return i
}

func (b *builder) child(parent, name, dso, kind int32) int32 {
	k := [3]int32{parent, name, dso}
	if i, ok := b.kids[k]; ok {
		return i
	}
	i := b.newNode(parent, name, dso, kind)
	b.kids[k] = i
	return i
}

// frame returns the tree node below parent for capture frame fr: one
// level per name, an inlined chain "A->B" giving two.
func (b *builder) frame(parent, fr int32) int32 {
	names := b.frNames[b.java][fr]
	rec := &b.c.Frames[fr]
	if names == nil {
		dso := b.c.Strings[rec.DSO]
		for _, n := range Names(b.c.Strings[rec.Symbol], dso, b.java == 1) {
			names = append(names, b.str(n))
		}
		b.frNames[b.java][fr] = names
		b.frDSO[fr] = b.str(dso)
	}
	kind := int32(rec.Kind)
	if rec.Inline {
		kind = int32(subsecond.KindInlined)
	}
	t := parent
	for i, n := range names {
		if i > 0 {
			kind = int32(subsecond.KindInlined)
		}
		t = b.child(t, n, b.frDSO[fr], kind)
	}
	return t
}

// add counts the samples of r that pass the filter into slot.
func (b *builder) add(r subsecond.Range, slot int) error {
	lo, hi, err := CheckRange(b.c, r)
	if err != nil {
		return err
	}
	s := &b.c.Samples
	// Counts per stack node for the node's first command; other
	// (command, node) pairs, rare, go to a map.
	cnt := make([]int64, len(b.c.Nodes))
	wt := make([]int64, len(b.c.Nodes))
	comm := make([]uint32, len(b.c.Nodes))
	other := map[[2]uint32][2]int64{}
	for i := lo; i < hi; i++ {
		if !b.m.Keep(i) {
			continue
		}
		n, cm, w := s.Stack[i], s.Comm[i], int64(s.Weight[i])
		switch {
		case cnt[n] == 0:
			cnt[n], wt[n], comm[n] = 1, w, cm
		case comm[n] == cm:
			cnt[n]++
			wt[n] += w
		default:
			k := [2]uint32{cm, uint32(n)}
			o := other[k]
			other[k] = [2]int64{o[0] + 1, o[1] + w}
		}
	}
	type pair struct {
		comm uint32
		node int32
		n, w int64
	}
	var pairs []pair
	for n, k := range cnt {
		if k > 0 {
			pairs = append(pairs, pair{comm[n], int32(n), k, wt[n]})
		}
	}
	for k, v := range other {
		pairs = append(pairs, pair{k[0], int32(k[1]), v[0], v[1]})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].comm != pairs[j].comm {
			return pairs[i].comm < pairs[j].comm
		}
		return pairs[i].node < pairs[j].node
	})
	var commNode int32
	for i, p := range pairs {
		if i == 0 || p.comm != pairs[i-1].comm {
			b.gen++
			cs, ok := b.commStr[p.comm]
			if !ok {
				cs = b.str(b.c.Strings[p.comm])
				b.commStr[p.comm] = cs
			}
			commNode = b.child(0, cs, b.str(""), KindComm)
			b.java = 0
			if strings.HasPrefix(b.c.Strings[p.comm], "java") {
				b.java = 1
			}
		}
		t := b.resolve(p.node, commNode)
		b.self[slot][t] += p.n
		if slot == 0 {
			b.self[2][t] += p.w
		}
	}
	return nil
}

// resolve returns the tree node of stack node n under commNode, creating
// nodes for frames the filter shows and skipping the others.
func (b *builder) resolve(n, commNode int32) int32 {
	nodes := b.c.Nodes
	b.path = b.path[:0]
	p := n
	for p > 0 && b.memoGen[p] != b.gen {
		b.path = append(b.path, p)
		p = nodes[p].Parent
	}
	t := commNode
	if p > 0 {
		t = b.memo[p]
	}
	for i := len(b.path) - 1; i >= 0; i-- {
		q := b.path[i]
		if fr := nodes[q].Frame; b.m.KeepFrame(fr) {
			t = b.frame(t, fr)
		}
		b.memo[q], b.memoGen[q] = t, b.gen
	}
	return t
}

// graph lays the tree out in pre-order with children sorted by name.
func (b *builder) graph(diff bool) *Graph {
	n := len(b.parent)
	var tot [2][]int64
	for s := range tot {
		tot[s] = append([]int64(nil), b.self[s]...)
		for i := n - 1; i > 0; i-- {
			tot[s][b.parent[i]] += tot[s][i]
		}
	}
	kids := make([][]int32, n)
	for i := 1; i < n; i++ {
		kids[b.parent[i]] = append(kids[b.parent[i]], int32(i))
	}
	for _, k := range kids {
		if len(k) > 1 {
			sort.Slice(k, func(x, y int) bool {
				a, c := b.strings[b.name[k[x]]], b.strings[b.name[k[y]]]
				if a != c {
					return a < c
				}
				return b.strings[b.dso[k[x]]] < b.strings[b.dso[k[y]]]
			})
		}
	}
	g := &Graph{Strings: b.strings, Kinds: kindNames, c: b.c, f: b.f, Total: tot[0][0]}
	g.Name = make([]int32, 0, n)
	g.DSO = make([]int32, 0, n)
	g.Kind = make([]int32, 0, n)
	g.Depth = make([]int32, 0, n)
	g.TotalN = make([]int64, 0, n)
	g.SelfN = make([]int64, 0, n)
	g.selfW = make([]int64, 0, n)
	g.Parent = make([]int32, 0, n)
	if diff {
		g.BaseTotal = tot[1][0]
		g.BaseN = make([]int64, 0, n)
	}
	type item struct{ node, parent, depth int32 }
	stack := []item{{0, -1, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		at := int32(len(g.Name))
		g.Name = append(g.Name, b.name[it.node])
		g.DSO = append(g.DSO, b.dso[it.node])
		g.Kind = append(g.Kind, b.kind[it.node])
		g.Depth = append(g.Depth, it.depth)
		g.TotalN = append(g.TotalN, tot[0][it.node])
		g.SelfN = append(g.SelfN, b.self[0][it.node])
		g.selfW = append(g.selfW, b.self[2][it.node])
		g.Parent = append(g.Parent, it.parent)
		if diff {
			g.BaseN = append(g.BaseN, tot[1][it.node])
		}
		k := kids[it.node]
		for j := len(k) - 1; j >= 0; j-- {
			stack = append(stack, item{k[j], at, it.depth + 1})
		}
	}
	return g
}

// Names returns the names a frame has in flame graphs and folded stacks,
// root-most first, as `subsecond collapse` names them (package folded,
// after FlameGraph's stackcollapse-perf.pl): an "[unknown]" symbol takes
// its DSO's base name in brackets, ';' becomes ':', argument lists and
// quotes are dropped, and a perf-map-agent inline chain "A->B" yields "A"
// and "B_[i]". java turns on the Java signature tidying applied under
// commands named java*.
func Names(sym, dso string, java bool) []string {
	return folded.Names(sym, dso, "", 0, java, folded.Options{})
}

// CommName returns a command name as the root frame of a folded stack:
// spaces become underscores, as stackcollapse-perf.pl writes them.
func CommName(comm string) string {
	return strings.ReplaceAll(comm, " ", "_")
}
