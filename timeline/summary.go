package timeline

import (
	"cmp"
	"slices"

	"github.com/subsecond/subsecond"
)

// Summarize returns the per-second summaries of c's default event, in time
// order, counted from its samples as FromChunks reads them from the store:
// samples without a time or CPU are left out, and each entry's Event is the
// default event. It is what the import's summaries must say of c.
func Summarize(c *subsecond.Capture) []subsecond.ChunkSummary {
	cl := subsecond.ClassesOf(c)
	var out []subsecond.ChunkSummary
	s := &c.Samples
	ev := uint16(c.Profile.DefaultEvent())
	cpus := map[int32]*subsecond.Counts{}
	comms := map[uint32]*subsecond.Counts{}
	flush := func(start int64) {
		if len(cpus) == 0 {
			return
		}
		sum := subsecond.ChunkSummary{Start: start}
		for cpu, n := range cpus {
			sum.CPUs = append(sum.CPUs, subsecond.CPUCount{CPU: cpu, Event: ev, Counts: *n})
		}
		for comm, n := range comms {
			sum.Comms = append(sum.Comms, subsecond.CommCount{Comm: c.Strings[comm], Event: ev, Counts: *n})
		}
		slices.SortFunc(sum.CPUs, func(a, b subsecond.CPUCount) int { return cmp.Compare(a.CPU, b.CPU) })
		slices.SortFunc(sum.Comms, func(a, b subsecond.CommCount) int { return cmp.Compare(a.Comm, b.Comm) })
		out = append(out, sum)
		clear(cpus)
		clear(comms)
	}
	sec := subsecond.NoTime
	for i := range s.Time {
		if s.Time[i] == subsecond.NoTime || s.CPU[i] == subsecond.Unknown || s.Event[i] != ev {
			continue
		}
		if f := subsecond.FloorSecond(s.Time[i]); f != sec {
			flush(sec)
			sec = f
		}
		busy, sys := cl.Nodes[s.Stack[i]].Time(cl.Idle(i))
		n := cpus[s.CPU[i]]
		if n == nil {
			n = new(subsecond.Counts)
			cpus[s.CPU[i]] = n
		}
		n.Count(busy, sys)
		k := comms[s.Comm[i]]
		if k == nil {
			k = new(subsecond.Counts)
			comms[s.Comm[i]] = k
		}
		k.Count(busy, sys)
	}
	flush(sec)
	return out
}

// FromChunks returns the store's per-second summaries as the host views
// read them: the first event's samples that have a time, counted by CPU
// (those with a CPU) and by command. Seconds without such samples are left
// out. A second whose entries all count is returned as it is, sharing
// sums' slices; the entries kept of the others are copied into two arrays
// that they share, so that a capture's summaries take a few allocations
// however many seconds it has.
func FromChunks(sums []subsecond.ChunkSummary) []subsecond.ChunkSummary {
	keepCPU := func(k *subsecond.CPUCount) bool { return k.Event == 0 && k.CPU != subsecond.Unknown }
	keepComm := func(k *subsecond.CommCount) bool { return k.Event == 0 }
	// The entries to copy, counted first so that each array is allocated
	// once.
	var nc, nm int
	for i := range sums {
		s := &sums[i]
		if s.Start == subsecond.NoTime {
			continue
		}
		if c := countKept(s.CPUs, keepCPU); c < len(s.CPUs) {
			nc += c
		}
		if c := countKept(s.Comms, keepComm); c < len(s.Comms) {
			nm += c
		}
	}
	cpus := make([]subsecond.CPUCount, 0, nc)
	comms := make([]subsecond.CommCount, 0, nm)
	out := make([]subsecond.ChunkSummary, 0, len(sums))
	for i := range sums {
		s := &sums[i]
		if s.Start == subsecond.NoTime {
			continue
		}
		ts := subsecond.ChunkSummary{Start: s.Start}
		ts.CPUs, cpus = keep(s.CPUs, cpus, keepCPU)
		ts.Comms, comms = keep(s.Comms, comms, keepComm)
		if len(ts.CPUs) > 0 {
			out = append(out, ts)
		}
	}
	return out
}

// countKept returns how many entries of list keep keeps.
func countKept[T any](list []T, keep func(*T) bool) int {
	n := 0
	for i := range list {
		if keep(&list[i]) {
			n++
		}
	}
	return n
}

// keep returns the entries of list that keep keeps: list itself when it
// keeps them all, nil when none, else a copy appended to backing, which it
// returns too.
func keep[T any](list, backing []T, keep func(*T) bool) (kept, grown []T) {
	n := countKept(list, keep)
	switch n {
	case 0:
		return nil, backing
	case len(list):
		return list, backing
	}
	at := len(backing)
	for i := range list {
		if keep(&list[i]) {
			backing = append(backing, list[i])
		}
	}
	return backing[at:len(backing):len(backing)], backing
}
