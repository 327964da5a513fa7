package flame

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"
	"github.com/subsecond/subsecond"
)

// Pprof returns the samples behind g as a pprof profile. Each sample has
// two values, samples/count and cpu/nanoseconds (the perf period, which is
// nanoseconds for cpu-clock; when the selection carries no periods, one
// sampling interval 1e9/FrequencyHz per sample), labels comm, cpu, pid and
// tid (the ids left out when perf recorded none), and the
// stack leaf-first with the filter's Only applied. DurationNanos is the
// range's length and a comment names the range in seconds from T0;
// TimeNanos is its start as wall-clock time, when the capture has one
// (subsecond.WallClock), else 0: perf's own clock counts from boot, which
// pprof would show as a date in 1970. The profile passes CheckValid.
//
// For a differential graph the profile is the target's samples plus the
// base's with their values negated and the label pprof::base=true: exactly
// the profile `go tool pprof -diff_base=BASE TARGET` builds from the two
// ranges' own exports, so `go tool pprof -top DIFF` lists each function's
// change in raw counts (target − base). The ranges' lengths are not
// normalised, as -diff_base does not normalise.
//
// Samples are grouped without a map lookup per sample: the kept samples are
// bucketed by stack node with a counting sort, and each bucket ordered by
// command, CPU, pid and tid.
func (g *Graph) Pprof() (*profile.Profile, error) {
	c := g.c
	m, err := g.f.Compile(c)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		DurationNanos: g.End - g.Start,
	}
	if w := c.Profile.Wall; w.Known() {
		p.TimeNanos = w.Wall(g.Start)
	}
	if iv := interval(c); iv > 0 {
		p.Period = iv
	}
	if len(c.Profile.Events) > 0 {
		ev := g.f.Event
		if ev == "" {
			ev = c.Profile.Events[c.Profile.DefaultEvent()].Name
		}
		p.Comments = []string{"event: " + ev}
	}
	t0 := c.Profile.T0()
	p.Comments = append(p.Comments, fmt.Sprintf("range: %s from T0 of %s", subsecond.DisplayRange(g.Start-t0, g.End-t0), c.Profile.Name))
	pb := &pprofBuilder{p: p, mappings: map[string]*profile.Mapping{}, funcs: map[[2]string]*profile.Function{}, labels: map[labelKey]map[string][]string{}}
	lo, hi := c.Window(subsecond.Range{Start: g.Start, End: g.End})
	pb.add(c, g.ix, m, lo, hi, false)
	if g.BaseN != nil {
		bc, bm := g.baseCapture(), m
		if bc != c {
			if bm, err = g.f.Compile(bc); err != nil {
				return nil, fmt.Errorf("base profile: %w", err)
			}
		}
		lo, hi := bc.Window(subsecond.Range{Start: g.BaseStart, End: g.BaseEnd})
		pb.add(bc, g.baseIndex(), bm, lo, hi, true)
		p.Comments = append(p.Comments, "differential: samples labelled pprof::base=true are the base range's, negated (as go tool pprof -diff_base makes them)")
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof export: %w", err)
	}
	return p, nil
}

// interval returns c's sampling interval in nanoseconds, 0 when unknown.
func interval(c *subsecond.Capture) int64 {
	if hz := c.Profile.FrequencyHz; hz > 0 {
		return int64(math.Round(1e9 / hz))
	}
	return 0
}

// pprofBuilder adds the samples of one or two captures to a profile,
// sharing its mappings, functions and label sets.
type pprofBuilder struct {
	p        *profile.Profile
	mappings map[string]*profile.Mapping
	funcs    map[[2]string]*profile.Function
	labels   map[labelKey]map[string][]string
}

