package flame

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// MaxSpeedscopeSamples is the most samples a speedscope export lists:
// speedscope's format holds every sample's whole stack, so the file grows
// with the samples, not with the flame graph's nodes. It is the stack
// chart's upper bound (query.MaxMaxSamples), the other view that sends
// every sample.
const MaxSpeedscopeSamples = query.MaxMaxSamples

// speedscopeSchema is the $schema value that speedscope looks for.
const speedscopeSchema = "https://www.speedscope.app/file-format-schema.json"

// WriteSpeedscope writes the samples behind g in speedscope's file format
// (https://www.speedscope.app/file-format-schema.json): one "sampled"
// profile per CPU, named "CPU n" in the order of the CPUs' numbers, then
// "unknown CPU" for samples perf recorded no CPU for; a selection of one
// CPU is one profile. Each profile lists its samples in time order, so
// speedscope's Time Order view is the CPU's timeline with the time no kept
// sample covers (idle, filtered out) closed up. A sample is its stack
// root-first: the command, then the frames as the flame graph has them
// (the filter's Only applied, inlined chains a frame per function), the
// same stacks the folded export writes. A frame of shared.frames is a
// function, a (name, DSO) pair as the function table and the pprof export
// key them, with the DSO as its file; perf's source lines belong to
// addresses, not functions, so frames have no line. The file's name is the
// capture's, the range's in seconds from T0 and the filter's.
//
// A sample's weight is the time it stands for, in nanoseconds: its perf
// period where the selection's event is a clock (cpu-clock, task-clock,
// whose periods are nanoseconds) and perf printed periods; else the
// sampling interval 1e9/FrequencyHz, rounded; where neither is known, or
// the event is a tracepoint (which fires on what the code does, not at a
// rate), each sample weighs 1 and the unit is "none". startValue and
// endValue are the range's start and end in nanoseconds (0 and the summed
// weight for unit "none", or a capture without timestamps).
//
// A differential graph is written as its target range alone, the base left
// out and the file's name saying so: speedscope has no differential view
// and refuses negative weights.
//
// A selection of more than MaxSpeedscopeSamples samples is refused with
// an error wrapping subsecond.ErrTooLarge, before anything is written.
func (g *Graph) WriteSpeedscope(w io.Writer) error {
	return g.writeSpeedscope(w, MaxSpeedscopeSamples)
}

func (g *Graph) writeSpeedscope(w io.Writer, limit int) error {
	c, ix := g.c, g.ix
	if c == nil || ix == nil {
		return fmt.Errorf("speedscope export: the graph was not built from a capture: %w", subsecond.ErrInvalid)
	}
	m, err := g.f.Compile(c)
	if err != nil {
		return err
	}
	s := &c.Samples
	lo, hi := c.Window(subsecond.Range{Start: g.Start, End: g.End})
	var kept []int32
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			if len(kept) == limit {
				return g.speedscopeTooLarge(m, lo, hi, limit)
			}
			kept = append(kept, int32(i))
		}
	}
	cpus, order := byCPU(s, kept)
	unit, weight := speedscopeWeights(c, g.f, kept)

	fr := newSpeedscopeFrames(ix)
	for _, i := range kept {
		fr.number(ix.leaf[i])
	}

	e := jsonWriter{w: w, buf: make([]byte, 0, jsonChunk+4096)}
	e.raw(`{"$schema":`)
	e.buf = appendJSONString(e.buf, speedscopeSchema)
	e.raw(`,"exporter":"subsecond","name":`)
	e.buf = appendJSONString(e.buf, g.speedscopeName())
	e.raw(`,"activeProfileIndex":0,"shared":{"frames":[`)
	for k, node := range fr.nodes {
		if k > 0 {
			e.raw(",")
		}
		e.raw(`{"name":`)
		e.buf = appendJSONString(e.buf, ix.strings[ix.name[node]])
		if d := ix.strings[ix.dso[node]]; d != "" {
			e.raw(`,"file":`)
			e.buf = appendJSONString(e.buf, d)
		}
		e.raw("}")
		e.spill()
	}
	e.raw(`]},"profiles":[`)
	if len(cpus) == 0 {
		cpus = []cpuRun{{cpu: subsecond.Unknown}}
	}
	for p, run := range cpus {
		if p > 0 {
			e.raw(",")
		}
		samples := order[run.from:run.to]
		name := "unknown CPU"
		if run.cpu != subsecond.Unknown {
			name = "CPU " + strconv.Itoa(int(run.cpu))
		}
		if len(kept) == 0 {
			name = "no samples"
		}
		start, end := g.Start, g.End
		if unit == "none" || !c.Profile.Timed() {
			start, end = 0, 0
			for _, i := range samples {
				end += weight(i)
			}
		}
		e.raw(`{"type":"sampled","name":`)
		e.buf = appendJSONString(e.buf, name)
		e.raw(`,"unit":"` + unit + `","startValue":`)
		e.int(start)
		e.raw(`,"endValue":`)
		e.int(end)
		e.raw(`,"samples":[`)
		for j, i := range samples {
			if j > 0 {
				e.raw(",")
			}
			e.buf = fr.appendStack(e.buf, ix.leaf[i])
			if j&255 == 255 {
				e.spill()
			}
		}
		e.raw(`],"weights":[`)
		for j, i := range samples {
			if j > 0 {
				e.raw(",")
			}
			e.int(weight(i))
			if j&1023 == 1023 {
				e.spill()
			}
		}
		e.raw("]}")
		e.spill()
	}
	e.raw("]}\n")
	return e.flush()
}

