package flame

import (
	"slices"
	"strings"
	"sync"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/symbol"
)

// index is a capture's flame-graph skeleton under one Only setting: the
// tree root → command → frames of every sample of the capture, whatever its
// time, event or filter verdict, numbered in depth-first pre-order with each
// node's children sorted by name and DSO, and the tree node each sample
// lands on. Built once per capture and Only setting (subsecond.Derived) and
// shared, read-only, by every query: a query counts its samples into an
// array indexed by node, then walks the index in order, stepping over the
// subtrees without samples, emits the nodes with a count and sums their
// totals over them: no map lookup per sample or per frame.
//
// Because numbering is pre-order, parent[k] < k, a node's subtree is the
// run [k, end[k]), and the nodes with a count, taken in index order, are
// the pre-order of the pruned tree with children still sorted.
type index struct {
	strings []string // names and DSOs; strings[0] is ""
	parent  []int32  // -1 for the root
	name    []int32  // into strings
	dso     []int32  // into strings
	kind    []uint8  // a subsecond.FrameKind, KindComm or KindRoot
	depth   []int32
	end     []int32 // one past the node's last descendant
	fn      []int32 // function id (name and DSO); -1 for the root and commands
	outer   []bool  // no ancestor has the node's function: its total counts toward the function's
	nfn     int     // number of function ids

	// frNames[j][fr] are the names of capture frame fr, root-most first
	// (one per level of an inlined chain), without (j = 0) and with (1)
	// the Java tidying of commands named java*.
	frNames [2][][]int32
	frDSO   []int32 // per capture frame: its DSO in strings

	leaf []int32 // per sample: the node its stack ends at

	tallies sync.Pool // *tally of this index's size, for reuse by count
}

// Len returns the number of nodes.
func (ix *index) Len() int { return len(ix.parent) }

// Bytes returns the memory the index holds (subsecond.Sized), so that the
// capture cache counts it; the pooled count arrays, freed by the garbage
// collector when idle, are not.
func (ix *index) Bytes() int64 {
	n := subsecond.SliceBytes(ix.strings) + subsecond.SliceBytes(ix.parent) + subsecond.SliceBytes(ix.name) +
		subsecond.SliceBytes(ix.dso) + subsecond.SliceBytes(ix.kind) + subsecond.SliceBytes(ix.depth) +
		subsecond.SliceBytes(ix.end) + subsecond.SliceBytes(ix.fn) + subsecond.SliceBytes(ix.outer) +
		subsecond.SliceBytes(ix.frDSO) + subsecond.SliceBytes(ix.leaf)
	for _, s := range ix.strings {
		n += int64(len(s))
	}
	for _, names := range ix.frNames {
		n += subsecond.SliceBytes(names)
		for _, fr := range names {
			n += subsecond.SliceBytes(fr)
		}
	}
	return n
}

type indexKey struct{ only string }

// indexOf returns c's index under only ("", "kernel" or "user"), building
// it on first use.
func indexOf(c *subsecond.Capture, only string, keep func(frame int32) bool) *index {
	return subsecond.Derived(c, indexKey{only}, func() *index { return buildIndex(c, keep) })
}

// indexBuilder grows the tree in creation order; buildIndex then renumbers
// it in pre-order.
type indexBuilder struct {
	c    *subsecond.Capture
	keep func(frame int32) bool

	strs    *subsecond.Interner // names and DSOs
	frNames [2][][]int32
	frDSO   []int32

	parent []int32
	name   []int32
	dso    []int32
	kind   []uint8
	// kids finds a node's child by parent<<32 | label, a label being a
	// distinct (name, DSO) pair: one 64-bit key hashes faster than three
	// 32-bit ones, and this lookup is most of the build.
	kids   map[uint64]int32
	labels map[[2]int32]uint32
	frLab  [2][][]uint32 // per capture frame, as frNames: the labels of its names
}

func (b *indexBuilder) str(s string) int32 { return int32(b.strs.String(s)) }

// label returns the label of the pair (name, dso).
func (b *indexBuilder) label(name, dso int32) uint32 {
	k := [2]int32{name, dso}
	l, ok := b.labels[k]
	if !ok {
		l = uint32(len(b.labels))
		b.labels[k] = l
	}
	return l
}

