package flame_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/folded"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/symbol"
)

const evilComm = `evil <b>"]]>'&`

var filters = []query.Filter{
	{},
	{Idle: true},
	{CPUs: []int32{1, 3}},
	{PIDs: []int32{1000}},
	{CommRegex: "^(nccl|node)"},
	{Function: "mem_cgroup|ext4"},
	{Only: "kernel"},
	{Only: "user", Idle: true},
	{Comm: "swapper", Only: "kernel", Idle: true},
}

func data(t testing.TB) ([]synth.Labeled, *subsecond.Capture) {
	t.Helper()
	ss := synth.Generate(synth.Options{Seed: 3, CPUs: 6, Seconds: 8, Hz: 49, Start: 1000_400_000_000, Pegged: 2, PegStart: 2e9, PegEnd: 5e9})
	// Hostile names: XML and folded-text metacharacters, an unknown symbol.
	hostile := []subsecond.Frame{
		{Symbol: `<script>alert("x")</script>`, DSO: "/opt/a&b/lib.so", Kind: subsecond.KindUser},
		{Symbol: "a;b&c", DSO: "/opt/lib.so", Kind: subsecond.KindUser},
		{Symbol: "[unknown]", DSO: "/usr/lib/libc.so.6", Kind: subsecond.KindUser},
		{Symbol: "Foo<T>::bar(int) const", DSO: "/opt/x", Kind: subsecond.KindUser},
	}
	for i := 0; i < 20; i++ {
		ss = append(ss, synth.Labeled{Sample: subsecond.Sample{Comm: evilComm, PID: 9, TID: 9, CPU: 1,
			Time: 1001_000_000_000 + int64(i)*1e8, Event: "cpu-clock", Period: 1, Frames: hostile[i%2:]}})
	}
	return ss, synth.Capture(ss)
}

// reference sums the periods of folded lines straight from the generated
// samples, or counts the samples when count is set.
func reference(ss []synth.Labeled, f query.Filter, r subsecond.Range, count ...bool) (map[string]int64, int64) {
	want := map[string]int64{}
	var total int64
	for i := range ss {
		if r.Contains(ss[i].Time) && synth.Keep(&ss[i], f, "cpu-clock") {
			w := int64(ss[i].Period)
			if len(count) > 0 {
				w = 1
			}
			want[synth.Folded(&ss[i], f, names)] += w
			total++
		}
	}
	return want, total
}

func parseFolded(t *testing.T, r io.Reader) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("bad folded line %q", line)
		}
		got[line[:i]] += n
	}
	return got
}

