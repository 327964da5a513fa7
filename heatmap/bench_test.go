package heatmap_test

import (
	"testing"

	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// Targets on the 96-CPU × 120 s × 49 Hz capture: any heatmap or cores map
// ≤ 50 ms, hot spots ≤ 200 ms. Run: go test -run '^$' -bench . -benchtime 20x ./heatmap
func BenchmarkOffset(b *testing.B) {
	c := synth.Bench()
	for _, tc := range []struct {
		name string
		f    query.Filter
		o    heatmap.Options
	}{
		{"all", query.Filter{}, heatmap.Options{}},
		{"idle", query.Filter{Idle: true}, heatmap.Options{}},
		{"cpu", query.Filter{CPUs: []int32{17}}, heatmap.Options{}},
		{"function", query.Filter{Function: "mem_cgroup"}, heatmap.Options{}},
		{"comm_regex+only", query.Filter{CommRegex: "^python", Only: "kernel"}, heatmap.Options{}},
		{"rows1000_col0.1", query.Filter{}, heatmap.Options{Col: 100e6, Rows: 1000}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			synth.Latency(b, func() error { _, err := heatmap.Offset(c, tc.f, tc.o); return err })
		})
	}
}

func BenchmarkPerCore(b *testing.B) {
	c := synth.Bench()
	for _, tc := range []struct {
		name   string
		f      query.Filter
		bucket int64
	}{
		{"all", query.Filter{}, 0},
		{"function", query.Filter{Function: "mem_cgroup"}, 0},
		{"pid_only", query.Filter{PIDs: []int32{1000}, Only: "user"}, 0},
		{"bucket0.01", query.Filter{}, 10e6},
	} {
		b.Run(tc.name, func(b *testing.B) {
			synth.Latency(b, func() error { _, err := heatmap.PerCore(c, tc.f, tc.bucket); return err })
		})
	}
}

func BenchmarkHotspots(b *testing.B) {
	c := synth.Bench()
	synth.Latency(b, func() error { _, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{}); return err })
}
