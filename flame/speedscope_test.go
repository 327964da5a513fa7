package flame

// The speedscope export's tests are internal to the package: they check it
// on the pprof oracle's cases (oracleCases) and bound it with a small limit.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/symbol"
)

// speedscopeFile mirrors speedscope's file format (FileFormat.File of
// speedscope's src/lib/file-format-spec.ts) as far as a file of sampled
// profiles uses it.
type speedscopeFile struct {
	Schema             string `json:"$schema"`
	Exporter           string `json:"exporter"`
	Name               string `json:"name"`
	ActiveProfileIndex *int   `json:"activeProfileIndex"`
	Shared             struct {
		Frames []speedscopeFrame `json:"frames"`
	} `json:"shared"`
	Profiles []speedscopeProfile `json:"profiles"`
}

type speedscopeFrame struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line *int   `json:"line"`
}

type speedscopeProfile struct {
	Type       string    `json:"type"`
	Name       string    `json:"name"`
	Unit       string    `json:"unit"`
	StartValue int64     `json:"startValue"`
	EndValue   int64     `json:"endValue"`
	Samples    [][]int32 `json:"samples"`
	Weights    []int64   `json:"weights"`
}

// checkSpeedscopeSchema checks out against what
// https://www.speedscope.app/file-format-schema.json asks of a file of
// sampled profiles: each object's required keys (the schema's "required"
// lists), the types of the properties it defines, the $schema and unit
// enums, and no top-level key the schema does not define.
func checkSpeedscopeSchema(t *testing.T, name string, out []byte) {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(out, &file); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bad := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: "+format, append([]any{name}, args...)...)
	}
	required := func(what string, obj map[string]any, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				bad("%s lacks the required %q", what, k)
			}
		}
	}
	isNumber := func(v any) bool { _, ok := v.(float64); return ok }
	isString := func(v any) bool { _, ok := v.(string); return ok }

	required("the file", file, "$schema", "profiles", "shared") // FileFormat.File
	for k, v := range file {
		switch k {
		case "$schema":
			if v != speedscopeSchema {
				bad("$schema = %v; want %s", v, speedscopeSchema)
			}
		case "name", "exporter":
			if !isString(v) {
				bad("%s = %v; want a string", k, v)
			}
		case "activeProfileIndex":
			if !isNumber(v) {
				bad("activeProfileIndex = %v; want a number", v)
			}
		case "shared", "profiles":
		default:
			bad("the file has the key %q, which the schema does not define", k)
		}
	}
	shared, ok := file["shared"].(map[string]any)
	if !ok {
		bad("shared = %v; want an object", file["shared"])
		return
	}
	required("shared", shared, "frames")
	frames, ok := shared["frames"].([]any)
	if !ok {
		bad("shared.frames = %v; want an array", shared["frames"])
	}
	for i, f := range frames {
		fr, ok := f.(map[string]any)
		if !ok {
			bad("frame %d = %v; want an object", i, f)
			continue
		}
		required(fmt.Sprintf("frame %d", i), fr, "name") // FileFormat.Frame
		for k, v := range fr {
			if (k == "name" || k == "file") && !isString(v) || (k == "line" || k == "col") && !isNumber(v) {
				bad("frame %d: %s = %v; wrong type", i, k, v)
			}
		}
	}
	profiles, ok := file["profiles"].([]any)
	if !ok {
		bad("profiles = %v; want an array", file["profiles"])
	}
	units := []string{"bytes", "microseconds", "milliseconds", "nanoseconds", "none", "seconds"} // FileFormat.ValueUnit
	for i, p := range profiles {
		what := fmt.Sprintf("profile %d", i)
		pr, ok := p.(map[string]any)
		if !ok {
			bad("%s = %v; want an object", what, p)
			continue
		}
		required(what, pr, "endValue", "name", "samples", "startValue", "type", "unit", "weights") // FileFormat.SampledProfile
		if pr["type"] != "sampled" {
			bad("%s: type = %v; want sampled", what, pr["type"])
		}
		if u, _ := pr["unit"].(string); !slices.Contains(units, u) {
			bad("%s: unit = %v; want one of %v", what, pr["unit"], units)
		}
		if !isString(pr["name"]) || !isNumber(pr["startValue"]) || !isNumber(pr["endValue"]) {
			bad("%s: name, startValue, endValue = %v, %v, %v; want a string and numbers", what, pr["name"], pr["startValue"], pr["endValue"])
		}
		samples, _ := pr["samples"].([]any)
		for j, s := range samples {
			stack, ok := s.([]any)
			if !ok || slices.ContainsFunc(stack, func(v any) bool { return !isNumber(v) }) {
				bad("%s: sample %d = %v; want an array of numbers", what, j, s)
			}
		}
		weights, _ := pr["weights"].([]any)
		if slices.ContainsFunc(weights, func(v any) bool { return !isNumber(v) }) {
			bad("%s: weights hold a value that is not a number", what)
		}
	}
}