func diffMaps(t *testing.T, name string, got, want map[string]int64) {
	t.Helper()
	bad := 0
	for k, w := range want {
		if got[k] != w && bad < 5 {
			bad++
			t.Errorf("%s: %q = %d; want %d", name, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && bad < 5 {
			bad++
			t.Errorf("%s: unexpected %q = %d", name, k, g)
		}
	}
}

func checkTree(t *testing.T, name string, g *flame.Graph) {
	t.Helper()
	n := g.Len()
	if n == 0 || g.NameOf(0) != "all" || g.Kind[0] != flame.KindRoot || g.TotalN[0] != g.Total {
		t.Fatalf("%s: root = %q kind %d total %d; want all, root, %d", name, g.NameOf(0), g.Kind[0], g.TotalN[0], g.Total)
	}
	sum := make([]int64, n)
	for i := 1; i < n; i++ {
		p := g.Parent[i]
		if p >= int32(i) || g.Depth[i] != g.Depth[p]+1 {
			t.Fatalf("%s: node %d parent %d depth %d; not pre-order", name, i, p, g.Depth[i])
		}
		if (g.Depth[i] == 1) != (g.Kind[i] == flame.KindComm) {
			t.Errorf("%s: node %d at depth %d has kind %d", name, i, g.Depth[i], g.Kind[i])
		}
		sum[p] += g.TotalN[i]
		if i > 1 && g.Parent[i-1] == p && g.NameOf(i-1) > g.NameOf(i) {
			t.Errorf("%s: children of %d not sorted: %q before %q", name, p, g.NameOf(i-1), g.NameOf(i))
		}
	}
	for i := 0; i < n; i++ {
		if g.TotalN[i] != g.SelfN[i]+sum[i] {
			t.Errorf("%s: node %d total %d != self %d + children %d", name, i, g.TotalN[i], g.SelfN[i], sum[i])
		}
	}
}

func TestBuildMatchesIndependentCount(t *testing.T) {
	ss, c := data(t)
	t0 := c.Profile.T0()
	rnd := rand.New(rand.NewSource(1))
	ranges := []subsecond.Range{{Start: t0, End: t0 + 10e9}, {Start: t0 + 1e9, End: t0 + 2e9}, {Start: t0 + 2_500_000_000, End: t0 + 2_520_000_000}}
	for i := 0; i < 5; i++ {
		a := t0 + rnd.Int63n(8e9)
		ranges = append(ranges, subsecond.Range{Start: a, End: a + 1 + rnd.Int63n(3e9)})
	}
	for _, r := range ranges {
		for _, f := range filters {
			name := fmt.Sprintf("[%d, %d) %s", r.Start-t0, r.End-t0, f.Values().Encode())
			g, err := flame.Build(c, f, r)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, total := reference(ss, f, r)
			if g.Total != total {
				t.Errorf("%s: Total = %d; want %d", name, g.Total, total)
			}
			checkTree(t, name, g)
			var buf bytes.Buffer
			if err := g.Export(&buf, "folded"); err != nil {
				t.Fatal(err)
			}
			diffMaps(t, name+" folded", parseFolded(t, &buf), want)
		}
	}
}

func TestRangeErrors(t *testing.T) {
	_, c := data(t)
	t0 := c.Profile.T0()
	tests := []struct {
		r    subsecond.Range
		want error
	}{
		{subsecond.Range{Start: t0 + 5e9, End: t0 + 5e9}, subsecond.ErrInvalid},
		{subsecond.Range{Start: t0 + 5e9, End: t0 + 4e9}, subsecond.ErrInvalid},
		{subsecond.Range{Start: t0 + 100e9, End: t0 + 101e9}, subsecond.ErrEmptyRange},
		{subsecond.Range{Start: t0 - 10e9, End: t0 - 9e9}, subsecond.ErrEmptyRange},
	}
	for _, tt := range tests {
		if _, err := flame.Build(c, query.Filter{}, tt.r); !errors.Is(err, tt.want) {
			t.Errorf("Build(%+v) error = %v; want %v", tt.r, err, tt.want)
		}
	}
	if _, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: t0 + 100e9, End: t0 + 101e9}); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("range past the end: error %v; want it to say so", err)
	}
	empty := subsecond.NewBuilder().Capture(subsecond.Profile{})
	if _, err := flame.Build(empty, query.Filter{}, subsecond.Range{Start: 0, End: 1}); !errors.Is(err, subsecond.ErrEmptyRange) {
		t.Errorf("Build(empty profile) error = %v; want ErrEmptyRange", err)
	}
	g, err := flame.Build(c, query.Filter{Comm: "nobody"}, subsecond.Range{Start: t0, End: t0 + 10e9})
	if err != nil || g.Total != 0 || g.Len() != 1 {
		t.Errorf("Build(filter matching nothing) = %d nodes, total %d, %v; want the root alone", g.Len(), g.Total, err)
	}
	if _, err := flame.Build(c, query.Filter{Event: "nope"}, subsecond.Range{Start: t0, End: t0 + 1e9}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Build(event=nope) error = %v; want ErrInvalid", err)
	}
	var buf bytes.Buffer
	if err := g.Export(&buf, "png"); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Export(png) error = %v; want ErrInvalid", err)
	}
}

func TestSingleSample(t *testing.T) {
	b := subsecond.NewBuilder()
	b.Add(&subsecond.Sample{Comm: "one", PID: 1, TID: 1, CPU: 0, Time: 3e9, Event: "e",
		Frames: []subsecond.Frame{{Symbol: "leaf", Kind: subsecond.KindUser}, {Symbol: "main", Kind: subsecond.KindUser}}})
	c := b.Capture(subsecond.Profile{})
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: 3e9, End: 3e9 + 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	g.WriteFolded(&buf)
	if got := buf.String(); got != "one;main;leaf 1\n" {
		t.Errorf("folded = %q; want %q", got, "one;main;leaf 1\n")
	}
}

