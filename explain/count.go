package explain

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/timeline"
)

// Bounds of the features counted.
const (
	// MinSamples is the fewest samples a window holds to be read; a
	// before-window with fewer is dropped (Report.Dropped).
	MinSamples = 100
	// MinCount is the fewest samples of a feature, over all windows
	// together, for it to be tested: a rule blind to which windows are
	// before-windows, so that the q-values stay valid.
	MinCount = 20
	// MaxCandidates bounds the sample features tested, the most
	// frequent over all windows together.
	MaxCandidates = 2000
	// Branch: a stack prefix is a candidate where the stacks below it
	// diverge: none of its children holds Branch of its samples (over
	// all windows together), or it has none.
	Branch = 0.9
	// PegShare and PegSeconds define a core pegged in the kernel: a
	// CPU whose samples are system time for at least PegShare of each of
	// PegSeconds or more consecutive seconds of a window (seconds from the
	// window's start; a second with fewer than pegMinSamples samples is
	// not judged).
	PegShare      = 0.9
	PegSeconds    = 2
	pegMinSamples = 5
)

// fkey names a feature of the samples: its kind and two numbers, names
// (of counts.names), a CPU or a trie node, by kind.
type fkey struct {
	kind uint8
	a, b int32
}

// Feature kinds as fkey numbers.
const (
	kComm uint8 = iota
	kLeaf
	kFunction
	kCPU
	kKernelCore
	kStack
)

// fcount is a feature's (or a trie node's) count in one window.
type fcount struct {
	id int32
	n  int64
}

// counts holds every window's feature counts: the windows' totals (all
// samples of the default event, idle ones included), and, compactly, the
// window's busy samples by trie node (exclusive: the node of each sample's
// whole stack) and the counts of the features a stack does not give (a
// command's samples on a CPU, on a pegged core). The features of the
// stacks (commands, functions, leaves) and the nodes' inclusive counts are
// derived from those when read (expand): a window of the bundled 96-CPU
// capture keeps about 900 numbers in about 2 KB, instead of 6,100 counts
// in 100 KB.
type counts struct {
	names  []string
	nameID map[string]int32
	trie   trie
	keys   []fkey
	feats  map[fkey]int32
	cpus   []int32 // CPU ids by row
	cpuRow []int32 // by CPU id below timeline.MaxCPUs: row + 1, 0 for unseen
	bigRow map[int32]int32

	total []int64
	// rows holds each window's counts: uvarint the number of nodes, then
	// (node − previous node − 1, count) for its nodes, then (feature −
	// previous feature − 1, count) for its other features to the end, all
	// uvarints, nodes and features in increasing order.
	rows   [][]byte
	series []seriesValues

	// commsOnly counts the commands and functions alone (Moves): no
	// leaves, stacks, CPUs or pegged cores.
	commsOnly bool

	// memos maps each capture's (command, stack node) pairs to the trie,
	// by capture ID: kept across windows, as a capture's stacks recur in
	// every window of it, for the keptMemos captures used last (windows
	// come in time order, a capture's together).
	memos     map[string]*memos
	memoOrder []string // the captures of memos, the least recently added first

	// scratch, reused across windows
	acc, sacc     []int64
	touched, stch []int32
	fout, nout    []fcount
	dec           []fcount
}

// trie is the stacks of every window by name: below the root (node 0),
// one node per command, then one per function, root first. A node's
// function ids (fns) are built on first use.
type trie struct {
	parent, name, depth, comm []int32
	kids                      map[[2]int32]int32
	fns                       [][]int32 // per node: its function features, distinct
	leaf, commF               []int32   // per node: its leaf and command features
	commIdx                   []int32   // per node: its command's index among commands
	commName                  []int32   // by command index: its name
	ncomm                     int32
}

func newCounts(n int) *counts {
	cs := &counts{nameID: map[string]int32{}, feats: map[fkey]int32{}, bigRow: map[int32]int32{},
		total: make([]int64, n), rows: make([][]byte, n), memos: map[string]*memos{}}
	cs.trie = trie{kids: map[[2]int32]int32{}}
	cs.trie.add(-1, -1, -1, 0)
	return cs
}

