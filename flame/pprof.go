package flame

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/subsecond/subsecond"
)

// Pprof returns the samples behind g as a pprof profile. Each sample has
// two values, samples/count and cpu/nanoseconds (the perf period, which is
// nanoseconds for cpu-clock; when the selection carries no periods, one
// sampling interval 1e9/FrequencyHz per sample), labels comm, cpu, pid and
// tid (the ids left out when perf recorded none), and the
// stack leaf-first with the filter's Only applied. TimeNanos and
// DurationNanos give the range. The profile passes CheckValid.
func (g *Graph) Pprof() (*profile.Profile, error) {
	c := g.c
	m, err := g.f.Compile(c)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		TimeNanos:     g.Start,
		DurationNanos: g.End - g.Start,
	}
	interval := int64(0)
	if hz := c.Profile.FrequencyHz; hz > 0 {
		interval = int64(math.Round(1e9 / hz))
		p.Period = interval
	}
	if len(c.Profile.Events) > 0 {
		ev := g.f.Event
		if ev == "" {
			ev = c.Profile.Events[0].Name
		}
		p.Comments = []string{"event: " + ev}
	}

	type key struct {
		node          int32
		cpu, pid, tid int32
		comm          uint32
	}
	type acc struct{ n, w int64 }
	agg := map[key]*acc{}
	var order []key
	lo, hi := c.Window(subsecond.Range{Start: g.Start, End: g.End})
	s := &c.Samples
	periods := false
	for i := lo; i < hi; i++ {
		if !m.Keep(i) {
			continue
		}
		k := key{s.Stack[i], s.CPU[i], s.PID[i], s.TID[i], s.Comm[i]}
		a := agg[k]
		if a == nil {
			a = &acc{}
			agg[k] = a
			order = append(order, k)
		}
		a.n++
		a.w += int64(s.Weight[i])
		if s.Weight[i] != 1 {
			periods = true
		}
	}

	mappings := map[uint32]*profile.Mapping{}
	funcs := map[[2]string]*profile.Function{}
	locs := map[[2]int32]*profile.Location{}
	location := func(fr int32, java bool) *profile.Location {
		lk := [2]int32{fr, 0}
		if java {
			lk[1] = 1
		}
		if l := locs[lk]; l != nil {
			return l
		}
		rec := &c.Frames[fr]
		dso := c.Strings[rec.DSO]
		mp := mappings[rec.DSO]
		if mp == nil && dso != "" {
			mp = &profile.Mapping{ID: uint64(len(p.Mapping) + 1), File: dso, HasFunctions: true}
			mappings[rec.DSO] = mp
			p.Mapping = append(p.Mapping, mp)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: mp, Address: rec.Addr}
		// An inlined chain "A->B" is one location with B's line first.
		names := Names(c.Strings[rec.Symbol], dso, java)
		for i := len(names) - 1; i >= 0; i-- {
			fk := [2]string{names[i], dso}
			fn := funcs[fk]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: names[i], SystemName: names[i], Filename: dso}
				funcs[fk] = fn
				p.Function = append(p.Function, fn)
			}
			l.Line = append(l.Line, profile.Line{Function: fn})
		}
		locs[lk] = l
		p.Location = append(p.Location, l)
		return l
	}
	stacks := map[[2]int32][]*profile.Location{}
	for _, k := range order {
		a := agg[k]
		java := strings.HasPrefix(c.Strings[k.comm], "java")
		sk := [2]int32{k.node, 0}
		if java {
			sk[1] = 1
		}
		st, ok := stacks[sk]
		if !ok {
			for n := k.node; n > 0; n = c.Nodes[n].Parent {
				if fr := c.Nodes[n].Frame; m.KeepFrame(fr) {
					st = append(st, location(fr, java))
				}
			}
			stacks[sk] = st
		}
		w := a.w
		if !periods && interval > 0 {
			w = a.n * interval
		}
		smp := &profile.Sample{Location: st, Value: []int64{a.n, w},
			Label: map[string][]string{"comm": {c.Strings[k.comm]}}}
		for _, l := range []struct {
			name string
			v    int32
		}{{"cpu", k.cpu}, {"pid", k.pid}, {"tid", k.tid}} {
			if l.v != subsecond.Unknown {
				// String labels: pprof drops numeric labels whose value is
				// 0, and CPU 0 and the idle task's pid 0 matter.
				smp.Label[l.name] = []string{strconv.Itoa(int(l.v))}
			}
		}
		p.Sample = append(p.Sample, smp)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof export: %w", err)
	}
	return p, nil
}

// WritePprof writes g's samples as a gzipped pprof protobuf (see Pprof).
func (g *Graph) WritePprof(w io.Writer) error {
	p, err := g.Pprof()
	if err != nil {
		return err
	}
	return p.Write(w)
}