func TestDiff(t *testing.T) {
	ss, c := data(t)
	t0 := c.Profile.T0()
	base := subsecond.Range{Start: t0, End: t0 + 2e9}
	target := subsecond.Range{Start: t0 + 2e9, End: t0 + 5e9}
	for _, f := range filters[:3] {
		g, err := flame.Diff(c, f, base, target)
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, "diff", g)
		wantT, totT := reference(ss, f, target, true)
		wantB, totB := reference(ss, f, base, true)
		if g.Total != totT || g.BaseTotal != totB {
			t.Errorf("Diff totals = %d, %d; want %d, %d", g.Total, g.BaseTotal, totT, totB)
		}
		// Fold the base counts by path: a node's base self is base_n minus its children's.
		gotB := map[string]int64{}
		gotT := map[string]int64{}
		for i := 1; i < g.Len(); i++ {
			self := g.BaseN[i]
			for j := i + 1; j < g.Len() && g.Depth[j] > g.Depth[i]; j++ {
				if g.Parent[j] == int32(i) {
					self -= g.BaseN[j]
				}
			}
			p := g.Path(i)
			p[0] = symbol.Comm(p[0])
			key := strings.Join(p, ";")
			if self > 0 {
				gotB[key] += self
			}
			if g.SelfN[i] > 0 {
				gotT[key] += g.SelfN[i]
			}
		}
		diffMaps(t, "diff base", gotB, wantB)
		diffMaps(t, "diff target", gotT, wantT)
	}
	// The pegged CPU's memcg walk grew between the two ranges.
	g, _ := flame.Diff(c, query.Filter{}, base, target)
	var now, was int64
	for i := 0; i < g.Len(); i++ {
		if g.NameOf(i) == "mem_cgroup_nr_lru_pages" {
			now += g.TotalN[i]
			was += g.BaseN[i]
		}
	}
	if share, wasShare := float64(now)/float64(g.Total), float64(was)/float64(g.BaseTotal); share <= 2*wasShare {
		t.Errorf("mem_cgroup_nr_lru_pages share %v, base %v; want growth", share, wasShare)
	}
	for i := 0; i < g.Len(); i++ {
		want := float64(g.TotalN[i])/float64(g.Total) - float64(g.BaseN[i])/float64(g.BaseTotal)
		if d := g.Delta(i); d != want {
			t.Fatalf("Delta(%d) = %v; want %v", i, d, want)
		}
	}
	if d := g.Delta(0); d != 0 {
		t.Errorf("Delta(root) = %v; want 0", d)
	}
	// A base range whose samples the filter drops: base_total 0 is still written.
	var buf bytes.Buffer
	g, err := flame.Diff(c, query.Filter{Comm: "nobody"}, subsecond.Range{Start: t0, End: t0 + 1e9}, target)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteJSON(&buf); err != nil || !strings.Contains(buf.String(), `"base_total":0`) {
		t.Errorf("differential JSON with an empty base lacks base_total 0: %v", err)
	}
	if _, err := flame.Diff(c, query.Filter{}, subsecond.Range{Start: t0 + 100e9, End: t0 + 101e9}, target); !errors.Is(err, subsecond.ErrEmptyRange) {
		t.Errorf("Diff(base past the end) error = %v; want ErrEmptyRange", err)
	}
}

func TestJSON(t *testing.T) {
	_, c := data(t)
	t0 := c.Profile.T0()
	g, err := flame.Diff(c, query.Filter{}, subsecond.Range{Start: t0, End: t0 + 2e9}, subsecond.Range{Start: t0 + 2e9, End: t0 + 4e9})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.Export(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start_ns", "end_ns", "total", "strings", "kinds", "name", "dso", "kind", "depth", "total_n", "self_n", "base_total", "base_n"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, k := range []string{"name", "dso", "kind", "depth", "total_n", "self_n", "base_n"} {
		if a, ok := doc[k].([]any); !ok || len(a) != g.Len() {
			t.Errorf("JSON %q is not an array of %d", k, g.Len())
		}
	}
	kinds := doc["kinds"].([]any)
	if len(kinds) != 7 || kinds[5] != "comm" || kinds[6] != "root" || kinds[1] != "kernel" {
		t.Errorf("kinds = %v", kinds)
	}
	strs := doc["strings"].([]any)
	if name := doc["name"].([]any); strs[int(name[0].(float64))] != "all" {
		t.Errorf("node 0 is %v; want all", strs[int(name[0].(float64))])
	}
	if doc["total"].(float64) != float64(g.Total) || doc["start_ns"].(float64) != float64(t0+2e9) {
		t.Errorf("total %v start %v", doc["total"], doc["start_ns"])
	}
}

