package timeline

import (
	"cmp"
	"slices"

	"github.com/subsecond/subsecond"
)

// Summary counts the samples of one second of a capture (of its first
// event), so that the host views never need the samples themselves. Start
// is the second's first nanosecond on the capture's clock (a whole second,
// subsecond.FloorSecond of its samples' times). The counts follow the cores
// map: Samples counts every sample, Busy those that are not the idle loop,
// System the busy ones whose leaf frame is a kernel frame.
//
// FromChunks reads it from the store's per-chunk summaries (which never
// decode samples); Summarize computes the same from a capture's samples.
type Summary struct {
	Start int64
	CPUs  []CPUCount  // by CPU
	Comms []CommCount // by command name
}

// CPUCount is one CPU's counts in a Summary.
type CPUCount struct {
	CPU int32
	Counts
}

// CommCount is one command's counts in a Summary.
type CommCount struct {
	Comm string
	Counts
}

// Counts are sample, busy and system counts.
type Counts struct {
	Samples int64
	Busy    int64
	System  int64
}

func (c *Counts) add(busy, sys bool) {
	c.Samples++
	if busy {
		c.Busy++
	}
	if sys {
		c.System++
	}
}

// Summarize returns the per-second summaries of c's default event, in time
// order. Samples without a time or CPU are left out.
func Summarize(c *subsecond.Capture) ([]Summary, error) {
	cl := subsecond.ClassesOf(c)
	var out []Summary
	s := &c.Samples
	cpus := map[int32]*Counts{}
	comms := map[uint32]*Counts{}
	flush := func(start int64) {
		if len(cpus) == 0 {
			return
		}
		sum := Summary{Start: start}
		for cpu, n := range cpus {
			sum.CPUs = append(sum.CPUs, CPUCount{cpu, *n})
		}
		for comm, n := range comms {
			sum.Comms = append(sum.Comms, CommCount{c.Strings[comm], *n})
		}
		slices.SortFunc(sum.CPUs, func(a, b CPUCount) int { return cmp.Compare(a.CPU, b.CPU) })
		slices.SortFunc(sum.Comms, func(a, b CommCount) int { return cmp.Compare(a.Comm, b.Comm) })
		out = append(out, sum)
		clear(cpus)
		clear(comms)
	}
	sec := subsecond.NoTime
	ev := uint16(c.Profile.DefaultEvent())
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
			n = new(Counts)
			cpus[s.CPU[i]] = n
		}
		n.add(busy, sys)
		k := comms[s.Comm[i]]
		if k == nil {
			k = new(Counts)
			comms[s.Comm[i]] = k
		}
		k.add(busy, sys)
	}
	flush(sec)
	return out, nil
}

// FromChunks returns the store's per-chunk summaries as the timeline reads
// them: the first event's samples that have a time, counted by CPU (those
// with a CPU) and by command. Seconds without such samples are left out.
func FromChunks(sums []subsecond.ChunkSummary) []Summary {
	out := make([]Summary, 0, len(sums))
	for _, s := range sums {
		if s.Start == subsecond.NoTime {
			continue
		}
		ts := Summary{Start: s.Start}
		for _, k := range s.CPUs {
			if k.Event == 0 && k.CPU != subsecond.Unknown {
				ts.CPUs = append(ts.CPUs, CPUCount{CPU: k.CPU, Counts: Counts(k.Counts)})
			}
		}
		for _, k := range s.Comms {
			if k.Event == 0 {
				ts.Comms = append(ts.Comms, CommCount{Comm: k.Comm, Counts: Counts(k.Counts)})
			}
		}
		if len(ts.CPUs) > 0 {
			out = append(out, ts)
		}
	}
	return out
}
