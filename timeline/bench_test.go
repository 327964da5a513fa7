package timeline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
)

// memSource is a night of summaries in memory: captures two minutes long,
// every CPU sampled at 49 Hz, a third of them busy, CPU 39 pegged in the
// kernel for 5 s every 40 minutes.
type memSource struct {
	ps    []subsecond.Profile
	sums  map[string][]subsecond.ChunkSummary
	rolls map[string]*subsecond.Rollup
}

func newMemSource(cpus, captures int) *memSource {
	m := &memSource{sums: map[string][]subsecond.ChunkSummary{}, rolls: map[string]*subsecond.Rollup{}}
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range captures {
		id := fmt.Sprintf("c%03d", i)
		t0 := start + int64(i)*int64(2*time.Minute)
		m.ps = append(m.ps, subsecond.Profile{ID: id, Host: "node-1", Start: t0, End: t0 + int64(2*time.Minute) - int64(time.Second)/49,
			Samples: int64(cpus * 49 * 120), CPUs: cpus, FrequencyHz: 49, Wall: subsecond.WallClock{Source: subsecond.WallRealtime}})
		sums := make([]subsecond.ChunkSummary, 120)
		for s := range sums {
			sec := t0 + int64(s)*int64(time.Second)
			sums[s].Start = sec
			for cpu := range cpus {
				n := subsecond.Counts{Samples: 49, Busy: 16, System: 4}
				if cpu == 39 && (sec-start)%int64(40*time.Minute) < int64(5*time.Second) {
					n = subsecond.Counts{Samples: 49, Busy: 49, System: 49}
				}
				sums[s].CPUs = append(sums[s].CPUs, subsecond.CPUCount{CPU: int32(cpu), Counts: n})
			}
			sums[s].Comms = []subsecond.CommCount{{Comm: "kubelet", Counts: subsecond.Counts{Samples: 10, Busy: 10, System: 10}}, {Comm: "swapper", Counts: subsecond.Counts{Samples: int64(cpus*49 - 10 - cpus*16), Busy: 0}}, {Comm: "trainer", Counts: subsecond.Counts{Samples: int64(cpus * 16), Busy: int64(cpus * 16)}}}
		}
		m.sums[id] = sums
		m.rolls[id] = subsecond.NewRollup(sums)
	}
	return m
}

func (m *memSource) HostProfiles(_ context.Context, host string) ([]subsecond.Profile, error) {
	var out []subsecond.Profile
	for _, p := range m.ps {
		if p.Host == host {
			out = append(out, p)
		}
	}
	return out, nil
}
func (m *memSource) Rollup(_ context.Context, id string) (*subsecond.Rollup, error) {
	return m.rolls[id], nil
}
func (m *memSource) Capture(context.Context, string) (*subsecond.Capture, error) {
	return nil, errors.New("no samples in memory")
}

// The host views over a 12-hour night of 96 CPUs whose summaries are in
// memory (as the serve command's cache holds them): what each request
// costs beyond reading summaries and describing hot spots from samples.
func BenchmarkNight12h(b *testing.B) {
	src := newMemSource(96, 360)
	ctx := context.Background()
	b.Run("timeline", func(b *testing.B) {
		for b.Loop() {
			if _, err := Timeline(ctx, src, "node-1", Span{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hotspots", func(b *testing.B) {
		for b.Loop() {
			if _, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: heatmap.MeasureSystem}); err == nil {
				b.Fatal("describe should have failed without samples")
			}
		}
	})
	b.Run("comms", func(b *testing.B) {
		for b.Loop() {
			if _, err := Comms(ctx, src, "node-1", Span{}, "kubelet", 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