func (b *indexBuilder) child(parent, name, dso int32, kind uint8) int32 {
	return b.childLabel(parent, b.label(name, dso), name, dso, kind)
}

// childLabel returns parent's child with label l (name, dso), adding it
// with kind when new.
func (b *indexBuilder) childLabel(parent int32, l uint32, name, dso int32, kind uint8) int32 {
	k := uint64(uint32(parent))<<32 | uint64(l)
	if i, ok := b.kids[k]; ok {
		return i
	}
	i := int32(len(b.parent))
	b.parent = append(b.parent, parent)
	b.name = append(b.name, name)
	b.dso = append(b.dso, dso)
	b.kind = append(b.kind, kind)
	b.kids[k] = i
	return i
}

// names returns the output strings of capture frame fr's names.
func (b *indexBuilder) names(fr int32, java int) []int32 {
	names := b.frNames[java][fr]
	if names == nil {
		rec := &b.c.Frames[fr]
		dso := b.c.Strings[rec.DSO]
		for _, n := range symbol.Names(b.c.Strings[rec.Symbol], dso, "", 0, subsecond.KindUnknown, java == 1, symbol.Options{}) {
			names = append(names, b.str(n))
		}
		b.frNames[java][fr] = names
		b.frDSO[fr] = b.str(dso)
		labs := make([]uint32, len(names))
		for i, n := range names {
			labs[i] = b.label(n, b.frDSO[fr])
		}
		b.frLab[java][fr] = labs
	}
	return names
}

// frame returns the tree node below parent for capture frame fr: one level
// per name, an inlined chain "A->B" giving two.
func (b *indexBuilder) frame(parent, fr int32, java int) int32 {
	names := b.names(fr, java)
	rec := &b.c.Frames[fr]
	kind := uint8(rec.Kind)
	if rec.Inline {
		kind = uint8(subsecond.KindInlined)
	}
	labs := b.frLab[java][fr]
	t := parent
	for i, n := range names {
		if i > 0 {
			kind = uint8(subsecond.KindInlined)
		}
		t = b.childLabel(t, labs[i], n, b.frDSO[fr], kind)
	}
	return t
}

func buildIndex(c *subsecond.Capture, keep func(frame int32) bool) *index {
	b := &indexBuilder{c: c, keep: keep, strs: subsecond.NewInterner(), kids: map[uint64]int32{}, labels: map[[2]int32]uint32{}}
	for j := range b.frNames {
		b.frNames[j] = make([][]int32, len(c.Frames))
		b.frLab[j] = make([][]uint32, len(c.Frames))
	}
	b.frDSO = make([]int32, len(c.Frames))
	b.parent = append(b.parent, -1)
	b.name = append(b.name, b.str("all"))
	b.dso = append(b.dso, b.str(""))
	b.kind = append(b.kind, KindRoot)

	// The distinct (command, stack node) pairs: per stack node the first
	// command seen with it, other pairs (rare) in a map.
	s := &c.Samples
	const none = ^uint32(0)
	first := make([]uint32, len(c.Nodes))
	for i := range first {
		first[i] = none
	}
	other := map[[2]uint32]int32{}
	type pair struct {
		comm uint32
		node int32
	}
	var pairs []pair
	for i, n := range s.Stack {
		cm := s.Comm[i]
		switch first[n] {
		case none:
			first[n] = cm
			pairs = append(pairs, pair{cm, n})
		case cm:
		default:
			k := [2]uint32{cm, uint32(n)}
			if _, ok := other[k]; !ok {
				other[k] = 0
				pairs = append(pairs, pair{cm, n})
			}
		}
	}
	// Resolve the pairs command by command, so that a stack node's tree
	// node is memoised for the command at hand.
	slices.SortFunc(pairs, func(x, y pair) int {
		if x.comm != y.comm {
			return int(int64(x.comm) - int64(y.comm))
		}
		return int(x.node - y.node)
	})
	memo := make([]int32, len(c.Nodes))
	memoGen := make([]int32, len(c.Nodes))
	gen := int32(0)
	var commNode int32
	java := 0
	var path []int32
	firstLeaf := make([]int32, len(c.Nodes))
	for i, p := range pairs {
		if i == 0 || p.comm != pairs[i-1].comm {
			gen++
			name := c.Strings[p.comm]
			commNode = b.child(0, b.str(name), b.str(""), KindComm)
			java = 0
			if strings.HasPrefix(name, "java") {
				java = 1
			}
		}
		// Walk up to the nearest stack node resolved for this command.
		path = path[:0]
		q := p.node
		for q > 0 && memoGen[q] != gen {
			path = append(path, q)
			q = c.Nodes[q].Parent
		}
		t := commNode
		if q > 0 {
			t = memo[q]
		}
		for j := len(path) - 1; j >= 0; j-- {
			q := path[j]
			if fr := c.Nodes[q].Frame; keep(fr) {
				t = b.frame(t, fr, java)
			}
			memo[q], memoGen[q] = t, gen
		}
		if first[p.node] == p.comm {
			firstLeaf[p.node] = t
		} else {
			other[[2]uint32{p.comm, uint32(p.node)}] = t
		}
	}

	ix, renum := b.preorder()
	ix.frNames, ix.frDSO = b.frNames, b.frDSO
	// Each sample's node, renumbered.
	ix.leaf = make([]int32, len(s.Stack))
	for i, n := range s.Stack {
		var t int32
		if cm := s.Comm[i]; first[n] == cm {
			t = firstLeaf[n]
		} else {
			t = other[[2]uint32{cm, uint32(n)}]
		}
		ix.leaf[i] = renum[t]
	}
	return ix
}

