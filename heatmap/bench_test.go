package heatmap_test

import (
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
)

// Targets on the 96-CPU × 120 s × 49 Hz capture: any heatmap or cores map
// ≤ 50 ms, hot spots ≤ 200 ms. Run: go test -run '^$' -bench . -benchtime 20x ./heatmap
func BenchmarkOffset(b *testing.B) {
	c := synth.Bench()
	for _, tc := range []struct {
		name string
		f    subsecond.Filter
		o    heatmap.Options
	}{
		{"all", subsecond.Filter{}, heatmap.Options{}},
		{"idle", subsecond.Filter{Idle: true}, heatmap.Options{}},
		{"cpu", subsecond.Filter{CPUs: []int32{17}}, heatmap.Options{}},
		{"function", subsecond.Filter{Function: "mem_cgroup"}, heatmap.Options{}},
		{"comm_regex+only", subsecond.Filter{CommRegex: "^python", Only: "kernel"}, heatmap.Options{}},
		{"rows1000_col0.1", subsecond.Filter{}, heatmap.Options{Col: 100e6, Rows: 1000}},
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
		f      subsecond.Filter
		bucket int64
	}{
		{"all", subsecond.Filter{}, 0},
		{"function", subsecond.Filter{Function: "mem_cgroup"}, 0},
		{"pid_only", subsecond.Filter{PIDs: []int32{1000}, Only: "user"}, 0},
		{"bucket0.01", subsecond.Filter{}, 10e6},
	} {
		b.Run(tc.name, func(b *testing.B) {
			synth.Latency(b, func() error { _, err := heatmap.PerCore(c, tc.f, tc.bucket); return err })
		})
	}
}

func BenchmarkHotspots(b *testing.B) {
	c := synth.Bench()
	synth.Latency(b, func() error { _, err := heatmap.Hotspots(c, subsecond.Filter{}, heatmap.HotOptions{}); return err })
}
