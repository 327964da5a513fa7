package timeline

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// rangeSource is a host of back-to-back two-minute captures held in
// memory, as the store's capture cache holds them: each the bundled
// incident (96 CPUs × 120 s at 49 Hz, about 565k samples of deep stacks)
// moved to its place on the wall clock.
type rangeSource struct {
	ps    []subsecond.Profile
	caps  map[string]*subsecond.Capture
	sums  map[string][]subsecond.ChunkSummary
	rolls map[string]*subsecond.Rollup
}

func newRangeSource(b *testing.B, captures int) *rangeSource {
	r, err := sampledata.Incident()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	sc := parser.NewScanner(r, parser.Options{})
	bl := subsecond.NewBuilder()
	for sc.Scan() {
		if err := bl.Add(sc.Sample()); err != nil {
			b.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	inc := bl.Capture(subsecond.Profile{})
	m := &rangeSource{caps: map[string]*subsecond.Capture{}, sums: map[string][]subsecond.ChunkSummary{}, rolls: map[string]*subsecond.Rollup{}}
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).UnixNano()
	for i := range captures {
		c := &subsecond.Capture{Profile: inc.Profile, Strings: inc.Strings, Frames: inc.Frames, Nodes: inc.Nodes,
			Samples: subsecond.MakeColumns(inc.Samples.Len())}
		c.Samples.AppendRange(&inc.Samples, 0, inc.Samples.Len())
		shift := start + int64(i)*int64(2*time.Minute) - inc.Profile.T0()
		for k := range c.Samples.Time {
			c.Samples.Time[k] += shift
		}
		c.Profile.ID = fmt.Sprintf("c%d", i)
		c.Profile.Host = "node-1"
		c.Profile.Start += shift
		c.Profile.End += shift
		c.Profile.Wall = subsecond.WallClock{Source: subsecond.WallRealtime}
		m.ps = append(m.ps, c.Profile)
		m.caps[c.Profile.ID] = c
		m.sums[c.Profile.ID] = Summarize(c)
		m.rolls[c.Profile.ID] = subsecond.NewRollup(m.sums[c.Profile.ID])
	}
	return m
}

func (m *rangeSource) HostProfiles(_ context.Context, host string) ([]subsecond.Profile, error) {
	var out []subsecond.Profile
	for _, p := range m.ps {
		if p.Host == host {
			out = append(out, p)
		}
	}
	return out, nil
}
func (m *rangeSource) Rollup(_ context.Context, id string) (*subsecond.Rollup, error) {
	return m.rolls[id], nil
}
func (m *rangeSource) Capture(_ context.Context, id string) (*subsecond.Capture, error) {
	return m.caps[id], nil
}

// BenchmarkHostRange measures a host range's flame graph across captures
// with their samples in memory (the store's capture cache warm): warm, the
// range joined before (RangeCache) as a page's later views of it find it;
// cold, joined for the request. Each reports the p50 in ms.
//
//	go test -run '^$' -bench HostRange -benchtime 20x ./timeline
func BenchmarkHostRange(b *testing.B) {
	src := newRangeSource(b, 5)
	ctx := context.Background()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, bc := range []struct {
		name     string
		from, to time.Time
	}{
		{"10s-96cpus-2captures", start.Add(115 * time.Second), start.Add(125 * time.Second)},
		{"10min-96cpus-5captures", start, start.Add(10 * time.Minute)},
	} {
		for _, warm := range []bool{true, false} {
			name := bc.name + "/cold"
			if warm {
				name = bc.name + "/warm"
			}
			b.Run(name, func(b *testing.B) {
				cache := NewRangeCache(1 << 30)
				graph := func() *flame.Graph {
					sel, err := Select(ctx, src, "node-1", bc.from.UnixNano(), bc.to.UnixNano(), nil)
					if err != nil {
						b.Fatal(err)
					}
					cc := cache
					if !warm {
						cc = nil
					}
					c, err := sel.Load(ctx, src, cc)
					if err != nil {
						b.Fatal(err)
					}
					g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: sel.From, End: sel.To})
					if err != nil {
						b.Fatal(err)
					}
					return g
				}
				if warm {
					graph()
				}
				lat := make([]time.Duration, 0, b.N)
				var g *flame.Graph
				for b.Loop() {
					t := time.Now()
					g = graph()
					lat = append(lat, time.Since(t))
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(g.Total), "samples")
				b.ReportMetric(float64(g.Len()), "nodes")
			})
		}
	}
}