// preorder returns the builder's tree renumbered in depth-first pre-order
// with children sorted by name, then DSO, and the renumbering: renum[old]
// is the new number of the builder's node old.
func (b *indexBuilder) preorder() (*index, []int32) {
	n := len(b.parent)
	kids := make([][]int32, n)
	for i := 1; i < n; i++ {
		kids[b.parent[i]] = append(kids[b.parent[i]], int32(i))
	}
	for _, k := range kids {
		if len(k) > 1 {
			slices.SortFunc(k, func(x, y int32) int {
				if c := strings.Compare(b.strs.Strings[b.name[x]], b.strs.Strings[b.name[y]]); c != 0 {
					return c
				}
				return strings.Compare(b.strs.Strings[b.dso[x]], b.strs.Strings[b.dso[y]])
			})
		}
	}
	ix := &index{
		strings: b.strs.Strings,
		parent:  make([]int32, 0, n),
		name:    make([]int32, 0, n),
		dso:     make([]int32, 0, n),
		kind:    make([]uint8, 0, n),
		depth:   make([]int32, 0, n),
		end:     make([]int32, n),
		fn:      make([]int32, 0, n),
		outer:   make([]bool, 0, n),
	}
	renum := make([]int32, n)
	fnID := map[[2]int32]int32{}
	var onPath []int32 // per function: occurrences among the current node's ancestors
	type item struct {
		node, parent, depth int32
		exit                bool
	}
	stack := []item{{node: 0, parent: -1}}
	var path []int32 // function ids of the nodes on the current path, root-first
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.exit {
			k := renum[it.node]
			ix.end[k] = int32(len(ix.parent))
			if f := path[len(path)-1]; f >= 0 {
				onPath[f]--
			}
			path = path[:len(path)-1]
			continue
		}
		k := int32(len(ix.parent))
		renum[it.node] = k
		ix.parent = append(ix.parent, it.parent)
		ix.name = append(ix.name, b.name[it.node])
		ix.dso = append(ix.dso, b.dso[it.node])
		ix.kind = append(ix.kind, b.kind[it.node])
		ix.depth = append(ix.depth, it.depth)
		f := int32(-1)
		if kd := b.kind[it.node]; kd != KindComm && kd != KindRoot {
			key := [2]int32{b.name[it.node], b.dso[it.node]}
			id, ok := fnID[key]
			if !ok {
				id = int32(len(fnID))
				fnID[key] = id
				onPath = append(onPath, 0)
			}
			f = id
		}
		ix.fn = append(ix.fn, f)
		ix.outer = append(ix.outer, f < 0 || onPath[f] == 0)
		if f >= 0 {
			onPath[f]++
		}
		path = append(path, f)
		stack = append(stack, item{node: it.node, exit: true})
		kk := kids[it.node]
		for j := len(kk) - 1; j >= 0; j-- {
			stack = append(stack, item{node: kk[j], parent: k, depth: it.depth + 1})
		}
	}
	ix.nfn = len(fnID)
	return ix, renum
}
