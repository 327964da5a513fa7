// Package folded turns samples into folded stacks, the text format of
// FlameGraph's stackcollapse-perf.pl: one line per distinct stack, frames
// root-first joined by ';', a space, then the summed sample period. The
// command name is the root frame. Names are tidied the way the reference
// does it (offsets dropped, [unknown] frames named after their DSO, C++
// argument lists cut, quotes removed, Java signatures condensed), so that
// flame graph tools read the output unchanged; docs/conformance.md lists
// where Subsecond deliberately differs.
//
//	c := folded.New(folded.Options{Kernel: true})
//	for sc.Scan() {
//		c.AddFrames(sc.Sample(), sc.FrameIDs()) // or c.Add(sample) from any source
//	}
//	_, err := c.WriteTo(os.Stdout)
//
// A Collapser's memory grows with the number of distinct stacks and frame
// names, not with the number of samples.
package folded

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/symbol"
)

// Options select what the folded names show. The flag names match
// stackcollapse-perf.pl's.
type Options struct {
	PID     bool // root frame "comm-pid"
	TID     bool // root frame "comm-pid/tid" (takes precedence over PID)
	Kernel  bool // suffix kernel frames with _[k]
	JIT     bool // suffix JIT frames with _[j]
	Addrs   bool // show the address of [unknown] frames: [dso <addr>]
	SrcLine bool // append ":file:line" where perf printed a source line
	// Event is the event to keep. "" keeps the first sampling event seen
	// (see subsecond.IsTracepoint), else the first event: samples of a
	// leading tracepoint are counted until a sampling event appears, then
	// dropped in its favour.
	Event string
}

// All returns o with both kernel and JIT annotations on, as the reference's
// --all does.
func (o Options) All() Options {
	o.Kernel, o.JIT = true, true
	return o
}

type frameKey struct {
	sym, dso, src string
	addr          uint64
	java          bool
}

type rootKey struct {
	comm     string
	pid, tid int32
}

type run struct{ start, n uint32 }

// Collapser counts folded stacks.
type Collapser struct {
	opt  Options
	auto bool // opt.Event was "": a sampling event may replace a tracepoint

	names    []string
	nameIDs  map[string]uint32
	seq      []uint32 // name ids of cached frames, see frames
	frames   map[frameKey]run
	byID     [2][]uint32 // 1 + the one folded name of a frame by caller ID, without and with Java tidying; 0 if not cached
	roots    map[rootKey]uint32
	lastRoot struct {
		key rootKey
		id  uint32
		ok  bool
	}
	stacks map[string]int // index into counts
	counts []uint64
	key    []byte

	added, skipped int64
}

// New returns an empty Collapser.
func New(opt Options) *Collapser {
	return &Collapser{
		opt:     opt,
		auto:    opt.Event == "",
		nameIDs: map[string]uint32{},
		frames:  make(map[frameKey]run, 1<<12),
		roots:   map[rootKey]uint32{},
		stacks:  make(map[string]int, 1<<12),
	}
}

// Add counts s, unless it belongs to another event than the one kept.
// The Collapser keeps no reference to s.
func (c *Collapser) Add(s *subsecond.Sample) { c.AddFrames(s, nil) }

