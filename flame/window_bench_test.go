package flame_test

import (
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
)

// BenchmarkWindowGraph times a range flame graph of 5 s of the bundled
// incident as a server draws one from a window of a capture not in its
// cache (store.CaptureWindow): a fresh capture holding those seconds'
// samples alone and sharing the profile's tables with its other windows,
// so that nothing derived from an earlier window is reused.
func BenchmarkWindowGraph(b *testing.B) {
	c := bundledIncident(b)
	t0 := c.Profile.T0()
	r := subsecond.Range{Start: t0 + 40e9, End: t0 + 45e9}
	lo, _ := slices.BinarySearch(c.Samples.Time, r.Start)
	hi, _ := slices.BinarySearch(c.Samples.Time, r.End)
	var win subsecond.Columns
	win.AppendRange(&c.Samples, lo, hi)
	b.ReportAllocs()
	for b.Loop() {
		fresh := &subsecond.Capture{Profile: c.Profile, Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes, Samples: win}
		if _, err := flame.Build(fresh, query.Filter{}, r); err != nil {
			b.Fatal(err)
		}
	}
}