// add appends the samples [lo, hi) of c that m keeps, with negated values
// and the label pprof::base=true when base is set.
func (pb *pprofBuilder) add(c *subsecond.Capture, ix *index, m *subsecond.Match, lo, hi int, base bool) {
	p := pb.p
	s := &c.Samples
	kept := sortedSamples(c, m, lo, hi)
	periods := false
	for _, i := range kept {
		if s.Weight[i] != 1 {
			periods = true
			break
		}
	}
	iv := interval(c)
	sign := int64(1)
	if base {
		sign = -1
	}
	var locs [2][]*profile.Location // by capture frame, without and with Java tidying
	locs[0] = make([]*profile.Location, len(c.Frames))
	locs[1] = make([]*profile.Location, len(c.Frames))
	location := func(fr int32, java int) *profile.Location {
		if l := locs[java][fr]; l != nil {
			return l
		}
		rec := &c.Frames[fr]
		dso := ix.strings[ix.frDSO[fr]]
		mp := pb.mappings[dso]
		if mp == nil && dso != "" {
			mp = &profile.Mapping{ID: uint64(len(p.Mapping) + 1), File: dso, HasFunctions: true}
			pb.mappings[dso] = mp
			p.Mapping = append(p.Mapping, mp)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: mp, Address: rec.Addr}
		// An inlined chain "A->B" is one location with B's line first.
		names := ix.frNames[java][fr]
		l.Line = make([]profile.Line, 0, len(names))
		for i := len(names) - 1; i >= 0; i-- {
			name := ix.strings[names[i]]
			fk := [2]string{name, dso}
			fn := pb.funcs[fk]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: dso}
				pb.funcs[fk] = fn
				p.Function = append(p.Function, fn)
			}
			l.Line = append(l.Line, profile.Line{Function: fn})
		}
		locs[java][fr] = l
		p.Location = append(p.Location, l)
		return l
	}
	label := func(k labelKey) map[string][]string {
		k.base = base
		if l := pb.labels[k]; l != nil {
			return l
		}
		l := map[string][]string{"comm": {k.comm}}
		for _, id := range []struct {
			name string
			v    int32
		}{{"cpu", k.cpu}, {"pid", k.pid}, {"tid", k.tid}} {
			if id.v != subsecond.Unknown {
				// String labels: pprof drops numeric labels whose value is
				// 0, and CPU 0 and the idle task's pid 0 matter.
				l[id.name] = []string{strconv.Itoa(int(id.v))}
			}
		}
		if base {
			l["pprof::base"] = []string{"true"}
		}
		pb.labels[k] = l
		return l
	}

	var stack [2][]*profile.Location // the current stack node's locations
	stackOf := [2]int32{-1, -1}
	// Samples and their values come from two slabs, not one allocation each.
	var slab []profile.Sample
	var values []int64
	for a := 0; a < len(kept); {
		i := kept[a]
		k := keyOf(s, i)
		var n, w int64
		b := a
		for ; b < len(kept) && s.Stack[kept[b]] == s.Stack[i] && keyOf(s, kept[b]) == k; b++ {
			n++
			w += int64(s.Weight[kept[b]])
		}
		a = b
		comm := c.Strings[k.comm]
		java := 0
		if strings.HasPrefix(comm, "java") {
			java = 1
		}
		node := s.Stack[i]
		if stackOf[java] != node {
			st := stack[java][:0:0]
			for q := node; q > 0; q = c.Nodes[q].Parent {
				if fr := c.Nodes[q].Frame; m.KeepFrame(fr) {
					st = append(st, location(fr, java))
				}
			}
			stack[java], stackOf[java] = st, node
		}
		if !periods && iv > 0 {
			w = n * iv
		}
		if len(slab) == cap(slab) {
			size := min(max(len(kept)-a, 16), 4096)
			slab, values = make([]profile.Sample, 0, size), make([]int64, 0, 2*size)
		}
		values = append(values, sign*n, sign*w)
		slab = append(slab, profile.Sample{Location: stack[java], Value: values[len(values)-2 : len(values) : len(values)],
			Label: label(labelKey{comm: comm, cpu: k.cpu, pid: k.pid, tid: k.tid})})
		p.Sample = append(p.Sample, &slab[len(slab)-1])
	}
}

// labelKey is what tells a sample's pprof labels apart.
type labelKey struct {
	comm          string
	cpu, pid, tid int32
	base          bool
}

// sampleKey is what tells a capture's samples apart within a stack node.
type sampleKey struct {
	comm          uint32
	cpu, pid, tid int32
}

func keyOf(s *subsecond.Columns, i int32) sampleKey {
	return sampleKey{s.Comm[i], s.CPU[i], s.PID[i], s.TID[i]}
}

// sortedSamples returns the samples of [lo, hi) that m keeps, ordered by
// stack node (a counting sort), then command, CPU, pid and tid.
func sortedSamples(c *subsecond.Capture, m *subsecond.Match, lo, hi int) []int32 {
	s := &c.Samples
	start := make([]int32, len(c.Nodes)+1)
	n := 0
	keep := make([]bool, hi-lo)
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			keep[i-lo] = true
			start[s.Stack[i]+1]++
			n++
		}
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	out := make([]int32, n)
	for i := lo; i < hi; i++ {
		if keep[i-lo] {
			node := s.Stack[i]
			out[start[node]] = int32(i)
			start[node]++
		}
	}
	// start[node] is now the end of node's run.
	from := int32(0)
	for node := range c.Nodes {
		to := start[node]
		if to-from > 1 {
			slices.SortFunc(out[from:to], func(a, b int32) int {
				ka, kb := keyOf(s, a), keyOf(s, b)
				return cmp.Or(cmp.Compare(ka.comm, kb.comm), cmp.Compare(ka.cpu, kb.cpu),
					cmp.Compare(ka.pid, kb.pid), cmp.Compare(ka.tid, kb.tid))
			})
		}
		from = to
	}
	return out
}

// WritePprof writes g's samples as a gzipped pprof protobuf (see Pprof).
func (g *Graph) WritePprof(w io.Writer) error {
	p, err := g.Pprof()
	if err != nil {
		return err
	}
	// klauspost's gzip writes the same format as the standard library's
	// (which profile.Write uses) in about a third of the time.
	zw := gzip.NewWriter(w)
	if err := p.WriteUncompressed(zw); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}
