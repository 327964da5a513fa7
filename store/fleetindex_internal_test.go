package store

import (
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/synth"
)

// BenchmarkExpandNames expands the bundled real capture's (stack node,
// command) pairs per slot into its commands', functions' and call edges'
// counts, the CPU part of its fleet index (7,500 names for 5,000 samples).
func BenchmarkExpandNames(b *testing.B) {
	c, err := synth.Real()
	if err != nil {
		b.Fatal(err)
	}
	t0 := c.Profile.T0()
	var pairs []map[uint64]int64
	for i, ev := range c.Samples.Event {
		if ev != 0 || c.Samples.Time[i] == subsecond.NoTime {
			continue
		}
		slot := int((c.Samples.Time[i] - t0) / subsecond.IndexSlot)
		for len(pairs) <= slot {
			pairs = append(pairs, map[uint64]int64{})
		}
		pairs[slot][uint64(c.Samples.Stack[i])<<32|uint64(c.Samples.Comm[i])]++
	}
	t := indexTables{strings: c.Strings, frames: c.Frames, nodes: c.Nodes}
	var names int
	for b.Loop() {
		names = len(expandNames(pairs, t))
	}
	b.ReportMetric(float64(names), "names")
}
