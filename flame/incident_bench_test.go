package flame_test

import (
	"io"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// BenchmarkGenerated builds flame graphs of the shared generator's default
// incident (96 CPUs × 120 s × 49 Hz): ≤ 20 ms for 1 s, ≤ 50 ms for 10 s,
// ≤ 200 ms for the whole capture.
// Run: go test -run '^$' -bench Generated -benchtime 20x ./flame
func BenchmarkGenerated(b *testing.B) {
	c, truth, err := synth.Generated()
	if err != nil {
		b.Fatal(err)
	}
	t0 := c.Profile.T0()
	w := truth.Incidents[0]
	for _, tc := range []struct {
		name string
		r    subsecond.Range
		f    query.Filter
	}{
		{"1s", subsecond.Range{Start: w.StartNS, End: w.StartNS + 1e9}, query.Filter{}},
		{"10s", subsecond.Range{Start: w.StartNS, End: w.StartNS + 10e9}, query.Filter{}},
		{"whole", subsecond.Range{Start: t0, End: c.Profile.End + 1}, query.Filter{}},
		{"whole_idle", subsecond.Range{Start: t0, End: c.Profile.End + 1}, query.Filter{Idle: true}},
		{"10s_cpu", subsecond.Range{Start: w.StartNS, End: w.StartNS + 10e9}, query.Filter{CPUs: []int32{int32(w.CPU)}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			synth.Latency(b, func() error { _, err := flame.Build(c, tc.f, tc.r); return err })
		})
	}
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: w.StartNS, End: w.StartNS + 10e9})
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range flame.FormatNames() {
		b.Run("export_10s_"+format, func(b *testing.B) {
			synth.Latency(b, func() error { return g.Export(io.Discard, format) })
		})
	}
}