// AddFrames is Add with a dense identity for each of s's frames (see
// parser.Scanner.FrameIDs): frames with equal IDs must have equal Symbol and
// DSO. The Collapser then caches each frame's folded names by ID, which is
// several times faster than by value. IDs must come from one source for the
// Collapser's whole life; ids may be nil.
func (c *Collapser) AddFrames(s *subsecond.Sample, ids []uint32) {
	if len(ids) != len(s.Frames) || c.opt.Addrs || c.opt.SrcLine {
		ids = nil
	}
	if c.opt.Event == "" {
		c.opt.Event = s.Event
	} else if s.Event != c.opt.Event {
		if !c.auto || !subsecond.IsTracepoint(c.opt.Event) || subsecond.IsTracepoint(s.Event) {
			c.skipped++
			return
		}
		// The first sampling event after leading tracepoints: keep it
		// instead.
		c.opt.Event = s.Event
		c.skipped += c.added
		c.added = 0
		clear(c.stacks)
		c.counts = c.counts[:0]
	}
	c.added++
	root := c.root(s)
	java := strings.HasPrefix(c.names[root], "java")
	k := binary.LittleEndian.AppendUint32(c.key[:0], root)
	var byID []uint32
	useIDs := ids != nil
	if useIDs {
		j := 0
		if java {
			j = 1
		}
		byID = c.byID[j]
	}
	for i := len(s.Frames) - 1; i >= 0; i-- {
		f := &s.Frames[i]
		if useIDs {
			if id := ids[i]; int(id) < len(byID) && byID[id] != 0 {
				k = binary.LittleEndian.AppendUint32(k, byID[id]-1)
				continue
			}
		}
		fk := frameKey{sym: f.Symbol, dso: f.DSO, java: java}
		if c.opt.Addrs && f.Symbol == "[unknown]" {
			fk.addr = f.Addr
		}
		if c.opt.SrcLine {
			fk.src = f.SrcLine
		}
		r, ok := c.frames[fk]
		if !ok {
			r = c.frame(fk)
		}
		for _, name := range c.seq[r.start : r.start+r.n] {
			k = binary.LittleEndian.AppendUint32(k, name)
		}
		if useIDs && r.n == 1 {
			byID = c.cacheID(java, int(ids[i]), c.seq[r.start])
		}
	}
	c.key = k
	w := s.Period
	if w == 0 {
		w = 1
	}
	if i, ok := c.stacks[string(k)]; ok {
		c.counts[i] += w
		return
	}
	c.stacks[string(k)] = len(c.counts)
	c.counts = append(c.counts, w)
}

// cacheID records the one folded name of frame id and returns the updated
// table. Frames with several names (A->B->C) are not cached by ID.
func (c *Collapser) cacheID(java bool, id int, name uint32) []uint32 {
	j := 0
	if java {
		j = 1
	}
	t := c.byID[j]
	if id >= len(t) {
		t = append(t, make([]uint32, id+1-len(t)+len(t)/2)...)
	}
	t[id] = name + 1
	c.byID[j] = t
	return t
}

// Event returns the event being kept ("" before the first sample; while
// only tracepoints were seen, possibly not the final one).
func (c *Collapser) Event() string { return c.opt.Event }

// Counts returns how many samples were counted and how many were skipped
// because they belong to another event.
func (c *Collapser) Counts() (added, skipped int64) { return c.added, c.skipped }

// Len returns the number of distinct folded stacks.
func (c *Collapser) Len() int { return len(c.stacks) }

// Lines returns the folded lines, sorted, without line endings.
func (c *Collapser) Lines() []string {
	keys := c.sorted()
	lines := make([]string, len(keys))
	var b []byte
	for i, k := range keys {
		b = c.appendLine(b[:0], k)
		lines[i] = string(b)
	}
	return lines
}

