package store

import (
	"cmp"
	"slices"
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

// buildIndex merges accs, counted from the second base, into the fleet
// index of profile m.p, whose samples the accumulators counted. It
// returns nil when the profile has no wall-clock anchor, and false when
// T0 is not a whole number of slots before base (the chunks must be
// counted again, from T0).
func buildIndex(accs []*indexAcc, base int64, t indexTables, m indexMeta) (*Index, bool) {
	p := m.p
	if !p.Wall.Known() || !p.Timed() {
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
// and name: each distinct stack node of a slot is walked once, and a
// sample counts once for each distinct function and edge of its stack.
func expandNames(pairs []map[uint64]int64, t indexTables) []IndexCount {
	names := map[nameKey][]slotCount{}
	add := func(k nameKey, slot int, n int64) {
		names[k] = append(names[k], slotCount{int32(slot), n})
	}
	stamp := make([]int32, len(t.strings)) // per symbol string: the walk that counted it
	edgeStamp := map[uint64]int32{}
	walk := int32(0)
	var syms []uint32
	for slot, m := range pairs {
		if len(m) == 0 {
			continue
		}
		nodes := map[int32]int64{}
		comms := map[uint32]int64{}
		for k, n := range m {
			nodes[int32(k>>32)] += n
			comms[uint32(k)] += n
		}
		for c, n := range comms {
			add(nameKey{kind: subsecond.NameComm, a: c}, slot, n)
		}
		funcs := map[uint32]int64{}
		edges := map[uint64]int64{}
		for node, n := range nodes {
			walk++
			syms = syms[:0]
			for p := node; p > 0; p = t.nodes[p].Parent {
				syms = append(syms, t.frames[t.nodes[p].Frame].Symbol)
			}
			for _, s := range syms {
				if stamp[s] != walk {
					stamp[s] = walk
					funcs[s] += n
				}
			}
			// syms is leaf-first: the caller of syms[j-1] is syms[j].
			for j := len(syms) - 1; j > 0; j-- {
				e := uint64(syms[j])<<32 | uint64(syms[j-1])
				if edgeStamp[e] != walk {
					edgeStamp[e] = walk
					edges[e] += n
				}
			}
		}
		for s, n := range funcs {
			add(nameKey{kind: subsecond.NameFunction, a: s}, slot, n)
		}
		for e, n := range edges {
			add(nameKey{kind: subsecond.NameEdge, a: uint32(e >> 32), b: uint32(e)}, slot, n)
		}
	}
	// Names cut to maxIndexName may meet: their counts are added.
	byName := map[struct {
		kind subsecond.NameKind
		name string
	}][]slotCount{}
	for k, list := range names {
		name := t.strings[k.a]
		if k.kind == subsecond.NameEdge {
			name += ";" + t.strings[k.b]
		}
		nk := struct {
			kind subsecond.NameKind
			name string
		}{k.kind, indexName(name)}
		byName[nk] = append(byName[nk], list...)
	}
	out := make([]IndexCount, 0, len(byName))
	for k, list := range byName {
		slices.SortFunc(list, func(a, b slotCount) int { return cmp.Compare(a.slot, b.slot) })
		merged := list[:0]
		var total int64
		for _, c := range list {
			total += c.n
			if len(merged) > 0 && merged[len(merged)-1].slot == c.slot {
				merged[len(merged)-1].n += c.n
				continue
			}
			merged = append(merged, c)
		}
		out = append(out, IndexCount{Kind: k.kind, Name: k.name, Total: total, Slots: encodeSlotCounts(merged)})
	}
	slices.SortFunc(out, func(a, b IndexCount) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name)) })
	return out
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
