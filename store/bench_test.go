package store

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchFile returns the path of the benchmark capture. It is
// $SUBSECOND_BENCH_CAPTURE when set, written there first if the file does
// not exist yet, so that repeated runs (bench/ingest) generate it once;
// otherwise it is written to a temporary directory once per process.
func benchFile(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchPath = os.Getenv("SUBSECOND_BENCH_CAPTURE")
		if benchPath != "" {
			if _, err := os.Stat(benchPath); err == nil {
				return
			}
		} else {
			dir, err := os.MkdirTemp("", "subsecond-bench")
			if err != nil {
				benchErr = err
				return
			}
			benchPath = filepath.Join(dir, "capture.perf")
		}
		f, err := os.Create(benchPath)
		if err != nil {
			benchErr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		// The 96-CPU × 120 s × 49 Hz incident capture of the ingest target.
		if _, err := sampledata.Generate(w, sampledata.DefaultConfig()); err != nil {
			benchErr = err
		}
		if err := w.Flush(); err != nil && benchErr == nil {
			benchErr = err
		}
		if err := f.Close(); err != nil && benchErr == nil {
			benchErr = err
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath
}

// BenchmarkIngest imports the benchmark capture end to end (file → parse →
// insert → commit) into a fresh database per iteration. MB/s is over the
// text; db/text is the database file's size relative to the text;
// first_capture_ms, timed apart from the import, is the first Capture of
// the new profile, which a heatmap request after an upload waits for.
func BenchmarkIngest(b *testing.B) {
	path := benchFile(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	var samples int64
	var dbSize int64
	var firstCapture time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dir := b.TempDir()
		s, err := Open(context.Background(), filepath.Join(dir, "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p, _, err := s.Import(context.Background(), f, ImportOptions{FileName: "bench.perf"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.Close()
		samples = p.Samples
		start := time.Now() // what the first heatmap request after an upload waits for
		if c, err := s.Capture(context.Background(), p.ID); err != nil || c.Samples.Len() != int(p.Samples) {
			b.Fatalf("Capture after Import: %v", err)
		}
		firstCapture += time.Since(start)
		if err := s.Close(); err != nil { // checkpoints the WAL into the file
			b.Fatal(err)
		}
		dbSize = fileSize(b, filepath.Join(dir, "bench.db")) + fileSize(b, filepath.Join(dir, "bench.db-wal"))
		b.StartTimer()
	}
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(dbSize)/float64(fi.Size())*100, "db%_of_text")
	b.ReportMetric(float64(dbSize)/float64(samples), "db_bytes/sample")
	b.ReportMetric(firstCapture.Seconds()*1e3/float64(b.N), "first_capture_ms")
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkCaptureColdLoad loads the benchmark capture from a database
// opened afresh for each iteration, so no cached Capture is reused (the
// operating system's page cache stays warm).
func BenchmarkCaptureColdLoad(b *testing.B) {
	path := benchFile(b)
	dbPath := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(context.Background(), dbPath)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := s.Import(context.Background(), f, ImportOptions{})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(context.Background(), dbPath)
		if err != nil {
			b.Fatal(err)
		}
		c, err := s.Capture(context.Background(), p.ID)
		if err != nil {
			b.Fatal(err)
		}
		if c.Samples.Len() != int(p.Samples) {
			b.Fatalf("loaded %d samples; want %d", c.Samples.Len(), p.Samples)
		}
		s.Close()
	}
	b.ReportMetric(float64(p.Samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkWindow reads 10 s of the benchmark capture from SQL, with and
// without a CPU filter.
func BenchmarkWindow(b *testing.B) {
	path := benchFile(b)
	s, _ := openTest(b)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := s.Import(context.Background(), f, ImportOptions{})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	r := windowOf(p.T0(), 50, 60)
	for _, tc := range []struct {
		name string
		cpus []int32
	}{{"all", nil}, {"4cpus", []int32{0, 17, 42, 95}}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				cols, err := s.Window(context.Background(), p.ID, r, tc.cpus)
				if err != nil {
					b.Fatal(err)
				}
				n = cols.Len()
			}
			b.ReportMetric(float64(n), "samples")
		})
	}
}

// windowOf returns [t0+from s, t0+to s).
func windowOf(t0 int64, from, to int64) subsecond.Range {
	return subsecond.Range{Start: t0 + from*1e9, End: t0 + to*1e9}
}
