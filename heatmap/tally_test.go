package heatmap_test

import (
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/query"
)

// TestTallyDescribesAsHotspots: a tally of a hot spot's range, added in
// two parts as across a rotation point, names what Hotspots names there
// and counts what the range holds.
func TestTallyDescribesAsHotspots(t *testing.T) {
	c := peggedCapture(t)
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Measure: heatmap.MeasureSystem})
	if err != nil {
		t.Fatal(err)
	}
	s := ddSpot(rep)
	if s == nil {
		t.Fatal("no hot spot on CPU 1")
	}
	tl := heatmap.NewTally(1)
	mid := (s.Start + s.End) / 2
	for _, r := range []subsecond.Range{{Start: s.Start, End: mid}, {Start: mid, End: s.End}} {
		if err := tl.Add(c, r); err != nil {
			t.Fatal(err)
		}
	}
	comm, _, fn, _, stack, _ := tl.Describe()
	if comm != s.Comm || fn != s.Function || stack != s.Stack {
		t.Errorf("tally names %s, %s, %s; Hotspots %s, %s, %s", comm, fn, stack, s.Comm, s.Function, s.Stack)
	}
	if tl.Busy != s.Samples {
		t.Errorf("tally counts %d busy samples; the hot spot %d", tl.Busy, s.Samples)
	}
	var all, sys int64
	cl := subsecond.ClassesOf(c)
	lo, hi := c.Window(subsecond.Range{Start: s.Start, End: s.End})
	for i := lo; i < hi; i++ {
		if c.Samples.CPU[i] == 1 {
			all++
			if _, y := cl.Nodes[c.Samples.Stack[i]].Time(cl.Idle(i)); y {
				sys++
			}
		}
	}
	if tl.Samples != all || tl.System != sys {
		t.Errorf("tally counts %d samples, %d system; the range holds %d, %d", tl.Samples, tl.System, all, sys)
	}
}
