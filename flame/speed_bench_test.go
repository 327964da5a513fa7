package flame_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// The speed benchmarks answer the requests the flame graph page makes (the
// graph's JSON, a diff, the function table, a pprof export), on a real
// capture with deep stacks and on the bundled 96-CPU incident, and
// report p50/p95 in milliseconds, allocations per request and per emitted
// node. bench/flame runs them and prints the table; the targets (issue 13)
// on a 2-core machine, server-side including JSON: deep capture 1 s ≤ 2 ms,
// 10 s ≤ 6 ms, whole ≤ 15 ms; incident whole ≤ 5 ms; ≤ 1 allocation per
// emitted node.
//
// SUBSECOND_DEEP_CAPTURE names the deep capture (perf script text, .gz
// allowed); without it the committed 12 s real capture is used.
//
//	go test -run '^$' -bench 'Speed' -benchtime 100x ./flame

var (
	deepOnce     sync.Once
	deepCapture  *subsecond.Capture
	deepErr      error
	incidentOnce sync.Once
	incident     *subsecond.Capture
	incidentErr  error
)

func loadText(r io.Reader, id string) (*subsecond.Capture, error) {
	sc := parser.NewScanner(r, parser.Options{})
	b := subsecond.NewBuilder()
	for sc.Scan() {
		b.Add(sc.Sample())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return b.Capture(subsecond.Profile{ID: id, Meta: sc.Metadata()}), nil
}

// deepDefault is the committed real capture the deep benchmarks use when
// SUBSECOND_DEEP_CAPTURE names none.
const deepDefault = "../sample-data/real-mixed-2cpu-12s.perf.txt.gz"

// loadFile reads a capture from perf script text, gzipped when its name
// ends in .gz.
func loadFile(name string) (*subsecond.Capture, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r = z
	}
	return loadText(r, "deep")
}

func deep(b *testing.B) *subsecond.Capture {
	deepOnce.Do(func() {
		name := os.Getenv("SUBSECOND_DEEP_CAPTURE")
		if name == "" {
			name = deepDefault
		}
		deepCapture, deepErr = loadFile(name)
	})
	if deepErr != nil {
		b.Fatal(deepErr)
	}
	return deepCapture
}

func bundledIncident(b *testing.B) *subsecond.Capture {
	incidentOnce.Do(func() {
		var r io.ReadCloser
		if r, incidentErr = sampledata.Incident(); incidentErr != nil {
			return
		}
		defer r.Close()
		incident, incidentErr = loadText(r, "incident")
	})
	if incidentErr != nil {
		b.Fatal(incidentErr)
	}
	return incident
}

// request is one kind of request the benchmarks time; it returns the number
// of nodes (or pprof samples) it emitted.
type request struct {
	name string
	fn   func() (int, error)
}

func speedRequests(c *subsecond.Capture, at int64) []request {
	t0 := c.Profile.T0()
	end := c.Profile.End + 1
	clip := func(r subsecond.Range) subsecond.Range {
		r.End = min(r.End, end)
		return r
	}
	whole := subsecond.Range{Start: t0, End: end}
	jsonOf := func(r subsecond.Range) func() (int, error) {
		return func() (int, error) {
			g, err := flame.Build(c, query.Filter{}, r)
			if err != nil {
				return 0, err
			}
			return g.Len(), g.WriteJSON(io.Discard)
		}
	}
	base := clip(subsecond.Range{Start: at, End: at + 5e9})
	target := clip(subsecond.Range{Start: at + 5e9, End: at + 10e9})
	return []request{
		{"flame_1s", jsonOf(clip(subsecond.Range{Start: at, End: at + 1e9}))},
		{"flame_10s", jsonOf(clip(subsecond.Range{Start: at, End: at + 10e9}))},
		{"flame_whole", jsonOf(whole)},
		{"diff_5s_5s", func() (int, error) {
			g, err := flame.Diff(c, query.Filter{}, base, target)
			if err != nil {
				return 0, err
			}
			return g.Len(), g.WriteJSON(io.Discard)
		}},
		{"functions_10s", func() (int, error) {
			g, err := flame.Build(c, query.Filter{}, clip(subsecond.Range{Start: at, End: at + 10e9}))
			if err != nil {
				return 0, err
			}
			rows := g.Functions()
			return g.Len(), json.NewEncoder(io.Discard).Encode(rows)
		}},
		{"pprof_10s", func() (int, error) {
			g, err := flame.Build(c, query.Filter{}, clip(subsecond.Range{Start: at, End: at + 10e9}))
			if err != nil {
				return 0, err
			}
			return g.Len(), g.WritePprof(io.Discard)
		}},
	}
}

