package flame_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/symbol"
)

// TestStackSamples checks every sample the stack chart gets against the
// generated samples: the same multiset of (time, CPU, TID, comm, folded
// stack), the stack read by walking the flame graph of the same range up
// from the sample's leaf, in time order.
func TestStackSamples(t *testing.T) {
	ss, c := data(t)
	t0 := c.Profile.T0()
	for _, r := range []subsecond.Range{{Start: t0, End: t0 + 10e9}, {Start: t0 + 2_500_000_000, End: t0 + 2_900_000_000}} {
		for _, f := range filters {
			name := fmt.Sprintf("[%d, %d) %s", r.Start-t0, r.End-t0, f.Values().Encode())
			s, n, err := flame.StackSamples(c, f, r, 1<<30)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			g, err := flame.Build(c, f, r)
			if err != nil {
				t.Fatal(err)
			}
			if s.Nodes != g.Len() || n != s.Count || len(s.Leaf) != n || int64(n) != g.Total {
				t.Fatalf("%s: nodes %d, count %d/%d, leaves %d; want nodes %d and count %d", name, s.Nodes, s.Count, n, len(s.Leaf), g.Len(), g.Total)
			}
			var got, want []string
			for i := range s.Leaf {
				if i > 0 && s.Time[i] < s.Time[i-1] {
					t.Fatalf("%s: sample %d at %d before sample %d at %d", name, i, s.Time[i], i-1, s.Time[i-1])
				}
				path := g.Path(int(s.Leaf[i]))
				path[0] = symbol.Comm(path[0]) // as folded stacks spell it
				got = append(got, fmt.Sprintf("%d %d %d %s %s", s.Start+s.Time[i], s.CPU[i], s.TID[i], s.Strings[s.Comm[i]], strings.Join(path, ";")))
			}
			for i := range ss {
				if r.Contains(ss[i].Time) && synth.Keep(&ss[i], f, "cpu-clock") {
					x := &ss[i].Sample
					want = append(want, fmt.Sprintf("%d %d %d %s %s", x.Time, x.CPU, x.TID, x.Comm, synth.Folded(&ss[i], f, names)))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("%s: %d samples, want %d; first difference:\n got %s\nwant %s", name, len(got), len(want), got[i], want[i])
					}
				}
				t.Fatalf("%s: %d samples; want %d", name, len(got), len(want))
			}
		}
	}
}

// TestStackSamplesLimit checks that a range with more samples than the
// limit yields their number and no samples.
func TestStackSamplesLimit(t *testing.T) {
	_, c := data(t)
	r := subsecond.Range{Start: c.Profile.T0(), End: c.Profile.T0() + 10e9}
	all, n, err := flame.StackSamples(c, query.Filter{}, r, 1<<30)
	if err != nil || n == 0 {
		t.Fatalf("StackSamples = %d, %v", n, err)
	}
	for _, limit := range []int{n, n - 1, 0} {
		s, got, err := flame.StackSamples(c, query.Filter{}, r, limit)
		if err != nil || got != n || (s != nil) != (limit >= n) {
			t.Errorf("StackSamples(limit %d) = %v, %d, %v; want samples only within the limit, and count %d", limit, s != nil, got, err, n)
		}
		if s != nil && !slices.Equal(s.Leaf, all.Leaf) {
			t.Errorf("StackSamples(limit %d) leaves differ from the unlimited ones", limit)
		}
	}
	if _, _, err := flame.StackSamples(c, query.Filter{}, subsecond.Range{Start: r.End + 100e9, End: r.End + 101e9}, 10); err == nil {
		t.Error("StackSamples past the end: no error")
	}
}