func (cs *counts) name(s string) int32  { return idOf(cs.nameID, &cs.names, s) }
func (cs *counts) feature(k fkey) int32 { return idOf(cs.feats, &cs.keys, k) }

// idOf returns k's index in *list, appending it (and its index to ids)
// when new: values numbered in order of first appearance.
func idOf[K comparable](ids map[K]int32, list *[]K, k K) int32 {
	if i, ok := ids[k]; ok {
		return i
	}
	i := int32(len(*list))
	*list = append(*list, k)
	ids[k] = i
	return i
}

// row returns cpu's row, numbering it if new.
func (cs *counts) row(cpu int32) int32 {
	if int(cpu) < len(cs.cpuRow) && cs.cpuRow[cpu] > 0 {
		return cs.cpuRow[cpu] - 1
	}
	if cpu >= timeline.MaxCPUs {
		if r, ok := cs.bigRow[cpu]; ok {
			return r
		}
		r := int32(len(cs.cpus))
		cs.cpus = append(cs.cpus, cpu)
		cs.bigRow[cpu] = r
		return r
	}
	for int(cpu) >= len(cs.cpuRow) {
		cs.cpuRow = append(cs.cpuRow, make([]int32, len(cs.cpuRow)+64)...)
	}
	cs.cpus = append(cs.cpus, cpu)
	cs.cpuRow[cpu] = int32(len(cs.cpus))
	return cs.cpuRow[cpu] - 1
}

func (t *trie) add(parent, name, comm, depth int32) int32 {
	i := int32(len(t.parent))
	t.parent = append(t.parent, parent)
	t.name = append(t.name, name)
	t.comm = append(t.comm, comm)
	t.depth = append(t.depth, depth)
	t.fns = append(t.fns, nil)
	t.leaf = append(t.leaf, -1)
	t.commF = append(t.commF, -1)
	t.commIdx = append(t.commIdx, -1)
	return i
}

// child returns the node for name below parent, adding it if new.
func (cs *counts) child(parent, name int32) int32 {
	t := &cs.trie
	k := [2]int32{parent, name}
	if n, ok := t.kids[k]; ok {
		return n
	}
	comm := t.comm[parent]
	if parent == 0 {
		comm = name
	}
	n := t.add(parent, name, comm, t.depth[parent]+1)
	t.kids[k] = n
	if parent == 0 {
		t.commIdx[n] = t.ncomm
		t.commName = append(t.commName, name)
		t.ncomm++
	} else {
		t.commIdx[n] = t.commIdx[parent]
	}
	return n
}

// nodeFeatures returns trie node n's function features (its functions,
// each once) and sets its leaf and command features.
func (cs *counts) nodeFeatures(n int32) []int32 {
	t := &cs.trie
	if t.fns[n] != nil || t.depth[n] < 1 {
		return t.fns[n]
	}
	comm := t.comm[n]
	fns := []int32{}
	var seen []int32
	for p := n; t.depth[p] >= 2; p = t.parent[p] {
		if !slices.Contains(seen, t.name[p]) {
			seen = append(seen, t.name[p])
			fns = append(fns, cs.feature(fkey{kFunction, comm, t.name[p]}))
		}
	}
	if t.depth[n] >= 2 {
		t.leaf[n] = cs.feature(fkey{kLeaf, comm, t.name[n]})
	}
	t.commF[n] = cs.feature(fkey{kComm, comm, 0})
	t.fns[n] = fns
	return fns
}

// part is a capture's samples [lo, hi) in a window, their times moved by
// shift onto the wall clock; id is the capture's ID.
type part struct {
	id     string
	c      *subsecond.Capture
	lo, hi int
	shift  int64
}

