package explain

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// benchNight is bench/nightload's night: 96 CPUs at 49 Hz in two-minute
// captures from 2026-11-30 00:00 UTC, a 5 s kernel burst on CPU 39 every
// 40 minutes from 00:17:58; hours long.
func benchNight(hours float64) *nightgen.Night {
	n := &nightgen.Night{Host: "node-1", CPUs: 96, Hz: 49, Length: 2 * time.Minute, Unanchored: -1, Seed: 1,
		Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	n.Captures = int(time.Duration(hours*float64(time.Hour)) / n.Length)
	for t := 18*time.Minute - 2*time.Second; t < time.Duration(hours*float64(time.Hour)); t += 40 * time.Minute {
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 39, Start: n.Start.Add(t), End: n.Start.Add(t + 5*time.Second)})
	}
	return n
}

// BenchmarkExplainNight explains 10 markers of a 96-CPU night, each 2 s
// after a kernel burst, against 200 control windows: cold (the report
// computed, the captures' windows read from SQLite) and cached (Cache
// holding it: the host's captures and markers read, the key hashed). It
// reports each in ms.
//
// EXPLAIN_DB names a database of such a night (bench/nightload's, e.g.
// DB=/tmp/night.db bench/night for 12 h): used when it exists, else
// written there. Without it the night is written to a temporary
// directory. A night written is EXPLAIN_HOURS long (default 1). The
// benchmark adds its markers ("bench: reset") to the database.
//
//	go test -run '^$' -bench ExplainNight -benchtime 3x ./explain
//	EXPLAIN_DB=/tmp/night.db go test -run '^$' -bench ExplainNight -benchtime 3x -timeout 60m ./explain
func BenchmarkExplainNight(b *testing.B) {
	ctx := context.Background()
	path, hours := os.Getenv("EXPLAIN_DB"), 1.0
	if h, err := strconv.ParseFloat(os.Getenv("EXPLAIN_HOURS"), 64); err == nil {
		hours = h
	}
	if path == "" {
		path = filepath.Join(b.TempDir(), "night.db")
	}
	_, statErr := os.Stat(path)
	s, err := sqlite.OpenStore(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	src := storeSource{s}
	ps, err := s.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if os.IsNotExist(statErr) || len(ps) == 0 {
		n := benchNight(hours)
		begin := time.Now()
		for i := range n.Captures {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
			if _, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprintf("perf.data.%03d.perf.txt", i)}); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("wrote %d captures of %d CPUs in %s", n.Captures, n.CPUs, time.Since(begin).Round(time.Second))
		ps, _ = s.List(ctx)
	}
	// Ten markers: 2 s after the night's first ten bursts, or as many as
	// it has, the rest spread over the night.
	var first, last int64
	for i, p := range ps {
		if i == 0 || p.Start < first {
			first = p.Start
		}
		last = max(last, p.End)
	}
	n := benchNight(float64(last-first) / float64(time.Hour))
	var ms []subsecond.Marker
	for i, bu := range n.Bursts {
		if i == 10 {
			break
		}
		ms = append(ms, subsecond.Marker{Time: bu.End.Add(2 * time.Second).UnixNano(), Text: "bench: reset"})
	}
	for k := int64(len(ms)); len(ms) < 10; k++ {
		ms = append(ms, subsecond.Marker{Time: first + int64(5*time.Minute) + k*(last-first-int64(10*time.Minute))/10, Text: "bench: reset"})
	}
	if _, err := s.AddMarkers(ctx, "node-1", ms); err != nil {
		b.Fatal(err)
	}
	opt := Options{Match: regexp.MustCompile(`^bench: reset$`)}
	var cold, warm time.Duration
	var rep *Report
	b.ResetTimer()
	for range b.N {
		begin := time.Now()
		rep, err = Explain(ctx, src, "node-1", opt)
		if err != nil {
			b.Fatal(err)
		}
		cold += time.Since(begin)
		cache := NewCache(0)
		if _, _, err := cache.Explain(ctx, src, "node-1", opt, nil); err != nil {
			b.Fatal(err)
		}
		begin = time.Now()
		if _, hit, err := cache.Explain(ctx, src, "node-1", opt, nil); err != nil || !hit {
			b.Fatalf("cached: hit %v, %v", hit, err)
		}
		warm += time.Since(begin)
	}
	var samples int64
	for _, w := range append(rep.Windows, rep.Controls...) {
		samples += w.Samples
	}
	f := rep.Findings[0]
	b.Logf("first finding: %s %s %s %v, %.4f vs %.4f, %d of %d, q %.2g", f.Kind, f.Comm, f.Function, f.Stack, f.BeforeShare, f.ControlShare, f.StoodOut, f.Of, f.Q)
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms")
	b.ReportMetric(float64(warm.Microseconds())/1000/float64(b.N), "cached-ms")
	b.ReportMetric(float64(samples), "samples")
	b.ReportMetric(float64(len(ps)), "captures")
	b.ReportMetric(float64(rep.Tested), "tested")
	b.ReportMetric(0, "ns/op")
}
