package flame_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// diffFolded joins two folded exports the way flamegraph.pl's
// difffolded.pl does: every stack of either, "stack base target".
func diffFolded(t *testing.T, base, target *flame.Graph) string {
	t.Helper()
	var b, g bytes.Buffer
	if err := base.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	if err := target.WriteFolded(&g); err != nil {
		t.Fatal(err)
	}
	bm, tm := parseFolded(t, &b), parseFolded(t, &g)
	keys := map[string]bool{}
	for k := range bm {
		keys[k] = true
	}
	for k := range tm {
		keys[k] = true
	}
	var lines []string
	for k := range keys {
		lines = append(lines, fmt.Sprintf("%s %d %d\n", k, bm[k], tm[k]))
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// splitCapture puts the samples before cut in one capture and the rest in
// another, as two captures of one host would hold them.
func splitCapture(ss []synth.Labeled, cut int64) (before, after *subsecond.Capture) {
	var a, b []synth.Labeled
	for _, s := range ss {
		if s.Time < cut {
			a = append(a, s)
		} else {
			b = append(b, s)
		}
	}
	before, after = synth.Capture(a), synth.Capture(b)
	before.Profile.ID, after.Profile.ID = "before", "after"
	return before, after
}

// byPath returns each node's counts keyed by its path of names.
func byPath(g *flame.Graph) map[string][4]int64 {
	out := map[string][4]int64{}
	for i := 0; i < g.Len(); i++ {
		k := strings.Join(g.Path(i), ";")
		v := out[k]
		v[0] += g.TotalN[i]
		v[1] += g.SelfN[i]
		v[2] += g.BaseN[i]
		v[3] += g.BaseSelfN[i]
		out[k] = v
	}
	return out
}

// diffCase is a differential test's input: the test capture, its first
// 2 s as the base and the next 3 s (the pegged CPU's walk) as the target,
// and the capture split at 2 s into two captures.
type diffCase struct {
	c, before, after *subsecond.Capture
	base, target     subsecond.Range
}

func newDiffCase(t *testing.T) diffCase {
	ss, c := data(t)
	t0 := c.Profile.T0()
	before, after := splitCapture(ss, t0+2e9)
	return diffCase{c, before, after, subsecond.Range{Start: t0, End: t0 + 2e9}, subsecond.Range{Start: t0 + 2e9, End: t0 + 5e9}}
}

// graphs returns the differential graph of the case under f, from the one
// capture (Diff) and from the two halves (DiffProfiles).
func (dc diffCase) graphs(t *testing.T, f query.Filter) map[string]*flame.Graph {
	t.Helper()
	same, err := flame.Diff(dc.c, f, dc.base, dc.target)
	if err != nil {
		t.Fatal(err)
	}
	two, err := flame.DiffProfiles(dc.after, dc.before, f, dc.base, dc.target)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*flame.Graph{"one capture": same, "two captures": two}
}

func TestDiffFoldedIsDifffolded(t *testing.T) {
	dc := newDiffCase(t)
	c, before, after, base, target := dc.c, dc.before, dc.after, dc.base, dc.target
	for _, f := range []query.Filter{{}, {Only: "kernel"}, {CPUs: []int32{2}, Idle: true}} {
		bg, err := flame.Build(c, f, base)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := flame.Build(c, f, target)
		if err != nil {
			t.Fatal(err)
		}
		want := diffFolded(t, bg, tg)
		graphs := dc.graphs(t, f)
		same, two := graphs["one capture"], graphs["two captures"]
		for name, g := range graphs {
			var got bytes.Buffer
			if err := g.Export(&got, "folded"); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Errorf("%s, %v: differential folded export differs from difffolded of the two ranges:\n%s", name, f.Values(), firstDiff(got.String(), want))
			}
			checkTree(t, name, g)
		}
		if f.Only == "" && (!strings.Contains(want, " 0 ") || !strings.Contains(want, " 0\n")) {
			t.Errorf("%v: the test ranges have no stack missing from one side", f.Values())
		}
		// The union of two captures' graphs has the same counts on the same
		// paths as the one capture's differential graph.
		sp, tp := byPath(same), byPath(two)
		if len(sp) != len(tp) {
			t.Errorf("%v: %d paths across two captures; want %d", f.Values(), len(tp), len(sp))
		}
		for k, v := range sp {
			if tp[k] != v {
				t.Errorf("%v: %q = %v across two captures; want %v", f.Values(), k, tp[k], v)
			}
		}
		if two.Total != same.Total || two.BaseTotal != same.BaseTotal {
			t.Errorf("%v: totals %d, %d across two captures; want %d, %d", f.Values(), two.Total, two.BaseTotal, same.Total, same.BaseTotal)
		}
	}
	if _, err := flame.DiffProfiles(after, before, query.Filter{}, target, target); err == nil || !strings.Contains(err.Error(), "base profile before") {
		t.Errorf("DiffProfiles with a base range outside the base capture: error %v; want one naming the base profile", err)
	}
}

// stackValues sums a profile's sample values by stack (function names
// root-first) and whether the sample carries pprof::base.
func stackValues(p *profile.Profile) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			for j := len(s.Location[i].Line) - 1; j >= 0; j-- {
				names = append(names, s.Location[i].Line[j].Function.Name)
			}
		}
		k := s.Label["comm"][0] + ";" + strings.Join(names, ";")
		if len(s.Label["pprof::base"]) > 0 {
			k = "base:" + k
		}
		v := out[k]
		v[0] += s.Value[0]
		v[1] += s.Value[1]
		out[k] = v
	}
	return out
}

// TestDiffPprofIsDiffBase checks the differential pprof export against
// what `go tool pprof -diff_base` builds from the two ranges' own exports:
// the base scaled by -1, labelled pprof::base=true, merged with the target.
func TestDiffPprofIsDiffBase(t *testing.T) {
	dc := newDiffCase(t)
	c, base, target := dc.c, dc.base, dc.target
	f := query.Filter{Only: "kernel"}
	read := func(g *flame.Graph) *profile.Profile {
		t.Helper()
		var buf bytes.Buffer
		if err := g.Export(&buf, "pprof"); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bg, _ := flame.Build(c, f, base)
	tg, _ := flame.Build(c, f, target)
	bp, tp := read(bg), read(tg)
	bp.Scale(-1)
	bp.SetLabel("pprof::base", []string{"true"})
	want, err := profile.Merge([]*profile.Profile{tp, bp})
	if err != nil {
		t.Fatal(err)
	}
	wv := stackValues(want)
	for name, g := range dc.graphs(t, f) {
		gv := stackValues(read(g))
		if len(gv) != len(wv) {
			t.Errorf("%s: %d stacks; want %d", name, len(gv), len(wv))
		}
		neg := 0
		for k, v := range wv {
			if gv[k] != v {
				t.Errorf("%s: %q = %v; want %v", name, k, gv[k], v)
			}
			if v[0] < 0 {
				neg++
			}
		}
		if neg == 0 {
			t.Errorf("%s: no negated base samples", name)
		}
	}
}