// WriteTo writes the folded lines, sorted, each ending in a newline.
func (c *Collapser) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	var b []byte
	for _, k := range c.sorted() {
		b = append(c.appendLine(b[:0], k), '\n')
		m, err := bw.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// appendLine appends the folded line of stack key k, without a newline.
func (c *Collapser) appendLine(b []byte, k string) []byte {
	for j := 0; j+4 <= len(k); j += 4 {
		if j > 0 {
			b = append(b, ';')
		}
		b = append(b, c.names[keyID(k, j)]...)
	}
	b = append(b, ' ')
	return strconv.AppendUint(b, c.counts[c.stacks[k]], 10)
}

func keyID(k string, j int) uint32 { return binary.LittleEndian.Uint32([]byte(k[j : j+4])) }

// sorted returns the stack keys in the byte order of their folded lines, as
// the reference sorts its output. Keys are compared name by name, which
// avoids rendering the lines: long common prefixes cost one integer
// comparison per frame.
func (c *Collapser) sorted() []string {
	keys := make([]string, 0, len(c.stacks))
	for k := range c.stacks {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, c.compare)
	return keys
}

// compare orders stack keys a and b as bytes.Compare orders their lines.
func (c *Collapser) compare(a, b string) int {
	// Skip the common prefix eight bytes (two frames) at a time.
	j := 0
	for n := min(len(a), len(b)) - 8; j <= n && a[j:j+8] == b[j:j+8]; j += 8 {
	}
	for ; ; j += 4 {
		switch {
		case j == len(a) && j == len(b):
			return 0
		case j == len(a):
			return -1 // a's line continues with ' ', b's with ';'
		case j == len(b):
			return 1
		}
		x, y := keyID(a, j), keyID(b, j)
		if x == y {
			continue
		}
		na, nb := c.names[x], c.names[y]
		m := min(len(na), len(nb))
		if r := strings.Compare(na[:m], nb[:m]); r != 0 {
			return r
		}
		// One name is a prefix of the other: the shorter one's next byte
		// is its separator, ';' or, after the last frame, ' '.
		sep := func(k string) byte {
			if j+4 == len(k) {
				return ' '
			}
			return ';'
		}
		var ca, cb byte
		if len(na) < len(nb) {
			ca, cb = sep(a), nb[m]
		} else {
			ca, cb = na[m], sep(b)
		}
		if ca != cb {
			return int(ca) - int(cb)
		}
		return bytes.Compare(c.appendLine(nil, a), c.appendLine(nil, b))
	}
}

func (c *Collapser) name(s string) uint32 {
	if id, ok := c.nameIDs[s]; ok {
		return id
	}
	id := uint32(len(c.names))
	c.names = append(c.names, s)
	c.nameIDs[s] = id
	return id
}

// root returns the name id of s's root frame: its command name, with spaces
// turned into underscores, and the pid and tid when asked for ("?" where the
// input had none).
func (c *Collapser) root(s *subsecond.Sample) uint32 {
	rk := rootKey{comm: s.Comm}
	if c.opt.TID || c.opt.PID {
		rk.pid = s.PID
	}
	if c.opt.TID {
		rk.tid = s.TID
	}
	if rk == c.lastRoot.key && c.lastRoot.ok {
		return c.lastRoot.id
	}
	id, ok := c.roots[rk]
	if !ok {
		id = c.newRoot(rk, s)
	}
	c.lastRoot.key, c.lastRoot.id, c.lastRoot.ok = rk, id, true
	return id
}

func (c *Collapser) newRoot(rk rootKey, s *subsecond.Sample) uint32 {
	name := symbol.Comm(s.Comm)
	switch {
	case c.opt.TID:
		name += "-" + idString(s.PID) + "/" + idString(s.TID)
	case c.opt.PID:
		name += "-" + idString(s.PID)
	}
	id := c.name(name)
	c.roots[rk] = id
	return id
}

func idString(id int32) string {
	if id == subsecond.Unknown {
		return "?"
	}
	return strconv.Itoa(int(id))
}

// frame computes and caches the folded names of one frame.
func (c *Collapser) frame(fk frameKey) run {
	r := run{start: uint32(len(c.seq))}
	for _, n := range Names(fk.sym, fk.dso, fk.src, fk.addr, fk.java, c.opt) {
		c.seq = append(c.seq, c.name(n))
	}
	r.n = uint32(len(c.seq)) - r.start
	c.frames[fk] = r
	return r
}

// Names returns the folded names of one frame, root-most first: those of
// symbol.Names, with the frame's kind classified from its DSO
// (parser.Kind), as the reference annotates kernel and JIT frames.
func Names(sym, dso, src string, addr uint64, java bool, o Options) []string {
	return symbol.Names(sym, dso, src, addr, parser.Kind(sym, dso, false), java, o.names())
}

// names returns the options of symbol.Names that o selects.
func (o Options) names() symbol.Options {
	return symbol.Options{Kernel: o.Kernel, JIT: o.JIT, Addrs: o.Addrs, SrcLine: o.SrcLine}
}
