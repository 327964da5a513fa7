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
	symClass map[uint32]subsecond.Class // per symbol string: subsecond.SymbolClass
}

func newClassifier() *classifier {
	return &classifier{node: []subsecond.Class{subsecond.RootClass}, symClass: map[uint32]subsecond.Class{}}
}

// update classifies the strings and nodes in added to in since the last
// call.
func (k *classifier) update(in *subsecond.Interner) {
	for i := len(k.idleComm); i < len(in.Strings); i++ {
		k.idleComm = append(k.idleComm, subsecond.IsIdleComm(in.Strings[i]))
		k.commIdx = append(k.commIdx, -1)
	}
	for n := len(k.node); n < len(in.Nodes); n++ {
		nd := in.Nodes[n]
		fr := in.Frames[nd.Frame]
		sc, ok := k.symClass[fr.Symbol]
		if !ok {
			sc = subsecond.SymbolClass(in.Strings[fr.Symbol])
			k.symClass[fr.Symbol] = sc
		}
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

// addCount adds entry k to list, sorted by order: its counts to those of
// the equal entry, or k itself in its place.
func addCount[T any](list []T, k T, order func(a, b T) int, counts func(*T) *subsecond.Counts) []T {
	i, found := slices.BinarySearchFunc(list, k, order)
	if !found {
		return slices.Insert(list, i, k)
	}
	counts(&list[i]).Add(*counts(&k))
	return list
}

// addSummary decodes an encoded summary and adds its counts to s; comms
// is the profile's comm list, events its number of events.
func addSummary(s *subsecond.ChunkSummary, b []byte, comms []string, events int) error {
	d := dec{b: b}
	if f := d.byte(); f != summaryFormat && d.err == nil {
		return fmt.Errorf("%w: summary format %d", errCorrupt, f)
	}
	for range d.count(len(b)) {
		k := subsecond.CPUCount{CPU: d.int32(), Event: uint16(d.index(events)), Counts: getCounts(&d)}
		if d.err != nil {
			break
		}
		s.CPUs = addCount(s.CPUs, k, func(a, b subsecond.CPUCount) int {
			return cmp.Or(cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Event, b.Event))
		}, func(a *subsecond.CPUCount) *subsecond.Counts { return &a.Counts })
	}
	for range d.count(len(b)) {
		ci, ev, n := d.index(len(comms)), d.index(events), getCounts(&d)
		if d.err != nil {
			break
		}
		s.Comms = addCount(s.Comms, subsecond.CommCount{Comm: comms[ci], Event: uint16(ev), Counts: n}, func(a, b subsecond.CommCount) int {
			return cmp.Or(cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Event, b.Event))
		}, func(a *subsecond.CommCount) *subsecond.Counts { return &a.Counts })
	}
	return d.end()
}
