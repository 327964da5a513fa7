package flame

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
)

// pprofOracle is the pprof export as it was built before WritePprof wrote
// the protobuf itself: a github.com/google/pprof/profile.Profile, checked
// with CheckValid, which profile.Write encodes. The tests hold WritePprof's
// output to it (see WritePprof for what the profile holds).
func pprofOracle(g *Graph) (*profile.Profile, error) {
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
	p.Comments = append(p.Comments, fmt.Sprintf("range: %s from T0 of %s", query.DisplayRange(g.Start-t0, g.End-t0), c.Profile.Name))
	pb := &pprofBuilder{p: p, mappings: map[string]*profile.Mapping{}, funcs: map[[2]string]*profile.Function{}, labels: map[labelSet]map[string][]string{}}
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

// pprofBuilder adds the samples of one or two captures to a profile,
// sharing its mappings, functions and label sets.
type pprofBuilder struct {
	p        *profile.Profile
	mappings map[string]*profile.Mapping
	funcs    map[[2]string]*profile.Function
	labels   map[labelSet]map[string][]string
}

// add appends the samples [lo, hi) of c that m keeps, with negated values
// and the label pprof::base=true when base is set.
func (pb *pprofBuilder) add(c *subsecond.Capture, ix *index, m *query.Match, lo, hi int, base bool) {
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
	label := func(k labelSet) map[string][]string {
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
			Label: label(labelSet{comm: comm, cpu: k.cpu, pid: k.pid, tid: k.tid})})
		p.Sample = append(p.Sample, &slab[len(slab)-1])
	}
}

// labelSet is what tells a sample's pprof labels apart.
type labelSet struct {
	comm          string
	cpu, pid, tid int32
	base          bool
}

// oracleCase is a graph whose pprof export TestPprofMatchesOracle checks.
type oracleCase struct {
	name string
	g    *Graph
}