// loadParts loads the parts of the captures among caps that overlap w: a
// window of each capture when src can read one (timeline.WindowSource),
// else the whole capture.
func loadParts(ctx context.Context, src timeline.Source, caps []timeline.Capture, w Window) ([]part, error) {
	var out []part
	for i := range caps {
		c := &caps[i]
		if c.End <= w.From || c.Start >= w.To {
			continue
		}
		r := subsecond.Range{Start: w.From - c.Offset, End: w.To - c.Offset}
		var k *subsecond.Capture
		var err error
		if ws, ok := src.(timeline.WindowSource); ok {
			k, err = ws.CaptureWindow(ctx, c.ID, r)
		} else {
			k, err = src.Capture(ctx, c.ID)
		}
		if err != nil {
			return nil, err
		}
		lo, hi := k.Window(r)
		out = append(out, part{id: c.ID, c: k, lo: lo, hi: hi, shift: c.Offset})
	}
	return out, nil
}

// countWindows loads and counts wins, loading a few windows ahead of the
// one counted; commsOnly counts the commands and functions alone.
func countWindows(ctx context.Context, src timeline.Source, in *input, wins []Window, commsOnly bool) (*counts, error) {
	cs := newCounts(len(wins))
	cs.commsOnly = commsOnly
	rows := make([]int, len(wins))
	for i := range rows {
		rows[i] = i
	}
	if err := cs.countInto(ctx, src, in.caps, wins, rows); err != nil {
		return nil, err
	}
	return cs, nil
}