func runSpeed(b *testing.B, c *subsecond.Capture, at int64) {
	b.Logf("capture: %d samples, %d stack nodes, %d frames", c.Samples.Len(), len(c.Nodes), len(c.Frames))
	for _, rq := range speedRequests(c, at) {
		b.Run(rq.name, func(b *testing.B) {
			nodes, err := rq.fn() // warm: the per-capture index, caches
			if err != nil {
				b.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := cpuTime()
			latency(b, func() error { _, err := rq.fn(); return err })
			cpu := cpuTime() - cpu0
			runtime.ReadMemStats(&m1)
			allocs := float64(m1.Mallocs-m0.Mallocs) / float64(b.N)
			// CPU time, unlike wall time, hardly depends on what else the
			// machine runs: the figure to compare across loads.
			b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/req")
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(allocs, "allocs/req")
			b.ReportMetric(allocs/float64(max(nodes, 1)), "allocs/node")
		})
	}
}

// cpuTime returns the CPU time (user and system, all threads, the
// garbage collector's included) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// latency runs fn b.N times and reports the p50 and p95 of its wall time in
// milliseconds.
func latency(b *testing.B, fn func() error) {
	b.Helper()
	ds := make([]int64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, int64(time.Since(t)))
	}
	b.StopTimer()
	slices.Sort(ds)
	q := func(p float64) float64 { return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / 1e6 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
}

// BenchmarkSpeedDeep times the requests on the deep-stack capture, ranges
// starting 10 s after T0 (or at T0 when the capture is shorter than 20 s).
func BenchmarkSpeedDeep(b *testing.B) {
	c := deep(b)
	t0 := c.Profile.T0()
	at := t0
	if c.Profile.End-t0 >= 20e9 {
		at = t0 + 10e9
	}
	runSpeed(b, c, at)
}

// BenchmarkSpeedIncident times the requests on the bundled incident, ranges
// starting at its second planted window.
func BenchmarkSpeedIncident(b *testing.B) {
	c := bundledIncident(b)
	tr, err := sampledata.IncidentTruth()
	if err != nil {
		b.Fatal(err)
	}
	runSpeed(b, c, tr.Incidents[1].StartNS)
}

// BenchmarkSpeedIndex times what the first flame graph of a capture pays
// once: building its index (and the filter's per-capture flags) on a fresh
// copy of the capture.
func BenchmarkSpeedIndex(b *testing.B) {
	for _, tc := range []struct {
		name string
		c    func(*testing.B) *subsecond.Capture
	}{{"Deep", deep}, {"Incident", bundledIncident}} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.c(b)
			r := subsecond.Range{Start: c.Profile.T0(), End: c.Profile.T0() + 1e9}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := cpuTime()
			defer func() { b.ReportMetric((cpuTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/req") }()
			latency(b, func() error {
				fresh := &subsecond.Capture{Profile: c.Profile, Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes, Samples: c.Samples}
				_, err := flame.Build(fresh, query.Filter{}, r)
				return err
			})
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/(1<<20), "MiB/op")
		})
	}
}

// BenchmarkSpeedStackChartFirst times the stack chart's first request for
// one CPU (issue 15: 10 s × 1 CPU drawn ≤ 100 ms) on a capture whose
// profile page has been drawn, as after an upload (its unfiltered flame
// index and the cores map's CPU list built): the filter check and the
// samples, with whatever a first CPU filter builds for the capture.
func BenchmarkSpeedStackChartFirst(b *testing.B) {
	c := bundledIncident(b)
	tr, err := sampledata.IncidentTruth()
	if err != nil {
		b.Fatal(err)
	}
	at := tr.Incidents[1].StartNS
	r := subsecond.Range{Start: at, End: at + 10e9}
	f := query.Filter{CPUs: []int32{int32(tr.Incidents[1].CPU)}}
	ds := make([]int64, 0, b.N)
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		fresh := &subsecond.Capture{Profile: c.Profile, Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes, Samples: c.Samples}
		if _, err := flame.Build(fresh, query.Filter{}, r); err != nil {
			b.Fatal(err)
		}
		query.SeenCPUs(fresh) // the cores map's rows
		t, cpu0 := time.Now(), cpuTime()
		if err := f.Check(fresh); err != nil {
			b.Fatal(err)
		}
		if _, _, err := flame.StackSamples(fresh, f, r, query.DefaultMaxSamples); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, int64(time.Since(t)))
		cpu += cpuTime() - cpu0
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/1e6, "p50-ms")
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/req")
}