func TestPprof(t *testing.T) {
	ss, c := data(t)
	t0 := c.Profile.T0()
	r := subsecond.Range{Start: t0 + 1e9, End: t0 + 4e9}
	for _, f := range []query.Filter{{}, {Only: "kernel"}, {CPUs: []int32{1}}} {
		g, err := flame.Build(c, f, r)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := g.Export(&buf, "pprof"); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("read back: %v", err)
		}
		if len(p.SampleType) != 2 || p.SampleType[0].Type != "samples" || p.SampleType[0].Unit != "count" ||
			p.SampleType[1].Type != "cpu" || p.SampleType[1].Unit != "nanoseconds" {
			t.Errorf("sample types = %v %v", p.SampleType[0], p.SampleType[1])
		}
		if p.TimeNanos != 0 || p.DurationNanos != r.End-r.Start || !slices.Contains(p.Comments, "range: 1–4 s (3 s) from T0 of "+c.Profile.Name) {
			t.Errorf("time %d duration %d comments %q; want no time (no wall clock), %d and the range", p.TimeNanos, p.DurationNanos, p.Comments, r.End-r.Start)
		}
		want, total := reference(ss, f, r)
		var wantNS int64
		perCPU := map[int64]int64{}
		for i := range ss {
			if r.Contains(ss[i].Time) && synth.Keep(&ss[i], f, "cpu-clock") {
				wantNS += int64(ss[i].Period)
				perCPU[int64(ss[i].CPU)]++
			}
		}
		got := map[string]int64{}
		gotCPU := map[int64]int64{}
		var n, ns int64
		for _, s := range p.Sample {
			n += s.Value[0]
			ns += s.Value[1]
			parts := []string{symbol.Comm(s.Label["comm"][0])}
			for i := len(s.Location) - 1; i >= 0; i-- {
				for j := len(s.Location[i].Line) - 1; j >= 0; j-- {
					parts = append(parts, s.Location[i].Line[j].Function.Name)
				}
			}
			got[strings.Join(parts, ";")] += s.Value[1]
			if len(s.Label["cpu"]) != 1 || len(s.Label["pid"]) != 1 || len(s.Label["tid"]) != 1 {
				t.Fatalf("sample labels = %v; want cpu, pid, tid", s.Label)
			}
			cpu, _ := strconv.ParseInt(s.Label["cpu"][0], 10, 64)
			gotCPU[cpu] += s.Value[0]
		}
		if n != total || ns != wantNS {
			t.Errorf("%v: pprof totals %d samples, %d ns; want %d, %d", f, n, ns, total, wantNS)
		}
		diffMaps(t, "pprof stacks", got, want)
		if fmt.Sprint(gotCPU) != fmt.Sprint(perCPU) {
			t.Errorf("pprof per-CPU counts %v; want %v", gotCPU, perCPU)
		}
	}

	// With a wall clock, the profile's time is the range's start on it.
	c.Profile.Wall = subsecond.WallClock{Offset: 1_764_460_800e9, Source: subsecond.WallRealtime}
	g, err := flame.Build(c, query.Filter{}, r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Start + 1_764_460_800e9; p.TimeNanos != want {
		t.Errorf("pprof time with a wall clock = %d; want %d", p.TimeNanos, want)
	}
}

