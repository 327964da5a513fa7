package subsecond

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Capture is a profile's samples in columnar form, as the analysis packages
// (heatmap, flame) read them. It is built once, by the store from SQLite or by
// a Builder from a file, and never changed afterwards, so it may be shared
// between goroutines.
//
// Strings, frames and stack nodes are interned: a sample's stack is one node
// of a prefix tree whose path from the root is the call chain root-first.
// Walking Parent links from a sample's node yields its frames leaf-first.
type Capture struct {
	Profile Profile
	Strings []string    // interned strings; Strings[0] is ""
	Frames  []FrameRec  // interned frames
	Nodes   []StackNode // stack prefix tree; Nodes[0] is the root (empty stack)
	Samples Columns     // sorted by time

	derived derivedCache // indexes built from the fields above; see Derived
}

// derivedCache holds the values Derived computes, one per key, and the
// bytes they hold.
type derivedCache struct {
	mu    sync.Mutex
	m     map[any]*derivedValue
	bytes atomic.Int64
}

type derivedValue struct {
	once sync.Once
	v    any
}

// Derived returns the value build computes from c, computing it at most
// once per key for the capture's lifetime: the indexes that the analysis
// packages build lazily from a capture and reuse for every query (a flame
// graph's node table, a filter's per-frame flags). Concurrent callers with
// the same key wait for one build; the value lives as long as c and must be
// treated as read-only, like c. key must be comparable; each package uses a
// key type of its own so that keys never collide. The value's Bytes are
// added to c's DerivedBytes once it is built.
func Derived[T Sized](c *Capture, key any, build func() T) T {
	c.derived.mu.Lock()
	if c.derived.m == nil {
		c.derived.m = map[any]*derivedValue{}
	}
	d := c.derived.m[key]
	if d == nil {
		d = &derivedValue{}
		c.derived.m[key] = d
	}
	c.derived.mu.Unlock()
	d.once.Do(func() {
		v := build()
		d.v = v
		c.derived.bytes.Add(v.Bytes())
	})
	return d.v.(T)
}

// Sized is a value that knows how much memory it holds: Bytes is an
// estimate of the bytes it keeps reachable, counted by the capacity of its
// slices, beyond what it shares with others. Every value Derived keeps is
// Sized, so that a cache of captures can count what the views added to
// them (DerivedBytes).
type Sized interface {
	Bytes() int64
}

// DerivedBytes returns the bytes held by the values Derived has built from
// c so far, by their Bytes: the memory the views' indexes add to the
// capture's own.
func (c *Capture) DerivedBytes() int64 { return c.derived.bytes.Load() }

// SliceBytes returns the bytes of the array behind s, by its capacity: the
// building block of a Sized value's Bytes. Memory that elements point to
// (strings, inner slices) is not counted.
func SliceBytes[E any](s []E) int64 {
	var e E
	return int64(cap(s)) * int64(unsafe.Sizeof(e))
}

// Bytes returns the bytes of c's own columns, tables and strings, by
// their capacity; the indexes derived from it are DerivedBytes.
func (c *Capture) Bytes() int64 {
	n := c.Samples.Bytes()
	n += SliceBytes(c.Frames) + SliceBytes(c.Nodes) + SliceBytes(c.Strings)
	for _, s := range c.Strings {
		n += int64(len(s))
	}
	return n
}

// FrameRec is an interned frame. Symbol, DSO and SrcLine index Capture.Strings.
type FrameRec struct {
	Symbol  uint32
	DSO     uint32
	SrcLine uint32
	Addr    uint64
	Kind    FrameKind
	Inline  bool
}

// StackNode is one node of the stack prefix tree. Frame indexes
// Capture.Frames; Parent is the caller's node (0 for an outermost frame).
type StackNode struct {
	Parent int32
	Frame  int32
	Depth  int32 // number of frames from the root, 1 for an outermost frame
}

// Stack appends the frames of node n to dst, leaf-first, and returns it.
func (c *Capture) Stack(dst []int32, n int32) []int32 {
	for n > 0 {
		dst = append(dst, c.Nodes[n].Frame)
		n = c.Nodes[n].Parent
	}
	return dst
}

// Search returns the index of the first sample at or after t.
func (c *Capture) Search(t int64) int {
	return sort.Search(len(c.Samples.Time), func(i int) bool { return c.Samples.Time[i] >= t })
}

// Window returns the half-open index range [lo, hi) of the samples in r.
func (c *Capture) Window(r Range) (lo, hi int) {
	lo = c.Search(r.Start)
	hi = lo + sort.Search(len(c.Samples.Time)-lo, func(i int) bool { return c.Samples.Time[lo+i] >= r.End })
	return lo, hi
}

// CacheStats describes a capture cache: the bytes of the captures it keeps
// (with the indexes derived from them) within its budget, and the lookups
// that found a capture kept (hits) or loaded it (misses) since it began.
// The hit rate is Hits / (Hits + Misses).
type CacheStats struct {
	Bytes, Budget int64
	Hits, Misses  int64
}

// IndexStats describes the fleet index writes a store runs after its
// imports have answered: those under way, and those done or failed since
// it began (a failed one is redone by the next reader of the index).
type IndexStats struct {
	Pending         int
	Written, Failed int64
}