// oracleCases returns plain and differential graphs, under every Only
// setting and a CPU filter, of captures that exercise the export: real deep
// stacks, inlined frames, deleted and odd DSOs, a tracepoint beside
// cpu-clock (periods, events), and generated samples with Java commands, a
// wall clock and ids perf did not record.
func oracleCases(t *testing.T) []oracleCase {
	t.Helper()
	real, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	real.Profile.Name = "real"
	caps := []*subsecond.Capture{real}
	for _, name := range []string{"inline-srcline.perf.txt.gz", "dso-forms.perf.txt.gz", "tracepoint-first.perf.txt.gz"} {
		c, err := synth.Parse(gunzip(t, filepath.Join("..", "testdata", "perf", name)), parser.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.Profile.Name = name
		caps = append(caps, c)
	}
	ss := synth.Generate(synth.Options{Seed: 5, CPUs: 4, Seconds: 6, Hz: 49, Start: 7_000_000_000, Pegged: 1, PegStart: 1e9, PegEnd: 3e9})
	java := []subsecond.Frame{ // leaf first
		{Symbol: "Interpreter", DSO: "[unknown]", Kind: subsecond.KindUser},
		{Symbol: "Lcom/example/Handler;::serve", DSO: "/tmp/perf-77.map", Kind: subsecond.KindUser},
		{Symbol: "Lcom/example/Pool;::take->Lcom/example/Queue;::poll", DSO: "/tmp/perf-77.map", Kind: subsecond.KindUser}, // inlined chain
		{Symbol: "Ljava/lang/Thread;::run", DSO: "/tmp/perf-77.map", Kind: subsecond.KindUser},
	}
	for i := range 40 {
		s := subsecond.Sample{Comm: "java", PID: 77, TID: 78 + int32(i%3), CPU: int32(i % 4), Time: 7_100_000_000 + int64(i)*1e8,
			Event: "cpu-clock", Period: 1, Frames: java[i%2:]}
		if i%5 == 0 {
			s.PID, s.TID, s.CPU = subsecond.Unknown, subsecond.Unknown, subsecond.Unknown
		}
		ss = append(ss, synth.Labeled{Sample: s})
	}
	gen := synth.Capture(ss)
	gen.Profile.Name = "generated"
	gen.Profile.Wall = subsecond.WallClock{Offset: 1_764_460_800e9, Source: subsecond.WallRealtime}
	caps = append(caps, gen)

	var out []oracleCase
	for _, c := range caps {
		t0, end := c.Profile.T0(), c.Profile.End+1
		whole := subsecond.Range{Start: t0, End: end}
		mid := t0 + (end-t0)/2
		filters := []query.Filter{{}, {Only: "kernel"}, {Only: "user"}}
		if cpu := c.Samples.CPU[c.Samples.Len()-1]; cpu >= 0 { // the last sample's, so that the filter keeps some
			filters = append(filters, query.Filter{CPUs: []int32{cpu}, Idle: true})
		}
		for _, f := range filters {
			name := fmt.Sprintf("%s %v", c.Profile.Name, f.Values())
			g, err := Build(c, f, whole)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			d, err := Diff(c, f, subsecond.Range{Start: t0, End: mid}, subsecond.Range{Start: mid, End: end})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, oracleCase{name, g}, oracleCase{name + " diff", d})
		}
	}
	// A differential graph across two captures.
	t0 := gen.Profile.T0()
	var a, b []synth.Labeled
	for _, s := range ss {
		if s.Time < t0+3e9 {
			a = append(a, s)
		} else {
			b = append(b, s)
		}
	}
	before, after := synth.Capture(a), synth.Capture(b)
	before.Profile.ID, after.Profile.ID = "before", "after"
	two, err := DiffProfiles(after, before, query.Filter{}, subsecond.Range{Start: t0, End: t0 + 3e9}, subsecond.Range{Start: t0 + 3e9, End: t0 + 7e9})
	if err != nil {
		t.Fatal(err)
	}
	return append(out, oracleCase{"generated diff across two captures", two})
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// TestPprofMatchesOracle checks that WritePprof's protobuf, read back by
// github.com/google/pprof/profile, is valid and holds what the profile
// package itself encodes from pprofOracle: the same header, the same
// samples in the same order (values, labels, and each location's address,
// mapping and functions), and as many functions and mappings.
func TestPprofMatchesOracle(t *testing.T) {
	for _, tc := range oracleCases(t) {
		var buf bytes.Buffer
		if err := tc.g.WritePprof(&buf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := profile.Parse(&buf)
		if err != nil {
			t.Fatalf("%s: read back: %v", tc.name, err)
		}
		if err := got.CheckValid(); err != nil {
			t.Errorf("%s: read back: %v", tc.name, err)
		}
		op, err := pprofOracle(tc.g)
		if err != nil {
			t.Fatalf("%s: oracle: %v", tc.name, err)
		}
		var ob bytes.Buffer
		if err := op.Write(&ob); err != nil {
			t.Fatal(err)
		}
		want, err := profile.Parse(&ob)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Sample) == 0 {
			t.Fatalf("%s: the oracle has no samples", tc.name)
		}
		if g, w := pprofHeader(got), pprofHeader(want); g != w {
			t.Errorf("%s: header\n%s\nwant\n%s", tc.name, g, w)
		}
		if len(got.Function) != len(want.Function) || len(got.Mapping) != len(want.Mapping) {
			t.Errorf("%s: %d functions, %d mappings; want %d, %d", tc.name, len(got.Function), len(got.Mapping), len(want.Function), len(want.Mapping))
		}
		if len(got.Sample) != len(want.Sample) {
			t.Errorf("%s: %d samples; want %d", tc.name, len(got.Sample), len(want.Sample))
			continue
		}
		for i := range got.Sample {
			if g, w := pprofSample(got.Sample[i]), pprofSample(want.Sample[i]); g != w {
				t.Errorf("%s: sample %d\n%s\nwant\n%s", tc.name, i, g, w)
				break
			}
		}
	}
}

// pprofHeader describes a profile's fields other than its samples,
// locations and functions, and the mapping pprof takes for the main binary.
func pprofHeader(p *profile.Profile) string {
	main := ""
	if len(p.Mapping) > 0 {
		main = p.Mapping[0].File
	}
	return fmt.Sprintf("main %q, sample types %v %v, period %v × %d, time %d, duration %d, default %q, drop %q, keep %q, doc %q, comments %q",
		main, *p.SampleType[0], *p.SampleType[1], *p.PeriodType, p.Period, p.TimeNanos, p.DurationNanos, p.DefaultSampleType, p.DropFrames, p.KeepFrames, p.DocURL, p.Comments)
}

// pprofSample describes a sample by value, its ids left out.
func pprofSample(s *profile.Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "values %v labels %v num %v\n", s.Value, s.Label, s.NumLabel)
	for _, l := range s.Location {
		fmt.Fprintf(&b, "  %#x", l.Address)
		if m := l.Mapping; m != nil {
			fmt.Fprintf(&b, " in %q [%#x, %#x) +%#x functions %v", m.File, m.Start, m.Limit, m.Offset, m.HasFunctions)
		}
		for _, ln := range l.Line {
			fmt.Fprintf(&b, " | %q %q %q line %d", ln.Function.Name, ln.Function.SystemName, ln.Function.Filename, ln.Line)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestPprofAllocations holds the pprof export to issue 13's bound of at
// most one allocation per emitted flame-graph node, on the real capture's
// whole range and on a differential graph of it.
func TestPprofAllocations(t *testing.T) {
	c, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	t0, end := c.Profile.T0(), c.Profile.End+1
	mid := t0 + (end-t0)/2
	g, err := Build(c, query.Filter{}, subsecond.Range{Start: t0, End: end})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Diff(c, query.Filter{}, subsecond.Range{Start: t0, End: mid}, subsecond.Range{Start: mid, End: end})
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*Graph{"whole": g, "diff": d} {
		allocs := testing.AllocsPerRun(3, func() {
			if err := g.WritePprof(io.Discard); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > float64(g.Len()) {
			t.Errorf("%s: WritePprof of a %d-node graph makes %.0f allocations; want at most one per node", name, g.Len(), allocs)
		} else {
			t.Logf("%s: %.0f allocations for %d nodes", name, allocs, g.Len())
		}
	}
}
