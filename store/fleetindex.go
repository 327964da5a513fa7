package store

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// The fleet index of a capture is counted as its chunks are encoded: each
// encoder adds its chunks' samples of the first event to an indexAcc of
// its own, per slot the (stack node, command) pairs and per second the
// totals and each CPU's samples and system samples. buildIndex then
// merges the encoders' accumulators and expands each slot's distinct
// stack nodes into their functions and call edges once, with the
// capture's tables. A chunk is one second of the capture's clock, and
// slots are whole seconds from T0, so a chunk lies in one slot.
//
// T0 is known only at the end (the first sample's second, which an
// out-of-order sample may move earlier), so slots are counted from a
// provisional base, the second of the first sample read; when T0 turns
// out to be a whole number of slots before it the slots shift, and in the
// rare other case the index is counted again from the encoded chunks.

// indexSeconds is subsecond.IndexSlot in chunk seconds.
const indexSeconds = subsecond.IndexSlot / int64(time.Second)

// dayNS is a day in nanoseconds: fleet rows are filed by the day of their
// start on the wall clock.
const dayNS = int64(24 * time.Hour)

// indexAcc accumulates one encoder's share of a capture's fleet index.
type indexAcc struct {
	slots map[int64]map[uint64]int64 // by slot from the base: node<<32 | comm → samples
	secs  map[int64]*secondAcc       // by chunk second
}

// secondAcc is one second's totals and per-CPU counts.
type secondAcc struct {
	counts subsecond.Counts
	cpus   map[int32]*cpuAcc
}

type cpuAcc struct{ n, sys int64 }

func newIndexAcc() *indexAcc {
	return &indexAcc{slots: map[int64]map[uint64]int64{}, secs: map[int64]*secondAcc{}}
}

// floorDiv returns a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// add counts the samples of event 0 in chunk c of second sec, with slots
// counted from the second base, classified by v as the chunk summaries
// are.
func (a *indexAcc) add(c *subsecond.Columns, sec, base int64, v *view) {
	if sec == chunkSecond(subsecond.NoTime) {
		return // samples without a time lie in no slot
	}
	slot := floorDiv(sec-base, indexSeconds)
	pairs := a.slots[slot]
	if pairs == nil {
		pairs = map[uint64]int64{}
		a.slots[slot] = pairs
	}
	s := a.secs[sec]
	if s == nil {
		s = &secondAcc{cpus: map[int32]*cpuAcc{}}
		a.secs[sec] = s
	}
	var lastCPU int32
	var cpu *cpuAcc
	for i, ev := range c.Event {
		if ev != 0 {
			continue
		}
		busy, sys := v.classify(c, i)
		s.counts.Count(busy, sys)
		if cpu == nil || c.CPU[i] != lastCPU {
			lastCPU = c.CPU[i]
			if cpu = s.cpus[lastCPU]; cpu == nil {
				cpu = new(cpuAcc)
				s.cpus[lastCPU] = cpu
			}
		}
		cpu.n++
		if sys {
			cpu.sys++
		}
		pairs[uint64(c.Stack[i])<<32|uint64(c.Comm[i])]++
	}
}

// nameKey is an indexed name by its tables' indexes: a comm's or a
// function's string (a), or a call edge's caller and callee strings (a,
// b).
type nameKey struct {
	kind subsecond.NameKind
	a, b uint32
}

// indexTables are the tables an index's names are read from.
type indexTables struct {
	strings []string
	frames  []subsecond.FrameRec
	nodes   []subsecond.StackNode
}

// indexMeta is what an index takes from its profile.
type indexMeta struct {
	p    *subsecond.Profile
	boot int64 // ImportOptions.Boot
}

// Indexable reports whether profile p has a fleet index: it has a
// wall-clock anchor and its samples have times.
func Indexable(p *subsecond.Profile) bool { return p.Wall.Known() && p.Timed() }

