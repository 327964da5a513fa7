package heatmap_test

import (
	"testing"

	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// BenchmarkGenerated runs the views on the shared generator's default
// incident (96 CPUs × 120 s × 49 Hz, parsed from its perf script text):
// heatmaps and cores map ≤ 50 ms, hot spots ≤ 200 ms.
// Run: go test -run '^$' -bench Generated -benchtime 20x ./heatmap
func BenchmarkGenerated(b *testing.B) {
	c, _, err := synth.Generated()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"offset", func() error { _, err := heatmap.Offset(c, query.Filter{}, heatmap.Options{}); return err }},
		{"offset_cpu_function", func() error {
			_, err := heatmap.Offset(c, query.Filter{CPUs: []int32{39}, Function: "mem_cgroup"}, heatmap.Options{})
			return err
		}},
		{"offset_comm_regex_kernel", func() error {
			_, err := heatmap.Offset(c, query.Filter{CommRegex: "^pt_", Only: "kernel"}, heatmap.Options{})
			return err
		}},
		{"cores", func() error { _, err := heatmap.PerCore(c, query.Filter{}, 0); return err }},
		{"cores_idle", func() error { _, err := heatmap.PerCore(c, query.Filter{Idle: true}, 0); return err }},
		{"hotspots", func() error { _, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{}); return err }},
		{"hotspots_system", func() error {
			_, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Measure: heatmap.MeasureSystem})
			return err
		}},
		// A narrowing filter adds the pass that finds the cores it hides.
		{"hotspots_only_kernel", func() error {
			_, err := heatmap.Hotspots(c, query.Filter{Only: "kernel"}, heatmap.HotOptions{})
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) { synth.Latency(b, tc.fn) })
	}
}
