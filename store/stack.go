package store

import (
	"math"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/probe"
)

// stackCache puts a fast path in front of Interner.Stack. A frame is found
// through the parser's dense frame ID (plus the fields the ID does not
// cover) rather than by hashing its fields. A stack is then found, in this
// order: as the previous stack of the same thread, when it is the same; in
// a table of the stacks met so far, by a hash of its frame indexes built
// while they are found; or by the walk down the Interner's nodes, which
// starts below the longest common prefix (from the root) with the previous
// stack of the same thread, so that only the frames below it need a
// look-up in the Interner's node table, one each. On the real 27 s capture
// with deep stacks (643,225 frames in 47,290 samples, 20,329 distinct
// stacks) the walks take 268,487 node look-ups, against 462,528 without
// the prefix; on the generated incident, whose threads rarely repeat their
// previous stack, nearly every stack is found in the table. Misses go to
// the Interner, so the indexes are exactly the ones it assigns.
type stackCache struct {
	in     *subsecond.Interner
	byID   []frameEntry         // by parser frame ID: the first frame met with that text
	others frameTable           // the frames of a text at other addresses than byID's
	paths  map[int32]*stackPath // by thread ID
	stacks stackTable
	key    []int32
}

// stackPath is a stack met before: its frames and their nodes, and the
// parser's IDs and the addresses of its frames, root-first. The ID of a
// frame with a source line, which the ID and address do not fix, is noID;
// ids is empty when the parser's IDs were forgotten (forgetIDs).
type stackPath struct {
	frames, nodes []int32
	ids           []uint32
	addrs         []uint64
}

// noID is no parser frame ID: they count distinct stack-line texts, far
// fewer.
const noID = math.MaxUint32

// maxPaths bounds the threads whose latest stack is kept.
const maxPaths = 1 << 16

// frameEntry is one interned frame among those sharing a parser frame ID.
type frameEntry struct {
	addr     uint64
	src      string
	sym, dso uint32 // the Interner's strings of the ID's symbol and DSO, shared by its frames
	kind     subsecond.FrameKind
	idx1     int32 // the frame's index + 1; 0 in an entry not yet set
}

func newStackCache(in *subsecond.Interner) *stackCache {
	return &stackCache{in: in, paths: map[int32]*stackPath{}}
}

// forgetIDs forgets the frames found by parser frame ID, for a Scanner
// that numbers its frame texts from 0 again (see parser.Scanner.Reset);
// the threads' stacks, made of interned frames, stay.
func (c *stackCache) forgetIDs() {
	clear(c.byID)
	c.byID = c.byID[:0]
	c.others = frameTable{}
	for _, p := range c.paths {
		p.ids, p.addrs = p.ids[:0], p.addrs[:0]
	}
}

// stack returns the Interner's node for frames (leaf-first) sampled in
// thread tid; ids are the parser's frame IDs, parallel to frames, or nil.
func (c *stackCache) stack(frames []subsecond.Frame, ids []uint32, tid int32) int32 {
	if len(frames) == 0 {
		return 0
	}
	if len(ids) != len(frames) {
		return c.in.Stack(frames)
	}
	p := c.paths[tid]
	if p == nil {
		if len(c.paths) >= maxPaths {
			clear(c.paths)
		}
		p = &stackPath{}
		c.paths[tid] = p
	}
	// The frames are interned root-first, as Interner.Stack interns them.
	// Those that p's stack has at the same depths from the root, with the
	// same parser ID and address and no source line, are its frames: half
	// of the real 27 s capture's, whose look-up this saves.
	n := len(frames)
	k := 0
	for k < n && k < len(p.ids) && ids[n-1-k] == p.ids[k] && frames[n-1-k].Addr == p.addrs[k] && frames[n-1-k].SrcLine == "" {
		k++
	}
	key := append(c.key[:0], p.frames[:k]...)
	for i := n - 1 - k; i >= 0; i-- {
		key = append(key, c.frame(&frames[i], ids[i]))
	}
	c.key = key
	h := uint64(n)
	for _, f := range key {
		h = (h ^ uint64(uint32(f))) * 0x9E3779B97F4A7C15
	}
	for k < len(key) && k < len(p.frames) && key[k] == p.frames[k] {
		k++
	}
	if k == len(key) && k == len(p.frames) {
		return p.nodes[k-1]
	}
	slot := c.stacks.find(h, key)
	if slot.node != 0 {
		return slot.node
	}
	// What is left is Interner.Stack's walk down the nodes, below the
	// prefix shared with p.
	node := int32(0)
	if k > 0 {
		node = p.nodes[k-1]
	}
	p.frames = append(p.frames[:k], key[k:]...)
	p.nodes = p.nodes[:k]
	for _, f := range key[k:] {
		node = c.in.Node(node, f)
		p.nodes = append(p.nodes, node)
	}
	p.ids, p.addrs = p.ids[:0], p.addrs[:0]
	for i := n - 1; i >= 0; i-- {
		id := ids[i]
		if frames[i].SrcLine != "" {
			id = noID
		}
		p.ids, p.addrs = append(p.ids, id), append(p.addrs, frames[i].Addr)
	}
	c.stacks.add(slot, h, key, node)
	return node
}

// stackTable finds a stack's node by its frame indexes (root-first): open
// addressing with linear probing over slots that hold each stack's hash,
// where its frames are in keys, and its node (0 marks a free slot).
type stackTable struct {
	slots []stackSlot // a power of two of them, at most half full
	n     int
	shift uint8 // 64 − log2(len(slots))
	keys  []int32
}

