package heatmap

import (
	"cmp"
	"slices"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/symbol"
)

// Tally counts what ran on one CPU over ranges of one or more captures, as
// one range: a host's wall-clock range that crosses a capture's rotation
// point. It counts the samples of each capture's default event that have
// a time, as the store's per-second summaries do, and classes them as
// they do (subsecond.Classes). Add each capture's part, then read the
// counts and Describe.
type Tally struct {
	CPU     int32
	Samples int64 // every sample, idle ones included
	Busy    int64 // the busy ones
	System  int64 // the busy ones with a kernel leaf
	comms   map[string]int64
	funcs   map[string]int64
	stacks  map[string]map[string]int64 // busy samples by command, then frame names joined by "\x00", root first
}

// NewTally returns an empty Tally of cpu.
func NewTally(cpu int32) *Tally {
	return &Tally{CPU: cpu, comms: map[string]int64{}, funcs: map[string]int64{}, stacks: map[string]map[string]int64{}}
}

// Add counts c's samples on the tally's CPU in r, on c's clock.
func (t *Tally) Add(c *subsecond.Capture, r subsecond.Range) error {
	m, err := query.Filter{}.Compile(c)
	if err != nil {
		return err
	}
	cl := subsecond.ClassesOf(c)
	ev := uint16(c.Profile.DefaultEvent())
	s := &c.Samples
	lo, hi := c.Window(r)
	type key struct{ comm, stack uint32 }
	busy := map[key]int64{}
	for i := lo; i < hi; i++ {
		if s.CPU[i] != t.CPU || s.Event[i] != ev || s.Time[i] == subsecond.NoTime {
			continue
		}
		t.Samples++
		b, sys := cl.Nodes[s.Stack[i]].Time(cl.Idle(i))
		if !b {
			continue
		}
		t.Busy++
		if sys {
			t.System++
		}
		busy[key{s.Comm[i], uint32(s.Stack[i])}]++
	}
	names := newNamer(c, m)
	for k, n := range busy {
		comm := c.Strings[k.comm]
		java := strings.HasPrefix(comm, "java")
		node := int32(k.stack)
		t.comms[comm] += n
		if leaf := names.leaf(node, java); leaf != "" {
			t.funcs[leaf] += n
		}
		var path []string
		for nd := node; nd > 0; nd = c.Nodes[nd].Parent {
			fr := names.frame(nd, java)
			for j := len(fr) - 1; j >= 0; j-- {
				path = append(path, fr[j])
			}
		}
		slices.Reverse(path)
		if t.stacks[comm] == nil {
			t.stacks[comm] = map[string]int64{}
		}
		t.stacks[comm][strings.Join(path, "\x00")] += n
	}
	return nil
}

// Describe returns what ran in the tally as a hot spot names it (see
// Spot): its top command and that command's share of the busy samples,
// the top self function, and the heaviest stack of the top command, with
// their shares. All are empty when nothing was busy.
func (t *Tally) Describe() (comm string, commShare float64, function string, functionShare float64, stack string, stackShare float64) {
	if t.Busy == 0 {
		return
	}
	comm, n := top(t.comms)
	function, nf := top(t.funcs)
	// The heaviest path: from the root, into the heaviest child while it
	// outweighs the samples that stop at the node.
	type weighed struct {
		names []string
		n     int64
	}
	var ps []weighed
	for p, k := range t.stacks[comm] {
		w := weighed{n: k}
		if p != "" {
			w.names = strings.Split(p, "\x00")
		}
		ps = append(ps, w)
	}
	parts, under := []string{symbol.Comm(comm)}, n
	for d := 0; ; d++ {
		kids, self := map[string]int64{}, int64(0)
		for _, p := range ps {
			if len(p.names) > d {
				kids[p.names[d]] += p.n
			} else {
				self += p.n
			}
		}
		best, bn := top(kids)
		if bn == 0 || bn <= self {
			break
		}
		parts, under = append(parts, best), bn
		keep := ps[:0]
		for _, p := range ps {
			if len(p.names) > d && p.names[d] == best {
				keep = append(keep, p)
			}
		}
		ps = keep
	}
	return comm, float64(n) / float64(t.Busy), function, float64(nf) / float64(t.Busy), strings.Join(parts, ";"), float64(under) / float64(t.Busy)
}

// top returns the key of m with the most, the first by name among equals,
// and its count.
func top(m map[string]int64) (string, int64) {
	best, bn := "", int64(0)
	for k, n := range m {
		if c := cmp.Compare(n, bn); c > 0 || c == 0 && k < best {
			best, bn = k, n
		}
	}
	return best, bn
}
