package timeline

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/subsecond/subsecond"
)

// Summary counts the samples of one second of a capture (of its first
// event), so that the host views never need the samples themselves. Start
// is the second's first nanosecond on the capture's clock (a whole second,
// subsecond.FloorSecond of its samples' times). The counts follow the cores
// map: Samples counts every sample, Busy those that are not the idle loop,
// System the busy ones whose leaf frame is a kernel frame.
//
// The store's per-chunk summaries have this shape; Summarize computes it
// from a capture's samples.
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

// Summarize returns the per-second summaries of c's first event, in time
// order. Samples without a time or CPU are left out.
func Summarize(c *subsecond.Capture) ([]Summary, error) {
	m, err := subsecond.Filter{}.Compile(c)
	if err != nil {
		return nil, err
	}
	kern := make([]bool, len(c.Nodes))
	for i := 1; i < len(c.Nodes); i++ {
		kern[i] = c.Frames[c.Nodes[i].Frame].Kind == subsecond.KindKernel
	}
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
	for i := range s.Time {
		if s.Time[i] == subsecond.NoTime || s.CPU[i] == subsecond.Unknown || s.Event[i] != 0 {
			continue
		}
		if f := subsecond.FloorSecond(s.Time[i]); f != sec {
			flush(sec)
			sec = f
		}
		_, idle := m.Test(i)
		busy := !idle
		sys := busy && kern[s.Stack[i]]
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

// Summarizer answers Source.Summaries from captures, computing each
// capture's summaries once (Summarize) and keeping the latest Max of them
// (default 4096: about 120 KB each for a two-minute 96-CPU capture). It
// stands in for a store that keeps summaries of its own. Safe for
// concurrent use.
type Summarizer struct {
	Load func(ctx context.Context, id string) (*subsecond.Capture, error)
	Max  int

	mu    sync.Mutex
	cache map[string][]Summary
	order []string
}

// Summaries returns capture id's per-second summaries.
func (z *Summarizer) Summaries(ctx context.Context, id string) ([]Summary, error) {
	z.mu.Lock()
	s, ok := z.cache[id]
	z.mu.Unlock()
	if ok {
		return s, nil
	}
	c, err := z.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if s, err = Summarize(c); err != nil {
		return nil, err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cache == nil {
		z.cache = map[string][]Summary{}
	}
	if _, ok := z.cache[id]; !ok {
		z.cache[id] = s
		z.order = append(z.order, id)
		if max := cmp.Or(z.Max, 4096); len(z.order) > max {
			delete(z.cache, z.order[0])
			z.order = z.order[1:]
		}
	}
	return s, nil
}