// buildIndex merges accs, counted from the second base, into the fleet
// index of profile m.p, whose samples the accumulators counted. It
// returns nil when the profile has no wall-clock anchor, and false when
// T0 is not a whole number of slots before base (the chunks must be
// counted again, from T0).
func buildIndex(accs []*indexAcc, base int64, t indexTables, m indexMeta) (*Index, bool) {
	p := m.p
	if !Indexable(p) {
		return nil, true
	}
	t0 := p.T0() / int64(time.Second)
	if (base-t0)%indexSeconds != 0 {
		return nil, false
	}
	shift := (base - t0) / indexSeconds

	// Per slot: totals, peak core and the (node, comm) pairs.
	var nslots int64
	secs := map[int64]*secondAcc{}
	for _, a := range accs {
		for sec, s := range a.secs {
			nslots = max(nslots, (sec-t0)/indexSeconds+1)
			m := secs[sec]
			if m == nil {
				secs[sec] = s
				continue
			}
			m.counts.Add(s.counts)
			for cpu, c := range s.cpus {
				if o := m.cpus[cpu]; o != nil {
					o.n += c.n
					o.sys += c.sys
				} else {
					m.cpus[cpu] = c
				}
			}
		}
	}
	if nslots == 0 {
		return nil, true
	}
	slots := make([]slotTotal, nslots)
	for sec, s := range secs {
		st := &slots[(sec-t0)/indexSeconds]
		st.Counts.Add(s.counts)
		for _, c := range s.cpus {
			// c.sys/c.n > st.peakSys/st.peakN, without division.
			if c.n >= subsecond.MinPeakSamples && (st.peakN == 0 || c.sys*st.peakN > st.peakSys*c.n) {
				st.peakSys, st.peakN = c.sys, c.n
			}
		}
	}
	pairs := make([]map[uint64]int64, nslots)
	for _, a := range accs {
		for slot, m := range a.slots {
			i := slot + shift
			if pairs[i] == nil {
				pairs[i] = m
				continue
			}
			for k, n := range m {
				pairs[i][k] += n
			}
		}
	}

	start := p.Wall.Wall(p.T0())
	ix := &Index{Day: floorDiv(start, dayNS), Host: p.Host, Start: start, End: start + nslots*subsecond.IndexSlot,
		Kernel: p.Meta.OSRelease, CPUModel: p.Meta.CPUDesc, CPUs: p.Meta.NrCPUs, Slots: encodeSlotTotals(slots)}
	switch {
	case m.boot != 0:
		ix.Boot = m.boot
	case p.Meta.Clock != "realtime":
		// perf's default clock counts from boot: at its 0 the wall clock
		// read the anchor's offset.
		ix.Boot = p.Wall.Offset
	}
	ix.Counts = expandNames(pairs, t)
	return ix, true
}