// TestPprofSampleWithoutCommand checks the export of samples whose header
// perf script printed without a command name: the empty name is string 0,
// which a label holds by leaving its field out, and the profile must still
// read back, with the sample's other labels.
func TestPprofSampleWithoutCommand(t *testing.T) {
	text := "   123/124 [001] 100.000000: 1 cpu-clock:\n\tffffffff81000000 do_idle+0x1 ([kernel.kallsyms])\n\n" +
		"   123/124 [001] 100.100000: 1 cpu-clock:\n\tffffffff81000000 do_idle+0x1 ([kernel.kallsyms])\n\n"
	c, err := synth.Parse([]byte(text), parser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if len(p.Sample) != 1 {
		t.Fatalf("%d samples; want 1", len(p.Sample))
	}
	s := p.Sample[0]
	if s.Value[0] != 2 || len(s.Location) != 1 || s.Location[0].Line[0].Function.Name != "do_idle" {
		t.Errorf("sample %v at %v; want 2 samples of do_idle", s.Value, s.Location)
	}
	if got := s.Label["pid"]; len(got) != 1 || got[0] != "123" {
		t.Errorf("pid label %q; want 123", got)
	}
}

func TestSVG(t *testing.T) {
	_, c := data(t)
	t0 := c.Profile.T0()
	for _, diff := range []bool{false, true} {
		var g *flame.Graph
		var err error
		if diff {
			g, err = flame.Diff(c, query.Filter{Idle: true}, subsecond.Range{Start: t0, End: t0 + 2e9}, subsecond.Range{Start: t0 + 2e9, End: t0 + 5e9})
		} else {
			g, err = flame.Build(c, query.Filter{Idle: true}, subsecond.Range{Start: t0, End: t0 + 10e9})
		}
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := g.Export(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		// Well-formed XML, one script, frames with their names as text.
		dec := xml.NewDecoder(strings.NewReader(svg))
		scripts, frames := 0, 0
		names := map[string]bool{}
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				switch se.Name.Local {
				case "script":
					scripts++
				case "g":
					for _, a := range se.Attr {
						if a.Name.Local == "data-name" {
							frames++
							names[a.Value] = true
						}
					}
				}
			}
		}
		if scripts != 1 {
			t.Errorf("SVG has %d scripts; want 1", scripts)
		}
		// Frames are as wide as their share; in a differential graph a
		// frame only the base has keeps its base share, and the root spans
		// every frame below it.
		drawn := 0
		var gone float64
		for i := 1; i < g.Len(); i++ {
			if g.TotalN[i] == 0 && g.TotalN[g.Parent[i]] > 0 {
				gone += float64(g.BaseN[i]) / float64(g.BaseTotal)
			}
		}
		for i := 0; i < g.Len(); i++ {
			share := float64(g.TotalN[i]) / float64(g.Total)
			if diff && g.TotalN[i] == 0 {
				share = float64(g.BaseN[i]) / float64(g.BaseTotal)
			}
			if share/(1+gone)*1180 >= 0.1 {
				drawn++
			}
		}
		if diff && gone == 0 {
			t.Error("the differential test ranges have no frame only in the base")
		}
		if frames != drawn {
			t.Errorf("SVG has %d frames; want %d", frames, drawn)
		}
		for _, n := range []string{"all", `<script>alert`, "a:b&c", "[libc.so.6]", evilComm, "mem_cgroup_nr_lru_pages"} {
			if !names[n] {
				t.Errorf("SVG lacks a frame named %q", n)
			}
		}
		if strings.Contains(svg, "<script>alert") || strings.Contains(svg, "<b>") {
			t.Error("a hostile name reached the SVG unescaped")
		}
		for _, ext := range []string{"href=", "src=", "@import", "url("} {
			if strings.Contains(svg, ext) {
				t.Errorf("SVG refers to an external resource: %q", ext)
			}
		}
		if diff != strings.Contains(svg, "rgb(255,") && diff {
			t.Error("differential SVG has no growth colour")
		}
		if diff && (!strings.Contains(svg, "rgb(245,245,245)") || !strings.Contains(svg, "; no significant change") || !strings.Contains(svg, "; significant change, z ")) {
			t.Error("differential SVG lacks the neutral colour of changes that are not significant, or the significance of changes")
		}
		if diff {
			// The other way round the memcg walk shrank: the shrink colour.
			rev, err := flame.Diff(c, query.Filter{Idle: true}, subsecond.Range{Start: t0 + 2e9, End: t0 + 5e9}, subsecond.Range{Start: t0, End: t0 + 2e9})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rev.WriteSVG(&buf, flame.SVGOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), ",255)") || strings.Contains(buf.String(), "rgb(255,") {
				t.Error("differential SVG of a shrinking walk lacks the shrink colour, or shows growth")
			}
		}
	}
}

