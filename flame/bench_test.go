package flame_test

import (
	"io"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// Targets on the 96-CPU × 120 s × 49 Hz capture: a range flame graph
// ≤ 20 ms for 1 s, ≤ 50 ms for 10 s, ≤ 200 ms for the whole capture.
// Run: go test -run '^$' -bench . -benchtime 20x ./flame
func BenchmarkBuild(b *testing.B) {
	c := synth.Bench()
	t0 := c.Profile.T0()
	for _, tc := range []struct {
		name string
		r    subsecond.Range
		f    query.Filter
	}{
		{"1s", subsecond.Range{Start: t0 + 30e9, End: t0 + 31e9}, query.Filter{}},
		{"10s", subsecond.Range{Start: t0 + 30e9, End: t0 + 40e9}, query.Filter{}},
		{"whole", subsecond.Range{Start: t0, End: t0 + 121e9}, query.Filter{}},
		{"whole_idle", subsecond.Range{Start: t0, End: t0 + 121e9}, query.Filter{Idle: true}},
		{"10s_kernel_function", subsecond.Range{Start: t0 + 30e9, End: t0 + 40e9}, query.Filter{Only: "kernel", Function: "vfs_"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			synth.Latency(b, func() error { _, err := flame.Build(c, tc.f, tc.r); return err })
		})
	}
}

func BenchmarkExport(b *testing.B) {
	c := synth.Bench()
	t0 := c.Profile.T0()
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: t0 + 30e9, End: t0 + 40e9})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("10 s graph: %d nodes, %d samples", g.Len(), g.Total)
	for _, format := range flame.FormatNames() {
		b.Run(format, func(b *testing.B) {
			synth.Latency(b, func() error { return g.Export(io.Discard, format) })
		})
	}
}