type stackSlot struct {
	hash     uint64
	off, len uint32
	node     int32
}

// find returns the slot of key, whose hash is h: the stack's, or the free
// slot where add puts it.
func (t *stackTable) find(h uint64, key []int32) *stackSlot {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.node == 0 || s.hash == h && slices.Equal(t.keys[s.off:s.off+s.len], key) {
			return s
		}
	}
}

// add puts key, whose hash is h, with its node into the free slot s that
// find returned.
func (t *stackTable) add(s *stackSlot, h uint64, key []int32, node int32) {
	if len(t.keys)+len(key) > math.MaxUint32 {
		return // not remembered; found by its walk
	}
	*s = stackSlot{hash: h, off: uint32(len(t.keys)), len: uint32(len(key)), node: node}
	if len(t.keys)+len(key) > cap(t.keys) {
		t.keys = slices.Grow(t.keys, max(len(t.keys), len(key))) // doubled: see subsecond's Interner
	}
	t.keys = append(t.keys, key...)
	t.n++
}

// grow doubles the slots (to 1,024 at first) and puts every stack back.
func (t *stackTable) grow() {
	t.slots, t.shift = probe.Grow(t.slots, 1024, func(s *stackSlot) bool { return s.node != 0 },
		func(s *stackSlot) uint64 { return s.hash })
}

// frame returns the Interner's index of f, whose parser frame ID is id.
// The first frame of an ID sits in byID itself, so that finding it costs
// no pointer to chase; the same text at other addresses (a JIT map's
// "[unknown]", a symbol without offsets) is found in others.
func (c *stackCache) frame(f *subsecond.Frame, id uint32) int32 {
	if int(id) >= len(c.byID) {
		if id > 1<<24 {
			return c.in.Frame(f)
		}
		if int(id) >= cap(c.byID) {
			// Doubled: grown an ID at a time by append, a quarter at a
			// time, the copies were 3.6 MB of garbage on the real 27 s
			// capture (23,500 IDs).
			c.byID = slices.Grow(c.byID, max(int(id)+1, 2*cap(c.byID), 256)-len(c.byID))
		}
		c.byID = c.byID[:id+1]
	}
	e := &c.byID[id]
	if e.idx1 != 0 && e.addr == f.Addr && e.kind == f.Kind && e.src == f.SrcLine {
		return e.idx1 - 1
	}
	if e.idx1 == 0 {
		sym, dso := c.in.String(f.Symbol), c.in.String(f.DSO)
		idx := c.in.Rec(c.rec(f, sym, dso))
		*e = frameEntry{addr: f.Addr, src: f.SrcLine, sym: sym, dso: dso, kind: f.Kind, idx1: idx + 1}
		return idx
	}
	return c.others.frame(c, f, id, e)
}

// rec returns the record of f, whose symbol and DSO are the strings sym
// and dso, interning its source line: Interner.Frame's record, its
// strings interned in the same order, without looking up again the
// symbol and DSO that every frame of a parser frame ID shares (a long
// symbol's look-up cost as much as the frame's; the real 27 s capture
// has 31,500 frames of 23,500 IDs). The Interner's string 0 is "".
func (c *stackCache) rec(f *subsecond.Frame, sym, dso uint32) subsecond.FrameRec {
	var src uint32
	if f.SrcLine != "" {
		src = c.in.String(f.SrcLine)
	}
	return subsecond.FrameRec{Symbol: sym, DSO: dso, SrcLine: src, Addr: f.Addr, Kind: f.Kind, Inline: f.Inline}
}

// frameTable finds an interned frame by its parser frame ID and address
// (and kind and source line, which the ID does not cover either): open
// addressing with linear probing, at most half full. On the real 27 s
// capture 14 texts (JIT code's "[unknown]") are met at more than eight
// addresses each, in 131,000 of its 643,000 stack lines; each of those
// went to the Interner's maps, by three strings and the whole frame.
type frameTable struct {
	slots []frameSlot // a power of two of them; idx1 0 marks a free slot
	n     int
	shift uint8 // 64 − log2(len(slots))
}

type frameSlot struct {
	addr uint64
	src  string
	id   uint32
	kind subsecond.FrameKind
	idx1 int32 // the frame's index + 1
}

// frame returns the Interner's index of f, whose parser frame ID is id,
// interning it through c when it is not in the table; first is the ID's
// entry in c.byID.
func (t *frameTable) frame(c *stackCache, f *subsecond.Frame, id uint32, first *frameEntry) int32 {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := frameHash(id, f.Addr) >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.idx1 == 0 {
			idx := c.in.Rec(c.rec(f, first.sym, first.dso))
			*s = frameSlot{addr: f.Addr, src: f.SrcLine, id: id, kind: f.Kind, idx1: idx + 1}
			t.n++
			return idx
		}
		if s.id == id && s.addr == f.Addr && s.kind == f.Kind && s.src == f.SrcLine {
			return s.idx1 - 1
		}
	}
}

// frameHash mixes a frame's ID and address; its top bits choose a slot.
func frameHash(id uint32, addr uint64) uint64 {
	return (addr ^ uint64(id)*0x9E3779B97F4A7C15) * 0xC2B2AE3D27D4EB4F
}

// grow doubles the slots (to 256 at first) and puts every frame back.
func (t *frameTable) grow() {
	t.slots, t.shift = probe.Grow(t.slots, 256, func(s *frameSlot) bool { return s.idx1 != 0 },
		func(s *frameSlot) uint64 { return frameHash(s.id, s.addr) })
}