// TestFoldedEqualsCollapse checks the folded export against package
// folded, which `subsecond collapse` prints: same samples, same text.
func TestFoldedEqualsCollapse(t *testing.T) {
	ss, c := data(t)
	ss = append(ss, synth.Labeled{Sample: subsecond.Sample{Comm: "java", PID: 5, TID: 5, CPU: 0, Time: c.Samples.Time[0], Event: "cpu-clock",
		Frames: []subsecond.Frame{{Symbol: "Lcom/example/Foo;::bar", DSO: "/tmp/perf-5.map", Kind: subsecond.KindJIT}, {Symbol: "a->b", DSO: "/bin/java", Kind: subsecond.KindUser}}}})
	c = synth.Capture(ss)
	col := folded.New(folded.Options{})
	for i := range ss {
		col.Add(&ss[i].Sample)
	}
	var want, got bytes.Buffer
	if _, err := col.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	g, err := flame.Build(c, query.Filter{Idle: true}, subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteFolded(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("folded export differs from collapse at line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("folded export has %d lines; collapse %d", len(gl), len(wl))
	}
	if !strings.Contains(got.String(), "java;a;b_[i];com/example/Foo:::bar ") {
		t.Errorf("folded export lacks the java stack:\n%s", got.String())
	}
}

// TestRealCaptureFoldedEqualsCollapse checks the index-based graph of the
// committed 12 s real capture (deep stacks and JIT frames from a real perf
// record) against
// package folded's independent collapse of the same text, and that every
// range's counts add up to an independent per-sample count.
func TestRealCaptureFoldedEqualsCollapse(t *testing.T) {
	text := realText(t)
	col := folded.New(folded.Options{})
	sc := parser.NewScanner(bytes.NewReader(text), parser.Options{})
	b := subsecond.NewBuilder()
	for sc.Scan() {
		col.Add(sc.Sample())
		b.Add(sc.Sample())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	c := b.Capture(subsecond.Profile{})
	var want, got bytes.Buffer
	if _, err := col.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	whole := subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1}
	// Collapse keeps every event; the capture has one.
	if len(c.Profile.Events) != 1 {
		t.Fatalf("real capture has events %v; want one", c.Profile.Events)
	}
	g, err := flame.Build(c, query.Filter{Idle: true}, whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteFolded(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("folded export of the real capture differs from collapse:\n%s", firstDiff(got.String(), want.String()))
	}
	if g.Total != c.Profile.Samples {
		t.Errorf("whole-capture Total = %d; want %d", g.Total, c.Profile.Samples)
	}
	// Sub-ranges: the root's total is the number of samples in the range
	// that the filter keeps, counted sample by sample.
	for _, f := range []query.Filter{{}, {Only: "kernel"}, {CPUs: []int32{1}, Function: "^(__)?x64_sys|gzip"}} {
		m, err := f.Compile(c)
		if err != nil {
			t.Fatal(err)
		}
		for s := whole.Start; s < whole.End; s += 700e6 {
			r := subsecond.Range{Start: s, End: s + 1e9}
			var n int64
			for i := range c.Samples.Time {
				if r.Contains(c.Samples.Time[i]) && m.Keep(i) {
					n++
				}
			}
			g, err := flame.Build(c, f, r)
			if errors.Is(err, subsecond.ErrEmptyRange) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Total != n {
				t.Errorf("%v [%d, %d): Total = %d; want %d", f.Values(), r.Start-whole.Start, r.End-whole.Start, g.Total, n)
			}
			checkTree(t, "real", g)
		}
	}
}

// realText returns the text of the committed 12 s real capture.
func realText(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open("../sample-data/real-mixed-2cpu-12s.perf.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("%d lines; want %d", len(gl), len(wl))
}

// TestConcurrentQueries builds graphs under every Only setting from many
// goroutines on a fresh capture, so that the per-capture indexes are built
// while queried (run with -race), and checks them against serial builds.
func TestConcurrentQueries(t *testing.T) {
	ss, _ := data(t)
	fresh := synth.Capture(ss)
	serial := synth.Capture(ss)
	t0 := serial.Profile.T0()
	r := subsecond.Range{Start: t0 + 1e9, End: t0 + 6e9}
	only := []string{"", "kernel", "user"}
	want := make([]string, len(only))
	for i, o := range only {
		g, err := flame.Build(serial, query.Filter{Only: o}, r)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		g.WriteJSON(&buf)
		want[i] = buf.String()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for k := 0; k < 24; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			i := k % len(only)
			g, err := flame.Build(fresh, query.Filter{Only: only[i]}, r)
			if err != nil {
				errs <- err
				return
			}
			var buf bytes.Buffer
			g.WriteJSON(&buf)
			if buf.String() != want[i] {
				errs <- fmt.Errorf("only=%q: concurrent graph differs from the serial one", only[i])
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// names names a frame as flame graphs do: no annotations.
func names(sym, dso string, java bool) []string {
	return symbol.Names(sym, dso, "", 0, subsecond.KindUnknown, java, symbol.Options{})
}