// expandNames returns the per-slot counts of the commands, functions and
// call edges of the (node, comm) pairs counted per slot, sorted by kind
// and name: a sample counts once for each distinct function and edge of
// its stack. The slot's stacks are walked as one tree, down from the
// roots, each node once (not each stack's every node up to its root):
// a name counts the samples under its nodes nearest the root.
//
// Names are counted by a dense number each (a namer's), in arrays rather
// than maps, and each node's call edge is looked up once however many
// slots and stacks pass through it: a deep capture has thousands of names
// for few samples per slot.
func expandNames(pairs []map[uint64]int64, t indexTables) []IndexCount {
	nm := newNamer(t)
	var (
		ents    []nameEntry // by slot, then as touched
		counts  []int64     // by name: samples in the slot
		touched []int32     // names counted in the slot
		// The slot's stack nodes (those with samples and their
		// ancestors), as a tree: its nodes, each's place in them, its
		// first child and next sibling there.
		tree    []int32
		place   = make([]int32, len(t.nodes))
		in      = make([]int32, len(t.nodes)) // slot+1 when in tree
		sub     = make([]int64, len(t.nodes)) // samples under the node
		first   []int32
		next    []int32
		roots   []int32
		stack   []int32
		open    []int32 // by name: open nodes of the walk down that have it
		counted []uint8 // by tree place: function and edge counted there
	)
	add := func(id int32, n int64) {
		if int(id) >= len(counts) {
			counts = append(counts, make([]int64, int(id)+1-len(counts))...)
		}
		if counts[id] == 0 {
			touched = append(touched, id)
		}
		counts[id] += n
	}
	for slot, m := range pairs {
		if len(m) == 0 {
			continue
		}
		mark := int32(slot) + 1
		tree, roots = tree[:0], roots[:0]
		for k, n := range m {
			add(nm.comm(uint32(k)), n)
			node := int32(k >> 32)
			sub[node] += n
			for p := node; p > 0 && in[p] != mark; p = t.nodes[p].Parent {
				in[p] = mark
				place[p] = int32(len(tree))
				tree = append(tree, p)
			}
		}
		first = slices.Grow(first[:0], len(tree))[:len(tree)]
		next = slices.Grow(next[:0], len(tree))[:len(tree)]
		counted = slices.Grow(counted[:0], len(tree))[:len(tree)]
		for i := range first {
			first[i] = -1
		}
		for i, p := range tree {
			if parent := t.nodes[p].Parent; parent > 0 {
				j := place[parent]
				next[i], first[j] = first[j], int32(i)
			} else {
				roots = append(roots, int32(i))
			}
		}
		// A sample counts once for each distinct function and edge of its
		// stack: at the node nearest the root that has it, whose samples
		// below are counted when the walk leaves it.
		stack = append(stack[:0], roots...)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if i < 0 {
				i = ^i
				p := tree[i]
				parent := t.nodes[p].Parent
				f := nm.function(p)
				open[f]--
				if counted[i]&1 != 0 {
					add(f, sub[p])
				}
				if parent > 0 {
					e := nm.edge(p)
					open[e]--
					if counted[i]&2 != 0 {
						add(e, sub[p])
					}
					sub[parent] += sub[p]
				}
				sub[p] = 0
				continue
			}
			p := tree[i]
			f := nm.function(p)
			e := int32(-1)
			if t.nodes[p].Parent > 0 {
				e = nm.edge(p)
			}
			if need := int(max(f, e)) + 1; need > len(open) {
				open = append(open, make([]int32, need-len(open))...)
			}
			counted[i] = 0
			if open[f] == 0 {
				counted[i] |= 1
			}
			open[f]++
			if e >= 0 {
				if open[e] == 0 {
					counted[i] |= 2
				}
				open[e]++
			}
			stack = append(stack, ^i)
			for c := first[i]; c >= 0; c = next[c] {
				stack = append(stack, c)
			}
		}
		for _, id := range touched {
			ents = append(ents, nameEntry{id, slotCount{int32(slot), counts[id]}})
			counts[id] = 0
		}
		touched = touched[:0]
	}

	// The entries grouped by name, each name's in slot order.
	start := make([]int32, len(nm.names)+1)
	for _, e := range ents {
		start[e.id+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	at := slices.Clone(start[:len(nm.names)])
	list := make([]slotCount, len(ents))
	for _, e := range ents {
		list[at[e.id]] = e.c
		at[e.id]++
	}
	// The names with samples, by kind and name: sorted as numbers, which
	// moves four bytes a swap where a name, its string and slots move 48.
	// By kind (the namer's three, in order), then each kind's names by
	// their strings.
	ids := make([]int32, 0, len(nm.names))
	for id := range nm.names {
		if start[id] < start[id+1] {
			ids = append(ids, int32(id))
		}
	}
	names := nm.text(ids)
	byKind := make([]int32, 0, len(ids))
	for _, kind := range []subsecond.NameKind{subsecond.NameComm, subsecond.NameFunction, subsecond.NameEdge} {
		for _, id := range ids {
			if nm.names[id].kind == kind {
				byKind = append(byKind, id)
			}
		}
	}
	ids = byKind
	byName := func(a, b int32) int { return strings.Compare(names[a], names[b]) }
	for lo := 0; lo < len(ids); {
		hi := lo + 1
		for hi < len(ids) && nm.names[ids[hi]].kind == nm.names[ids[lo]].kind {
			hi++
		}
		slices.SortFunc(ids[lo:hi], byName)
		lo = hi
	}
	out := make([]IndexCount, 0, len(ids))
	blobs := make([]byte, 0, len(ids)+4*len(list)) // the names' slot counts, one after another
	for i := 0; i < len(ids); {
		id := ids[i]
		kind, name := nm.names[id].kind, names[id]
		j := i + 1
		for j < len(ids) && nm.names[ids[j]].kind == kind && names[ids[j]] == name {
			j++
		}
		slots := list[start[id]:start[id+1]]
		if j > i+1 {
			// Names cut to maxIndexName met: their counts are added.
			slots = nil
			for _, o := range ids[i:j] {
				slots = append(slots, list[start[o]:start[o+1]]...)
			}
			slices.SortStableFunc(slots, func(a, b slotCount) int { return cmp.Compare(a.slot, b.slot) })
			merged := slots[:0]
			for _, c := range slots {
				if len(merged) > 0 && merged[len(merged)-1].slot == c.slot {
					merged[len(merged)-1].n += c.n
					continue
				}
				merged = append(merged, c)
			}
			slots = merged
		}
		var total int64
		for _, c := range slots {
			total += c.n
		}
		at := len(blobs)
		blobs = appendSlotCounts(blobs, slots)
		out = append(out, IndexCount{Kind: kind, Name: name, Total: total, Slots: blobs[at:len(blobs):len(blobs)]})
		i = j
	}
	return out
}

// nameEntry is a name's samples in one slot, by the name's namer number.
type nameEntry struct {
	id int32
	c  slotCount
}

// namer numbers the names of an index densely from 0 as it meets them:
// commands and functions by their strings, call edges by the stack node
// whose frame is the callee, each node's edge looked up once.
type namer struct {
	t        indexTables
	names    []nameKey
	comms    []int32 // by string: number+1, 0 when not met
	funcs    []int32 // by string: number+1
	nodeEdge []int32 // by node: its edge's number+1
	edges    map[uint64]int32
}

func newNamer(t indexTables) *namer {
	return &namer{t: t, comms: make([]int32, len(t.strings)), funcs: make([]int32, len(t.strings)),
		nodeEdge: make([]int32, len(t.nodes)), edges: map[uint64]int32{}}
}

// add returns the number of a new name k.
func (nm *namer) add(k nameKey) int32 {
	nm.names = append(nm.names, k)
	return int32(len(nm.names) - 1)
}

// comm returns the number of the command of string s.
func (nm *namer) comm(s uint32) int32 {
	if nm.comms[s] == 0 {
		nm.comms[s] = nm.add(nameKey{kind: subsecond.NameComm, a: s}) + 1
	}
	return nm.comms[s] - 1
}

// symbol returns the symbol string of node p's frame.
func (nm *namer) symbol(p int32) uint32 { return nm.t.frames[nm.t.nodes[p].Frame].Symbol }

// function returns the number of the function of node p's frame.
func (nm *namer) function(p int32) int32 {
	s := nm.symbol(p)
	if nm.funcs[s] == 0 {
		nm.funcs[s] = nm.add(nameKey{kind: subsecond.NameFunction, a: s}) + 1
	}
	return nm.funcs[s] - 1
}

// edge returns the number of the call edge from node p's parent to p.
func (nm *namer) edge(p int32) int32 {
	if nm.nodeEdge[p] == 0 {
		caller, callee := nm.symbol(nm.t.nodes[p].Parent), nm.symbol(p)
		e := uint64(caller)<<32 | uint64(callee)
		id, ok := nm.edges[e]
		if !ok {
			id = nm.add(nameKey{kind: subsecond.NameEdge, a: caller, b: callee})
			nm.edges[e] = id
		}
		nm.nodeEdge[p] = id + 1
	}
	return nm.nodeEdge[p] - 1
}

// text returns the indexed names of the numbers in ids, cut to
// maxIndexName, by number: substrings of one string.
func (nm *namer) text(ids []int32) []string {
	n := 0
	for _, id := range ids {
		k := nm.names[id]
		n += len(nm.t.strings[k.a])
		if k.kind == subsecond.NameEdge {
			n += 1 + len(nm.t.strings[k.b])
		}
	}
	b := make([]byte, 0, n)
	end := make([]int, len(nm.names))
	for _, id := range ids {
		k := nm.names[id]
		b = append(b, nm.t.strings[k.a]...)
		if k.kind == subsecond.NameEdge {
			b = append(b, ';')
			b = append(b, nm.t.strings[k.b]...)
		}
		end[id] = len(b)
	}
	all := string(b)
	names := make([]string, len(nm.names))
	at := 0
	for _, id := range ids {
		names[id] = indexName(all[at:end[id]])
		at = end[id]
	}
	return names
}

// indexChunks counts encoded chunks into a, from base, decoding them one
// at a time into cols; v classifies their samples and lim checks them.
func indexChunks(a *indexAcc, chunks []Chunk, base int64, v *view, lim limits, cols *subsecond.Columns, buf []byte) ([]byte, error) {
	for i := range chunks {
		ch := &chunks[i]
		cols.Resize(0)
		var err error
		if buf, err = decodeChunk(ch.Data, cols, lim, buf); err != nil {
			return buf, err
		}
		a.add(cols, ch.Second, base, v)
	}
	return buf, nil
}
