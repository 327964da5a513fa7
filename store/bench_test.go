package store_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/capturefile"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
)

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchFile returns the path of the benchmark capture, the bundled
// 96-CPU × 120 s × 49 Hz incident as text. It is $SUBSECOND_BENCH_CAPTURE
// when set, written there first if the file does not exist yet, so that
// repeated runs (bench/ingest) generate it once; otherwise it is written
// to a temporary directory once per process.
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

// readAll reads the file at path to its end, which leaves it in the page
// cache, and returns its size.
func readAll(b *testing.B, path string) int64 {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(io.Discard, f)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// benchEach runs fn once per backend.
func benchEach(b *testing.B, fn func(b *testing.B, bk backend)) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) { fn(b, bk) })
	}
}

// importBench imports the benchmark capture into s.
func importBench(b *testing.B, s *store.Store) *subsecond.Profile {
	b.Helper()
	f, err := os.Open(benchFile(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	p, _, err := s.Import(context.Background(), f, store.ImportOptions{FileName: "bench.perf"})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkIngest imports the benchmark capture end to end (file → parse →
// encode → commit) into an empty database per iteration, as one
// `subsecond import` does. MB/s is over the text; db_bytes/sample is the
// database's size on disk (SQLite: the file after the write-ahead log is
// checkpointed; PostgreSQL: the profile tables with their indexes and
// TOAST) over the samples, and capture_bytes/sample what the import added
// to it (see sizeMetrics); first_capture_ms, timed apart from the import,
// is the first Capture of the new profile, which a heatmap request after
// an upload waits for.
//
// The capture is read once before the timer starts, so that every
// iteration reads it from the page cache, as `subsecond import` of a
// capture just written does. Without that, the first iteration read it
// from disk whenever it had not been read for a while: where the kernel
// pages out idle file pages (the 2-core development machine does, after
// about a minute), that one cold read made the mean of three iterations
// 1.6 times as long as `subsecond import`, which bench/ingest runs just
// after on the file the benchmark left warm (1.03 s against 0.66 s). Each
// iteration's store is closed outside the timer, as the CLI closes its
// own, so that captures cached by earlier iterations do not pile up in the
// heap of later ones.
func BenchmarkIngest(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		path := benchFile(b)
		b.SetBytes(readAll(b, path))
		var samples, size, empty int64
		var firstCapture, cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			be, db, _ := bk.open(b)
			s := store.New(be, store.Options{})
			empty = dbSize(b, bk.name, be, db)
			b.StartTimer()
			c0 := cpuTime(b)
			p := importBench(b, s)
			b.StopTimer()
			indexed(b, s) // the fleet index, written after the answer: its CPU and bytes count, its time not
			cpu += cpuTime(b) - c0
			samples = p.Samples
			start := time.Now()
			if c, err := s.Capture(context.Background(), p.ID); err != nil || c.Samples.Len() != int(p.Samples) {
				b.Fatalf("Capture after Import: %v", err)
			}
			firstCapture += time.Since(start)
			size = dbSize(b, bk.name, be, db)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		b.ReportMetric(float64(b.N)*float64(readAll(b, path))/1e6/cpu.Seconds(), "MB/cpu-s")
		sizeMetrics(b, size, empty, samples)
		b.ReportMetric(firstCapture.Seconds()*1e3/float64(b.N), "first_capture_ms")
	})
}

// sizeMetrics reports the size of a database that holds one capture of
// the given samples, size bytes where the empty database (its schema, each
// table and index at least a page) took empty:
//
//   - db_bytes/sample: size over the samples, the file a user of one
//     capture sees. On a capture of 50,000 samples the empty schema's
//     ~40 pages are a third of it.
//   - capture_bytes/sample: size − empty over the samples, what the
//     capture itself adds: its rows, their indexes and the pages they
//     fill. This is the figure that counts, and the one issue 24's
//     target (≤ 8 bytes per sample on a real deep capture) is for: a
//     night or a fleet holds thousands of captures in one database,
//     where the schema's pages are paid once.
func sizeMetrics(b *testing.B, size, empty, samples int64) {
	b.ReportMetric(float64(size)/float64(samples), "db_bytes/sample")
	b.ReportMetric(float64(size-empty)/float64(samples), "capture_bytes/sample")
}

// cpuTime returns the CPU time (user and system, all threads) the process
// has used so far: the import's figure that the other engineers' load on a
// shared machine does not change, as it changes wall time.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// realCaptures returns the real captures BenchmarkIngestReal imports: the
// repository's, then each file named in $SUBSECOND_BENCH_REAL (separated
// by spaces; plain or gzip text), by their base names.
func realCaptures() []string {
	paths := []string{filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz"),
		filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz")}
	return append(paths, strings.Fields(os.Getenv("SUBSECOND_BENCH_REAL"))...)
}

// captureName returns the name a real capture's benchmarks run under:
// its file's base name without .gz, .txt and .perf.
func captureName(path string) string {
	name := filepath.Base(path)
	for _, ext := range []string{".gz", ".txt", ".perf"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// readText returns the text of the capture at path, gunzipped when its
// name ends in .gz.
func readText(b testing.TB, path string) []byte {
	b.Helper()
	text, err := capturefile.Text(path)
	if err != nil {
		b.Fatal(err)
	}
	return text
}

// BenchmarkIngestReal imports real captures (deep C++, Go, JVM, Python
// and kernel stacks, long symbol names, many distinct stacks: see
// realCaptures) end to end from text in memory into an empty database per
// iteration, as BenchmarkIngest does the generated one. Besides MB/s of
// wall time it reports MB per CPU-second (user and system time of every
// thread of the process during the imports, the figure issue 24 sets a
// target for), db_bytes/sample and capture_bytes/sample (see sizeMetrics;
// issue 24's ≤ 8 bytes per sample is capture_bytes/sample).
func BenchmarkIngestReal(b *testing.B) {
	for _, path := range realCaptures() {
		b.Run(captureName(path), func(b *testing.B) {
			text := readText(b, path)
			benchEach(b, func(b *testing.B, bk backend) {
				b.SetBytes(int64(len(text)))
				var samples, size, empty int64
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					be, db, _ := bk.open(b)
					s := store.New(be, store.Options{})
					empty = dbSize(b, bk.name, be, db)
					b.StartTimer()
					c0 := cpuTime(b)
					p, _, err := s.Import(context.Background(), bytes.NewReader(text), store.ImportOptions{FileName: captureName(path)})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					indexed(b, s)
					cpu += cpuTime(b) - c0
					samples = p.Samples
					size = dbSize(b, bk.name, be, db)
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(len(text))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
				sizeMetrics(b, size, empty, samples)
			})
		})
	}
}

// BenchmarkIngestRealAgain imports the real captures of realCaptures into
// a database that holds each already, as a host's next capture of the
// same programs is: their fleet index's names are in the dictionary, and
// in the store's cache of it. Each iteration's text starts with a comment
// line of its own, so that it is a new capture to the store.
func BenchmarkIngestRealAgain(b *testing.B) {
	for _, path := range realCaptures() {
		b.Run(captureName(path), func(b *testing.B) {
			text := readText(b, path)
			benchEach(b, func(b *testing.B, bk backend) {
				be, _, _ := bk.open(b)
				s := store.New(be, store.Options{})
				defer s.Close()
				n := 0
				imp := func() {
					n++
					again := append([]byte(fmt.Sprintf("# again %d\n", n)), text...)
					if _, _, err := s.Import(context.Background(), bytes.NewReader(again), store.ImportOptions{FileName: captureName(path)}); err != nil {
						b.Fatal(err)
					}
				}
				imp()
				indexed(b, s)
				b.SetBytes(int64(len(text)))
				var cpu time.Duration
				for b.Loop() {
					c0 := cpuTime(b)
					imp()
					b.StopTimer()
					indexed(b, s)
					cpu += cpuTime(b) - c0
					b.StartTimer()
				}
				b.ReportMetric(float64(len(text))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
			})
		})
	}
}

// BenchmarkCaptureColdLoad loads the benchmark capture through a Store
// with an empty cache for each iteration (the database's own caches and
// the operating system's stay warm).
func BenchmarkCaptureColdLoad(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		be, _, _ := bk.open(b)
		p := importBench(b, store.New(be, store.Options{}))
		for b.Loop() {
			c, err := store.New(be, store.Options{}).Capture(context.Background(), p.ID)
			if err != nil {
				b.Fatal(err)
			}
			if c.Samples.Len() != int(p.Samples) {
				b.Fatalf("loaded %d samples; want %d", c.Samples.Len(), p.Samples)
			}
		}
		b.ReportMetric(float64(p.Samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
}

// BenchmarkWindow reads 10 s of the benchmark capture from the database,
// with and without a CPU filter.
func BenchmarkWindow(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		be, _, _ := bk.open(b)
		s := store.New(be, store.Options{})
		p := importBench(b, s)
		r := subsecond.Range{Start: p.T0() + 50e9, End: p.T0() + 60e9}
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
	})
}

// BenchmarkCaptureWindow reads a window of 3 s of the benchmark capture,
// as a range flame graph, an explanation or a host's moves of a capture
// not in the capture cache does: "first" from a new Store each time (the
// capture's tables decoded with the window), "again" from one Store that
// read a window of the profile before (its tables kept and shared).
//
//	go test -run '^$' -bench CaptureWindow -benchtime 50x ./store
func BenchmarkCaptureWindow(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		be, _, _ := bk.open(b)
		p := importBench(b, store.New(be, store.Options{}))
		r := subsecond.Range{Start: p.T0() + 50e9, End: p.T0() + 53e9}
		again := store.New(be, store.Options{})
		for _, tc := range []struct {
			name  string
			store func() *store.Store
		}{{"first", func() *store.Store { return store.New(be, store.Options{}) }}, {"again", func() *store.Store { return again }}} {
			b.Run(tc.name, func(b *testing.B) {
				n := 0
				for b.Loop() {
					c, err := tc.store().CaptureWindow(context.Background(), p.ID, r)
					if err != nil {
						b.Fatal(err)
					}
					n = c.Samples.Len()
				}
				b.ReportMetric(float64(n), "samples")
			})
		}
	})
}

// BenchmarkEncodeReal encodes each real capture of realCaptures as an
// import's last stage does (store.Encode: table segments, chunks and
// comms), from a capture built once. Run with -cpu 1,2: the tables'
// three kinds are encoded at once when a second core is free.
func BenchmarkEncodeReal(b *testing.B) {
	for _, path := range realCaptures() {
		b.Run(captureName(path), func(b *testing.B) {
			c := buildCapture(b, readText(b, path))
			for b.Loop() {
				segs, _, _ := store.Encode(c)
				if len(segs) != 1 {
					b.Fatalf("%d segments; want the tables packed in one", len(segs))
				}
			}
		})
	}
}
