package store

import (
	"encoding/binary"

	"github.com/subsecond/subsecond"
)

// stackCache puts a fast path in front of Interner.Stack. Interning a
// stack frame by frame costs several map lookups per frame; here a frame is
// found through the parser's dense frame ID (plus the fields the ID does not
// cover) and a whole stack through one lookup of its frame indexes. Misses
// go to the Interner, so the indexes are exactly the ones it assigns.
type stackCache struct {
	in     *subsecond.Interner
	byID   [][]frameEntry // by parser frame ID
	stacks map[string]int32
	key    []byte
}

// frameEntry is one interned frame among those sharing a parser frame ID.
type frameEntry struct {
	addr uint64
	src  string
	kind subsecond.FrameKind
	idx  int32
}

// maxPerID bounds the frames remembered per parser frame ID (one text at
// many addresses, as a shared library mapped at different bases).
const maxPerID = 8

func newStackCache(in *subsecond.Interner) *stackCache {
	return &stackCache{in: in, stacks: map[string]int32{}}
}

// forgetIDs forgets the frames found by parser frame ID, for a Scanner
// that numbers its frame texts from 0 again (see parser.Scanner.Reset);
// the stacks found by interned frames stay.
func (c *stackCache) forgetIDs() {
	clear(c.byID)
	c.byID = c.byID[:0]
}

// stack returns the Interner's node for frames (leaf-first); ids are the
// parser's frame IDs, parallel to frames, or nil.
func (c *stackCache) stack(frames []subsecond.Frame, ids []uint32) int32 {
	if len(frames) == 0 {
		return 0
	}
	if len(ids) != len(frames) {
		return c.in.Stack(frames)
	}
	key := c.key[:0]
	for i := len(frames) - 1; i >= 0; i-- { // root-first, the order in which the Interner adds frames
		key = binary.LittleEndian.AppendUint32(key, uint32(c.frame(&frames[i], ids[i])))
	}
	c.key = key
	if n, ok := c.stacks[string(key)]; ok {
		return n
	}
	// The frames are interned already, root-first as Interner.Stack would
	// intern them; what is left is its walk down the nodes.
	n := int32(0)
	for k := 0; k < len(key); k += 4 {
		n = c.in.Node(n, int32(binary.LittleEndian.Uint32(key[k:])))
	}
	c.stacks[string(key)] = n
	return n
}

// frame returns the Interner's index of f, whose parser frame ID is id.
func (c *stackCache) frame(f *subsecond.Frame, id uint32) int32 {
	if int(id) >= len(c.byID) {
		if id > 1<<24 {
			return c.in.Frame(f)
		}
		c.byID = append(c.byID, make([][]frameEntry, int(id)+1-len(c.byID))...)
	}
	list := c.byID[id]
	for _, e := range list {
		if e.addr == f.Addr && e.kind == f.Kind && e.src == f.SrcLine {
			return e.idx
		}
	}
	idx := c.in.Frame(f)
	if len(list) < maxPerID {
		c.byID[id] = append(list, frameEntry{addr: f.Addr, src: f.SrcLine, kind: f.Kind, idx: idx})
	}
	return idx
}
