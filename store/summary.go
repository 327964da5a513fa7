package store

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/subsecond/subsecond"
)

// classifier keeps, as a profile's tables grow, what the summaries need to
// know of each stack node and command name: the classes of
// subsecond.ChunkSummary, which are subsecond.ClassesOf's. Slices only grow
// and entries never change, so a reader may use a prefix of them while the
// merger appends.
type classifier struct {
	node     []subsecond.Class // per stack node
	idleComm []bool            // per string: names the idle task
	commIdx  []int32           // per string: index in comms, -1 when not a comm
	comms    []string
	// symClass is per string: its subsecond.SymbolClass + 1 once a frame
	// has named it as its symbol, else 0. A map by string index cost 2%
	// of the import of a real capture with deep stacks (190,000 nodes).
	symClass []uint16
}

func newClassifier() *classifier {
	return &classifier{node: []subsecond.Class{subsecond.RootClass}}
}

// update classifies the strings and nodes in added to in since the last
// call.
func (k *classifier) update(in *subsecond.Interner) {
	for i := len(k.idleComm); i < len(in.Strings); i++ {
		k.idleComm = append(k.idleComm, subsecond.IsIdleComm(in.Strings[i]))
		k.commIdx = append(k.commIdx, -1)
		k.symClass = append(k.symClass, 0)
	}
	for n := len(k.node); n < len(in.Nodes); n++ {
		nd := in.Nodes[n]
		fr := in.Frames[nd.Frame]
		c1 := k.symClass[fr.Symbol]
		if c1 == 0 {
			c1 = uint16(subsecond.SymbolClass(in.Strings[fr.Symbol])) + 1
			k.symClass[fr.Symbol] = c1
		}
		sc := subsecond.Class(c1 - 1)
		k.node = append(k.node, k.node[nd.Parent].Child(sc, fr.Kind))
	}
}

// comm returns the comm-list index of string s, adding it if new.
func (k *classifier) comm(s uint32, in *subsecond.Interner) int32 {
	if i := k.commIdx[s]; i >= 0 {
		return i
	}
	i := int32(len(k.comms))
	k.commIdx[s] = i
	k.comms = append(k.comms, in.Strings[s])
	return i
}

// view is a read-only snapshot of a classifier, for the encoders.
type view struct {
	node     []subsecond.Class
	idleComm []bool
	commIdx  []int32
}

func (k *classifier) view() view {
	return view{node: k.node, idleComm: k.idleComm, commIdx: k.commIdx}
}

// classify returns the busy and system flags of sample i.
func (v *view) classify(c *subsecond.Columns, i int) (busy, system bool) {
	cl := v.node[c.Stack[i]]
	return cl.Time(cl.IdleSample(c.PID[i], v.idleComm[c.Comm[i]]))
}

type cpuKey struct {
	cpu   int32
	event uint16
}

type commKey struct {
	comm  int32
	event uint16
}

// encodeSummary counts samples [lo, hi) of c (one chunk) by CPU and by
// command, and encodes the counts.
func encodeSummary(c *subsecond.Columns, lo, hi int, v *view) []byte {
	cpus := map[cpuKey]*subsecond.Counts{}
	comms := map[commKey]*subsecond.Counts{}
	var lastCPU cpuKey
	var lastCPUc *subsecond.Counts
	for i := lo; i < hi; i++ {
		busy, sys := v.classify(c, i)
		ck := cpuKey{c.CPU[i], c.Event[i]}
		if lastCPUc == nil || ck != lastCPU {
			lastCPU, lastCPUc = ck, cpus[ck]
			if lastCPUc == nil {
				lastCPUc = new(subsecond.Counts)
				cpus[ck] = lastCPUc
			}
		}
		lastCPUc.Count(busy, sys)
		mk := commKey{v.commIdx[c.Comm[i]], c.Event[i]}
		n := comms[mk]
		if n == nil {
			n = new(subsecond.Counts)
			comms[mk] = n
		}
		n.Count(busy, sys)
	}
	e := enc{b: make([]byte, 0, 16*(len(cpus)+len(comms))+8)}
	e.byte(summaryFormat)
	ck := sortedKeys(cpus, func(a, b cpuKey) int { return cmp.Or(cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.event, b.event)) })
	e.uvarint(uint64(len(ck)))
	for _, k := range ck {
		e.varint(int64(k.cpu))
		e.uvarint(uint64(k.event))
		putCounts(&e, cpus[k])
	}
	mk := sortedKeys(comms, func(a, b commKey) int { return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.event, b.event)) })
	e.uvarint(uint64(len(mk)))
	for _, k := range mk {
		e.uvarint(uint64(k.comm))
		e.uvarint(uint64(k.event))
		putCounts(&e, comms[k])
	}
	return e.b
}

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, less)
	return keys
}

func putCounts(e *enc, n *subsecond.Counts) {
	e.uvarint(uint64(n.Samples))
	e.uvarint(uint64(n.Busy))
	e.uvarint(uint64(n.System))
}

func getCounts(d *dec) subsecond.Counts {
	s, b, y := d.count(maxChunkSamples), d.count(maxChunkSamples), d.count(maxChunkSamples)
	if b > s || y > b {
		d.fail("summary counts inconsistent")
	}
	return subsecond.Counts{Samples: int64(s), Busy: int64(b), System: int64(y)}
}