// speedscopeTooLarge returns the error refusing a selection of more than
// limit samples, with their number.
func (g *Graph) speedscopeTooLarge(m *query.Match, lo, hi, limit int) error {
	n := 0
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			n++
		}
	}
	where := "the capture"
	if p := &g.c.Profile; p.Timed() {
		where = "the range " + query.DisplayRange(g.Start-p.T0(), g.End-p.T0())
	}
	return fmt.Errorf("%s holds %d samples of the filters, more than the %d a speedscope export lists (it holds every sample's stack); narrow the range (start, end) or the filters (cpu, comm, pid, function): %w",
		where, n, limit, subsecond.ErrTooLarge)
}

// cpuRun is the run of one CPU's samples in the order byCPU returns.
type cpuRun struct {
	cpu      int32
	from, to int
}

// byCPU returns kept (sample indexes in time order) grouped by CPU, the
// CPUs in increasing order with Unknown last, each CPU's samples still in
// time order, and the CPUs' runs in it.
func byCPU(s *subsecond.Columns, kept []int32) ([]cpuRun, []int32) {
	count := map[int32]int{}
	for _, i := range kept {
		count[s.CPU[i]]++
	}
	runs := make([]cpuRun, 0, len(count))
	for cpu := range count {
		runs = append(runs, cpuRun{cpu: cpu})
	}
	// As unsigned numbers CPUs keep their order and Unknown (-1) is last.
	slices.SortFunc(runs, func(a, b cpuRun) int { return cmp.Compare(uint32(a.cpu), uint32(b.cpu)) })
	at := make(map[int32]int, len(runs)) // the next place of each CPU's samples
	from := 0
	for k := range runs {
		runs[k].from = from
		from += count[runs[k].cpu]
		runs[k].to = from
		at[runs[k].cpu] = runs[k].from
	}
	order := make([]int32, len(kept))
	for _, i := range kept {
		cpu := s.CPU[i]
		order[at[cpu]] = i
		at[cpu]++
	}
	return runs, order
}

// speedscopeWeights returns the unit of the selection's weights and the
// weight of sample i (see WriteSpeedscope).
func speedscopeWeights(c *subsecond.Capture, f query.Filter, kept []int32) (string, func(i int32) int64) {
	s := &c.Samples
	ev := f.Event
	if ev == "" && len(c.Profile.Events) > 0 {
		ev = c.Profile.Events[c.Profile.DefaultEvent()].Name
	}
	if ev == "cpu-clock" || ev == "task-clock" {
		for _, i := range kept {
			if s.Weight[i] != 1 {
				return "nanoseconds", func(i int32) int64 { return int64(s.Weight[i]) }
			}
		}
	}
	if iv := interval(c); iv > 0 && !subsecond.IsTracepoint(ev) {
		return "nanoseconds", func(int32) int64 { return iv }
	}
	return "none", func(int32) int64 { return 1 }
}

// speedscopeFrames numbers the frames of an index's nodes as speedscope's
// shared.frames: one per function (name and DSO) and one per command.
type speedscopeFrames struct {
	ix    *index
	nodes []int32 // per frame: an index node it names
	// node[k] is index node k's frame + 1, 0 until numbered; fn and comm
	// the same per function and per command name (ix.strings).
	node, fn, comm []int32
	path           []int32
}

func newSpeedscopeFrames(ix *index) *speedscopeFrames {
	return &speedscopeFrames{ix: ix, node: make([]int32, ix.Len()), fn: make([]int32, ix.nfn), comm: make([]int32, len(ix.strings))}
}

// number numbers the frames of leaf's stack, up to the first node
// numbered already, whose ancestors are too.
func (fr *speedscopeFrames) number(leaf int32) {
	ix := fr.ix
	for k := leaf; k > 0 && fr.node[k] == 0; k = ix.parent[k] {
		var f *int32
		if fn := ix.fn[k]; fn >= 0 {
			f = &fr.fn[fn]
		} else { // a command
			f = &fr.comm[ix.name[k]]
		}
		if *f == 0 {
			fr.nodes = append(fr.nodes, k)
			*f = int32(len(fr.nodes))
		}
		fr.node[k] = *f
	}
}

// appendStack appends the frames of leaf's stack, numbered already, as a
// JSON array root-first.
func (fr *speedscopeFrames) appendStack(dst []byte, leaf int32) []byte {
	fr.path = fr.path[:0]
	for k := leaf; k > 0; k = fr.ix.parent[k] {
		fr.path = append(fr.path, fr.node[k]-1)
	}
	dst = append(dst, '[')
	for j := len(fr.path) - 1; j >= 0; j-- {
		dst = appendInt(dst, int64(fr.path[j]))
		if j > 0 {
			dst = append(dst, ',')
		}
	}
	return append(dst, ']')
}

// speedscopeName names the file: the capture, the range in seconds from
// T0, the filter, and for a differential graph the base range left out.
func (g *Graph) speedscopeName() string {
	p := &g.c.Profile
	name := p.Name
	if name == "" {
		name = p.ID
	}
	if p.Timed() {
		t0 := p.T0()
		name += " " + query.DisplayRange(g.Start-t0, g.End-t0)
	}
	if q := g.f.Values().Encode(); q != "" {
		name += "; " + q
	}
	if g.BaseN != nil {
		t0 := g.baseCapture().Profile.T0()
		name += fmt.Sprintf(" (the target of a differential graph; its base %s is left out)", query.DisplayRange(g.BaseStart-t0, g.BaseEnd-t0))
	}
	return name
}