// foldedWeights returns g's folded export as a map from stack to weight.
func foldedWeights(t *testing.T, g *Graph) map[string]int64 {
	t.Helper()
	var b bytes.Buffer
	if err := g.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for line := range strings.Lines(b.String()) {
		i := strings.LastIndexByte(line, ' ')
		w, err := strconv.ParseInt(strings.TrimSuffix(line[i+1:], "\n"), 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("folded line %q", line)
		}
		out[line[:i]] += w
	}
	return out
}

// speedscopeCases returns the pprof export's cases and a few that take
// the other weights: a tracepoint, samples without periods, a capture
// without timestamps, a filter that keeps nothing.
func speedscopeCases(t *testing.T) []oracleCase {
	t.Helper()
	cases := oracleCases(t)
	add := func(name string, c *subsecond.Capture, f query.Filter, r subsecond.Range) {
		t.Helper()
		g, err := Build(c, f, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cases = append(cases, oracleCase{name, g})
	}
	whole := func(c *subsecond.Capture) subsecond.Range {
		return subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1}
	}
	tp, err := synth.Parse(gunzip(t, filepath.Join("..", "testdata", "perf", "tracepoint-first.perf.txt.gz")), parser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp.Profile.Name = "tracepoint"
	add("tracepoint", tp, query.Filter{Event: tp.Profile.Events[0].Name, Idle: true}, whole(tp))

	ss := synth.Generate(synth.Options{Seed: 9, CPUs: 3, Seconds: 2, Hz: 99, Start: 5_000_000_000})
	for i := range ss {
		ss[i].Period = 0
	}
	np := synth.Capture(ss)
	np.Profile.Name = "no periods"
	add("no periods", np, query.Filter{}, whole(np))
	add("no periods, nothing kept", np, query.Filter{Comm: "no such command"}, whole(np))

	nt, err := synth.Parse(gunzip(t, filepath.Join("..", "testdata", "perf", "no-time-callchain.perf.txt.gz")), parser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nt.Profile.Name = "untimed"
	add("untimed", nt, query.Filter{Idle: true}, subsecond.UntimedRange)
	return cases
}

// TestSpeedscope checks the speedscope export of each case against the
// schema, the folded export (the same stacks, root-first, with the same
// weights or one sampling interval per sample), and the stack chart's
// samples (the same samples per CPU, in time order).
func TestSpeedscope(t *testing.T) {
	for _, tc := range speedscopeCases(t) {
		g := tc.g
		var buf bytes.Buffer
		if err := g.WriteSpeedscope(&buf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkSpeedscopeSchema(t, tc.name, buf.Bytes())
		var file speedscopeFile
		if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if file.Exporter != "subsecond" || file.ActiveProfileIndex == nil || *file.ActiveProfileIndex != 0 || file.Name == "" {
			t.Errorf("%s: exporter %q, activeProfileIndex %v, name %q; want subsecond, 0 and a name", tc.name, file.Exporter, file.ActiveProfileIndex, file.Name)
		}
		c := g.c
		if c.Profile.Timed() {
			t0 := c.Profile.T0()
			if want := query.DisplayRange(g.Start-t0, g.End-t0); !strings.Contains(file.Name, want) {
				t.Errorf("%s: name %q; want the range %s in it", tc.name, file.Name, want)
			}
		}
		if g.BaseN != nil && !strings.Contains(file.Name, "base") {
			t.Errorf("%s: name %q; want it to say that the base is left out", tc.name, file.Name)
		}

		// Frames: each a distinct function, the DSO its file.
		frames := file.Shared.Frames
		seen := map[speedscopeFrame]bool{}
		for i, f := range frames {
			if f.Line != nil || seen[f] {
				t.Errorf("%s: frame %d %+v is repeated or has a line", tc.name, i, f)
			}
			seen[f] = true
		}

		// The target range alone, as a graph of its own.
		target := g
		r := subsecond.Range{Start: g.Start, End: g.End}
		if g.BaseN != nil {
			var err error
			if target, err = Build(c, g.f, r); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		folded := foldedWeights(t, target)
		var foldedTotal int64
		for _, w := range folded {
			foldedTotal += w
		}
		// Samples by stack of names, per the stack chart; folded's
		// stacks by number of samples.
		counts := map[string]int64{}
		for i := 1; i < target.Len(); i++ {
			if n := target.SelfN[i]; n > 0 {
				p := target.Path(i)
				p[0] = symbol.Comm(p[0])
				counts[strings.Join(p, ";")] += n
			}
		}

		// The weight each sample should have: its period for a clock
		// event with periods (then the folded total is not the count),
		// else the sampling interval, else 1.
		ev := g.f.Event
		if ev == "" && len(c.Profile.Events) > 0 {
			ev = c.Profile.Events[c.Profile.DefaultEvent()].Name
		}
		unit, perSample := "nanoseconds", interval(c)
		switch {
		case (ev == "cpu-clock" || ev == "task-clock") && foldedTotal != target.Total:
			perSample = 0 // the periods: folded's weights
		case perSample == 0 || subsecond.IsTracepoint(ev):
			unit, perSample = "none", 1
		}
		want := folded
		if perSample > 0 {
			want = map[string]int64{}
			for s, n := range counts {
				want[s] = n * perSample
			}
		}

		got := map[string]int64{}
		var total int64
		perCPU := map[string][]string{}
		var names []string
		for _, p := range file.Profiles {
			names = append(names, p.Name)
			if len(p.Samples) != len(p.Weights) {
				t.Errorf("%s: %s has %d samples and %d weights", tc.name, p.Name, len(p.Samples), len(p.Weights))
				continue
			}
			if p.Unit != unit {
				t.Errorf("%s: %s: unit %q; want %q", tc.name, p.Name, p.Unit, unit)
			}
			var sum int64
			for j, stack := range p.Samples {
				parts := make([]string, len(stack))
				for k, f := range stack {
					if f < 0 || int(f) >= len(frames) {
						t.Fatalf("%s: %s: sample %d has frame %d of %d", tc.name, p.Name, j, f, len(frames))
					}
					parts[k] = frames[f].Name
				}
				if len(parts) == 0 || p.Weights[j] <= 0 {
					t.Fatalf("%s: %s: sample %d is %v, weight %d; want a stack and a positive weight", tc.name, p.Name, j, parts, p.Weights[j])
				}
				perCPU[p.Name] = append(perCPU[p.Name], strings.Join(parts, ";"))
				parts[0] = symbol.Comm(parts[0])
				got[strings.Join(parts, ";")] += p.Weights[j]
				sum += p.Weights[j]
			}
			total += sum
			start, end := g.Start, g.End
			if unit == "none" || !c.Profile.Timed() {
				start, end = 0, sum
			}
			if p.StartValue != start || p.EndValue != end {
				t.Errorf("%s: %s: startValue, endValue = %d, %d; want %d, %d", tc.name, p.Name, p.StartValue, p.EndValue, start, end)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d stacks; folded has %d", tc.name, len(got), len(want))
		}
		for s, w := range want {
			if got[s] != w {
				t.Errorf("%s: stack %q weighs %d; want %d", tc.name, s, got[s], w)
			}
		}
		wantTotal := foldedTotal
		if perSample > 0 {
			wantTotal = target.Total * perSample
		}
		if total != wantTotal {
			t.Errorf("%s: weights sum to %d; want %d", tc.name, total, wantTotal)
		}

		// Profiles: one per CPU in order, unknown last; each CPU's
		// samples in time order, as the stack chart lists them.
		if !c.Profile.Timed() {
			continue
		}
		s, _, err := StackSamples(c, g.f, r, MaxSpeedscopeSamples)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wantCPU := map[string][]string{}
		var cpus []int32
		for j := range s.Time {
			cpu := s.CPU[j]
			name := "unknown CPU"
			if cpu != subsecond.Unknown {
				name = "CPU " + strconv.Itoa(int(cpu))
			}
			if wantCPU[name] == nil {
				cpus = append(cpus, cpu)
			}
			wantCPU[name] = append(wantCPU[name], strings.Join(target.Path(int(s.Leaf[j])), ";"))
		}
		slices.Sort(cpus)
		if len(cpus) > 0 && cpus[0] == subsecond.Unknown { // unknown last
			cpus = append(cpus[1:], subsecond.Unknown)
		}
		var wantNames []string
		for _, cpu := range cpus {
			if cpu == subsecond.Unknown {
				wantNames = append(wantNames, "unknown CPU")
			} else {
				wantNames = append(wantNames, "CPU "+strconv.Itoa(int(cpu)))
			}
		}
		if len(wantNames) == 0 {
			wantNames = []string{"no samples"}
		}
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s: profiles %q; want %q", tc.name, names, wantNames)
		}
		if len(g.f.CPUs) == 1 && len(names) != 1 {
			t.Errorf("%s: a selection of one CPU has %d profiles; want 1", tc.name, len(names))
		}
		for name, seq := range wantCPU {
			if !slices.Equal(perCPU[name], seq) {
				t.Errorf("%s: %s: the samples are not those of the stack chart in time order", tc.name, name)
			}
		}
	}
}

// TestSpeedscopeLimit checks that a selection of more samples than the
// limit is refused, before anything is written, with an error wrapping
// subsecond.ErrTooLarge that names the limit and the samples, and that
// one of exactly the limit is written.
func TestSpeedscopeLimit(t *testing.T) {
	ss := synth.Generate(synth.Options{Seed: 4, CPUs: 2, Seconds: 1, Hz: 49, Start: 3_000_000_000})
	c := synth.Capture(ss)
	g, err := Build(c, query.Filter{Idle: true}, subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1})
	if err != nil {
		t.Fatal(err)
	}
	n := int(g.Total)
	var buf bytes.Buffer
	if err := g.writeSpeedscope(&buf, n); err != nil {
		t.Errorf("writeSpeedscope(limit %d) of %d samples: %v", n, n, err)
	}
	buf.Reset()
	err = g.writeSpeedscope(&buf, n-1)
	msg := query.Message(err)
	if !errors.Is(err, subsecond.ErrTooLarge) || buf.Len() > 0 ||
		!strings.Contains(msg, fmt.Sprintf("%d samples", n)) || !strings.Contains(msg, fmt.Sprintf("the %d a speedscope export lists", n-1)) {
		t.Errorf("writeSpeedscope(limit %d) of %d samples = %v, wrote %d bytes; want an error wrapping ErrTooLarge naming both, nothing written", n-1, n, err, buf.Len())
	}
}