// summaryMerger merges a capture's encoded chunk summaries, in (second,
// seq) order, into one subsecond.ChunkSummary per second. Each second's
// entries are sorted and summed in a reused scratch list and then appended
// to two backing arrays that every second's CPUs and Comms slice, so that a
// capture's summaries take a few allocations rather than two or more per
// second.
type summaryMerger struct {
	comms  []string
	rank   []int32 // per comm index: its name's rank by name (equal names, equal ranks)
	byRank []string
	events int

	cpus  []subsecond.CPUCount
	commc []subsecond.CommCount
	secs  []mergedSecond

	// The second being merged: its start, its chunks so far and its
	// entries as read.
	start   int64
	chunks  int
	cpuTmp  []subsecond.CPUCount
	commTmp []rankedCount
}

// mergedSecond is one second's start and the ends of its entries in the
// backing arrays.
type mergedSecond struct {
	start          int64
	cpuEnd, comEnd int
}

// rankedCount is a comm entry as read, its comm by rank.
type rankedCount struct {
	rank  int32
	event uint16
	subsecond.Counts
}

func newSummaryMerger(comms []string, events, chunks int) *summaryMerger {
	m := &summaryMerger{comms: comms, events: events, rank: make([]int32, len(comms)), secs: make([]mergedSecond, 0, chunks)}
	order := make([]int32, len(comms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(comms[a], comms[b]) })
	for i, ci := range order {
		if i == 0 || comms[ci] != m.byRank[len(m.byRank)-1] {
			m.byRank = append(m.byRank, comms[ci])
		}
		m.rank[ci] = int32(len(m.byRank) - 1)
	}
	return m
}

// add decodes the encoded summary b of a chunk of the second starting at
// start and adds its counts to that second's; chunksLeft more chunks
// follow it.
func (m *summaryMerger) add(start int64, b []byte, chunksLeft int) error {
	if m.chunks > 0 && start != m.start {
		m.flush(chunksLeft + 1) // this chunk's second is yet to come
	}
	m.start = start
	m.chunks++
	d := dec{b: b}
	if f := d.byte(); f != summaryFormat && d.err == nil {
		return fmt.Errorf("%w: summary format %d", errCorrupt, f)
	}
	for range d.count(len(b)) {
		k := subsecond.CPUCount{CPU: d.int32(), Event: uint16(d.index(m.events)), Counts: getCounts(&d)}
		if d.err != nil {
			break
		}
		m.cpuTmp = append(m.cpuTmp, k)
	}
	for range d.count(len(b)) {
		ci, ev, n := d.index(len(m.comms)), d.index(m.events), getCounts(&d)
		if d.err != nil {
			break
		}
		m.commTmp = append(m.commTmp, rankedCount{rank: m.rank[ci], event: uint16(ev), Counts: n})
	}
	return d.end()
}

// flush ends the second being merged: its entries sorted, those of equal
// keys summed, and appended to the backing arrays, which are first made
// large enough for chunksLeft more seconds like it.
func (m *summaryMerger) flush(chunksLeft int) {
	if m.chunks == 0 {
		return
	}
	m.cpuTmp = sumSorted(m.cpuTmp, func(a, b subsecond.CPUCount) int {
		return cmp.Or(cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Event, b.Event))
	}, func(a *subsecond.CPUCount) *subsecond.Counts { return &a.Counts })
	m.commTmp = sumSorted(m.commTmp, func(a, b rankedCount) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.event, b.event))
	}, func(a *rankedCount) *subsecond.Counts { return &a.Counts })
	if m.cpus == nil && len(m.cpuTmp) > 0 {
		m.cpus = make([]subsecond.CPUCount, 0, len(m.cpuTmp)*(chunksLeft+1))
	}
	if m.commc == nil && len(m.commTmp) > 0 {
		m.commc = make([]subsecond.CommCount, 0, len(m.commTmp)*(chunksLeft+1))
	}
	m.cpus = append(m.cpus, m.cpuTmp...)
	for _, k := range m.commTmp {
		m.commc = append(m.commc, subsecond.CommCount{Comm: m.byRank[k.rank], Event: k.event, Counts: k.Counts})
	}
	m.secs = append(m.secs, mergedSecond{start: m.start, cpuEnd: len(m.cpus), comEnd: len(m.commc)})
	m.cpuTmp, m.commTmp = m.cpuTmp[:0], m.commTmp[:0]
	m.chunks = 0
}

// summaries returns the seconds merged, their entries slices of the
// backing arrays (nil where a second has none).
func (m *summaryMerger) summaries() []subsecond.ChunkSummary {
	m.flush(0)
	if len(m.secs) == 0 {
		return nil
	}
	out := make([]subsecond.ChunkSummary, len(m.secs))
	cpu, com := 0, 0
	for i, s := range m.secs {
		out[i].Start = s.start
		if s.cpuEnd > cpu {
			out[i].CPUs = m.cpus[cpu:s.cpuEnd:s.cpuEnd]
		}
		if s.comEnd > com {
			out[i].Comms = m.commc[com:s.comEnd:s.comEnd]
		}
		cpu, com = s.cpuEnd, s.comEnd
	}
	return out
}

// sumSorted sorts list by order unless it is sorted already and sums the
// counts of equal entries into the first of them.
func sumSorted[T any](list []T, order func(a, b T) int, counts func(*T) *subsecond.Counts) []T {
	if !slices.IsSortedFunc(list, order) {
		slices.SortStableFunc(list, order)
	}
	out := list[:0]
	for i := range list {
		if len(out) > 0 && order(out[len(out)-1], list[i]) == 0 {
			counts(&out[len(out)-1]).Add(*counts(&list[i]))
			continue
		}
		out = append(out, list[i])
	}
	return out
}