// countInto loads and counts wins[i] into cs's row rows[i], loading a few
// batches of windows (see batches) ahead of the one counted.
func (cs *counts) countInto(ctx context.Context, src timeline.Source, caps []timeline.Capture, wins []Window, rows []int) error {
	type loaded struct {
		parts []part
		err   error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bs := batches(caps, wins)
	ahead := max(2, runtime.GOMAXPROCS(0))
	res := make([]chan loaded, len(bs))
	start := func(b int) {
		res[b] = make(chan loaded, 1)
		go func() {
			i, j := bs[b][0], bs[b][1]
			p, err := loadParts(ctx, src, caps, Window{From: wins[i].From, To: wins[j-1].To})
			res[b] <- loaded{p, err}
		}()
	}
	for b := range min(ahead, len(bs)) {
		start(b)
	}
	for b := range bs {
		l := <-res[b]
		if l.err != nil {
			return l.err
		}
		if b+ahead < len(bs) {
			start(b + ahead)
		}
		for i := bs[b][0]; i < bs[b][1]; i++ {
			parts := slices.Clone(l.parts)
			for k := range parts {
				pt := &parts[k]
				pt.lo, pt.hi = pt.c.Window(subsecond.Range{Start: wins[i].From - pt.shift, End: wins[i].To - pt.shift})
			}
			cs.count(rows[i], wins[i], parts)
		}
	}
	return nil
}

// batchSpan bounds the time one load of a count reads for a batch of
// windows.
const batchSpan = 30 * int64(time.Second)

// batches cuts wins into runs [i, j) read by one load: consecutive windows
// in time order that the same captures of caps overlap, none further from
// the last than twice its length, within batchSpan from the first's start
// to the last's end. A host's moves read windows back to back or nearly,
// and a window read alone decodes its captures' tables (and asks the
// store) again; a batch reads the gaps between its windows too.
func batches(caps []timeline.Capture, wins []Window) [][2]int {
	overlapping := func(w Window) (lo, hi int) {
		lo, hi = -1, -1
		for i := range caps {
			if caps[i].End > w.From && caps[i].Start < w.To {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
		}
		return lo, hi
	}
	var out [][2]int
	var lo, hi int
	for i, w := range wins {
		l, h := overlapping(w)
		if n := len(out); n > 0 {
			first, prev := wins[out[n-1][0]], wins[i-1]
			if l == lo && h == hi && w.From >= prev.To && w.From-prev.To <= 2*(prev.To-prev.From) && w.To-first.From <= batchSpan {
				out[n-1][1] = i + 1
				continue
			}
		}
		out = append(out, [2]int{i, i + 1})
		lo, hi = l, h
	}
	return out
}

// view returns counts of cs's rows, in that order, sharing cs's names,
// trie and features; adopt takes back what the view added to them.
func (cs *counts) view(rows []int) *counts {
	v := *cs
	v.total, v.rows, v.series = make([]int64, len(rows)), make([][]byte, len(rows)), nil
	for i, r := range rows {
		v.total[i], v.rows[i] = cs.total[r], cs.rows[r]
	}
	return &v
}

// adopt takes into cs the names, trie nodes and features that v, a view
// of it and the last, added.
func (cs *counts) adopt(v *counts) {
	total, rows := cs.total, cs.rows
	*cs = *v
	cs.total, cs.rows, cs.series = total, rows, nil
}

// bytes estimates the memory cs holds.
func (cs *counts) bytes() int64 {
	n := int64(len(cs.trie.parent))*56 + int64(len(cs.keys))*40 + int64(len(cs.acc)+len(cs.sacc))*8 +
		int64(cap(cs.fout)+cap(cs.nout)+cap(cs.dec))*16
	for _, s := range cs.names {
		n += 32 + int64(len(s))
	}
	for r := range cs.total {
		n += 40 + int64(cap(cs.rows[r]))
	}
	for _, fns := range cs.trie.fns {
		n += 4 * int64(len(fns))
	}
	for _, mm := range cs.memos {
		n += 16*int64(len(mm.byNode)) + 40*int64(len(mm.other))
	}
	return n
}

// memo is what a (command, stack node) of one capture maps to: its trie
// node and its class.
type memo struct {
	node     int32
	cls      subsecond.Class
	idleComm bool
}

// memos maps one capture's (command, stack node) pairs to their memo: a
// table by stack node for the first command seen with each node, in front
// of a map for the others, as a node is mostly one command's. A capture's
// windows share its string and stack tables, so one memos serves all of
// them.
type memos struct {
	byNode []memoSlot
	other  map[uint64]memo
}

// memoSlot is a node's memo for command comm − 1 (0: none yet).
type memoSlot struct {
	comm uint32
	memo
}

func newMemos(k *subsecond.Capture) *memos {
	return &memos{byNode: make([]memoSlot, len(k.Nodes)), other: map[uint64]memo{}}
}

// keptMemos is how many captures' memos a count keeps.
const keptMemos = 4

// memosOf returns the memos of the capture of part pt.
func (cs *counts) memosOf(pt *part) *memos {
	mm, ok := cs.memos[pt.id]
	if !ok {
		if len(cs.memoOrder) == keptMemos {
			delete(cs.memos, cs.memoOrder[0])
			cs.memoOrder = append(cs.memoOrder[:0], cs.memoOrder[1:]...)
		}
		mm = newMemos(pt.c)
		cs.memos[pt.id] = mm
		cs.memoOrder = append(cs.memoOrder, pt.id)
	}
	return mm
}

// get returns the memo of command comm and stack node n of capture k.
func (mm *memos) get(cs *counts, k *subsecond.Capture, comm uint32, n int32, buf []int32) (memo, []int32) {
	if int(n) < len(mm.byNode) {
		sl := &mm.byNode[n]
		if sl.comm == comm+1 {
			return sl.memo, buf
		}
		if sl.comm == 0 {
			sl.comm = comm + 1
			sl.memo, buf = cs.memo(k, comm, n, buf)
			return sl.memo, buf
		}
	}
	key := uint64(comm)<<32 | uint64(uint32(n))
	m, ok := mm.other[key]
	if !ok {
		m, buf = cs.memo(k, comm, n, buf)
		mm.other[key] = m
	}
	return m, buf
}

// cpuSecond is one CPU's samples in one second of a window.
type cpuSecond struct{ n, sys int32 }

// count counts window w's samples from parts.
func (cs *counts) count(w int, win Window, parts []part) {
	const second = int64(time.Second)
	secs := int((win.To - win.From + second - 1) / second)
	var perCPU [][]cpuSecond // by row, by second
	var cpuComm [][]int64    // by row, by command index: busy samples
	var buf []int32
	for pi := range parts {
		pt := &parts[pi]
		k, s := pt.c, &pt.c.Samples
		ev := uint16(k.Profile.DefaultEvent())
		mm := cs.memosOf(pt)
		for j := pt.lo; j < pt.hi; j++ {
			if s.Event[j] != ev || s.Time[j] == subsecond.NoTime {
				continue
			}
			cs.total[w]++
			var m memo
			m, buf = mm.get(cs, k, s.Comm[j], s.Stack[j], buf)
			idle := m.cls.IdleSample(s.PID[j], m.idleComm)
			busy, sys := m.cls.Time(idle)
			if cpu := s.CPU[j]; cpu >= 0 && !cs.commsOnly {
				r := cs.row(cpu)
				for int(r) >= len(perCPU) {
					perCPU = append(perCPU, nil)
					cpuComm = append(cpuComm, nil)
				}
				if perCPU[r] == nil {
					perCPU[r] = make([]cpuSecond, secs)
				}
				c := &perCPU[r][(s.Time[j]+pt.shift-win.From)/second]
				c.n++
				if sys {
					c.sys++
				}
				if busy {
					ci := cs.trie.commIdx[m.node]
					for int(ci) >= len(cpuComm[r]) {
						cpuComm[r] = append(cpuComm[r], 0)
					}
					cpuComm[r][ci]++
				}
			}
			if !busy {
				continue
			}
			for int(m.node) >= len(cs.sacc) {
				cs.sacc = append(cs.sacc, 0)
			}
			if cs.sacc[m.node] == 0 {
				cs.stch = append(cs.stch, m.node)
			}
			cs.sacc[m.node]++
		}
	}
	// Exclusive counts by node, each node's features numbered.
	excl := drain(cs.sacc, cs.stch, cs.dec[:0])
	cs.dec = excl
	cs.stch = cs.stch[:0]
	for _, e := range excl {
		cs.nodeFeatures(e.id)
	}
	for r, byComm := range cpuComm {
		for ci, n := range byComm {
			if n > 0 {
				cs.add(cs.feature(fkey{kCPU, cs.cpus[r], cs.trie.commName[ci]}), n)
			}
		}
	}
	// Cores pegged in the kernel: runs of PegSeconds or more seconds; then
	// the system samples in them, by command.
	pegged := make([][]bool, len(perCPU))
	some := false
	for r, ss := range perCPU {
		if ss == nil {
			continue
		}
		pegged[r] = make([]bool, secs)
		run := 0
		for sec := 0; sec <= secs; sec++ {
			if sec < secs {
				c := ss[sec]
				if c.n >= pegMinSamples && float64(c.sys) >= PegShare*float64(c.n) {
					run++
					continue
				}
			}
			if run >= PegSeconds {
				for k := sec - run; k < sec; k++ {
					pegged[r][k] = true
				}
				some = true
			}
			run = 0
		}
	}
	for pi := range parts {
		if !some {
			break
		}
		pt := &parts[pi]
		k, s := pt.c, &pt.c.Samples
		ev := uint16(k.Profile.DefaultEvent())
		mm := cs.memosOf(pt)
		for j := pt.lo; j < pt.hi; j++ {
			cpu := s.CPU[j]
			if s.Event[j] != ev || s.Time[j] == subsecond.NoTime || cpu < 0 {
				continue
			}
			r := cs.row(cpu)
			if !pegged[r][(s.Time[j]+pt.shift-win.From)/second] {
				continue
			}
			var m memo
			m, buf = mm.get(cs, k, s.Comm[j], s.Stack[j], buf)
			if _, sys := m.cls.Time(m.cls.IdleSample(s.PID[j], m.idleComm)); sys {
				cs.add(cs.feature(fkey{kKernelCore, cs.trie.comm[m.node], 0}), 1)
			}
		}
	}
	cs.fout = drain(cs.acc, cs.touched, cs.fout[:0])
	cs.touched = cs.touched[:0]
	b := binary.AppendUvarint(nil, uint64(len(excl)))
	b = appendCounts(b, excl)
	b = appendCounts(b, cs.fout)
	cs.rows[w] = slices.Clip(b)
}

// appendCounts appends cs, in increasing id order, to b as a row of
// counts holds them.
func appendCounts(b []byte, cs []fcount) []byte {
	prev := int32(-1)
	for _, c := range cs {
		b = binary.AppendUvarint(b, uint64(c.id-prev-1))
		b = binary.AppendUvarint(b, uint64(c.n))
		prev = c.id
	}
	return b
}

// decodeCounts appends to out n counts (all there are for n < 0) read
// from b, and returns them and the rest of b.
func decodeCounts(b []byte, n int, out []fcount) ([]fcount, []byte) {
	prev := int64(-1)
	for ; n != 0 && len(b) > 0; n-- {
		d, k := binary.Uvarint(b)
		c, j := binary.Uvarint(b[k:])
		b = b[k+j:]
		prev += int64(d) + 1
		out = append(out, fcount{int32(prev), int64(c)})
	}
	return out, b
}

// expand returns window w's counts of features (commands, functions and,
// unless commsOnly, leaves, CPUs and pegged cores) and, unless
// commsOnly, of the trie's nodes (inclusive), each in increasing id order
// with positive counts. Both are cs's scratch, valid until the next call.
func (cs *counts) expand(w int) (feats, nodes []fcount) {
	b := cs.rows[w]
	n, k := binary.Uvarint(b)
	var excl []fcount
	excl, b = decodeCounts(b[k:], int(n), cs.dec[:0])
	t := &cs.trie
	for len(cs.sacc) < len(t.parent) {
		cs.sacc = append(cs.sacc, 0)
	}
	for _, e := range excl {
		fns := cs.nodeFeatures(e.id)
		cs.add(t.commF[e.id], e.n)
		for _, f := range fns {
			cs.add(f, e.n)
		}
		if cs.commsOnly {
			continue
		}
		if t.leaf[e.id] >= 0 {
			cs.add(t.leaf[e.id], e.n)
		}
		for p := e.id; t.depth[p] >= 1; p = t.parent[p] {
			if cs.sacc[p] == 0 {
				cs.stch = append(cs.stch, p)
			}
			cs.sacc[p] += e.n
		}
	}
	other, _ := decodeCounts(b, -1, excl[:0])
	cs.dec = other
	for _, c := range other {
		cs.add(c.id, c.n)
	}
	cs.fout = drain(cs.acc, cs.touched, cs.fout[:0])
	cs.touched = cs.touched[:0]
	cs.nout = drain(cs.sacc, cs.stch, cs.nout[:0])
	cs.stch = cs.stch[:0]
	return cs.fout, cs.nout
}

// drain appends to out the counts of acc at the ids touched (each once,
// its count positive) in id order, and zeroes them.
func drain(acc []int64, touched []int32, out []fcount) []fcount {
	if 8*len(touched) >= len(acc) {
		// Most ids touched: a scan is cheaper than a sort.
		for i, n := range acc {
			if n != 0 {
				out = append(out, fcount{int32(i), n})
				acc[i] = 0
			}
		}
		return out
	}
	slices.Sort(touched)
	for _, f := range touched {
		out = append(out, fcount{f, acc[f]})
		acc[f] = 0
	}
	return out
}

// add adds n to feature f's count in the window being counted.
func (cs *counts) add(f int32, n int64) {
	for int(f) >= len(cs.acc) {
		cs.acc = append(cs.acc, 0)
	}
	if cs.acc[f] == 0 {
		cs.touched = append(cs.touched, f)
	}
	cs.acc[f] += n
}

// memo maps capture k's command comm and stack node n to the trie, and
// classes the stack as subsecond.Classes does, folding Class.Child from
// the root.
func (cs *counts) memo(k *subsecond.Capture, comm uint32, n int32, buf []int32) (memo, []int32) {
	cstr := k.Strings[comm]
	node := cs.child(0, cs.name(cstr))
	buf = k.Stack(buf[:0], n)
	cls := subsecond.RootClass
	for i := len(buf) - 1; i >= 0; i-- {
		fr := &k.Frames[buf[i]]
		sym := k.Strings[fr.Symbol]
		cls = cls.Child(subsecond.SymbolClass(sym), fr.Kind)
		node = cs.child(node, cs.name(sym))
	}
	return memo{node: node, cls: cls, idleComm: subsecond.IsIdleComm(cstr)}, buf
}
