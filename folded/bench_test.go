package folded

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

// benchInput names the capture BenchmarkCollapse reads: the committed
// 12-second real capture, or the one SUBSECOND_BENCH_INPUT names (bench/run
// points it at other captures).
func benchInput() string {
	if p := os.Getenv("SUBSECOND_BENCH_INPUT"); p != "" {
		return p
	}
	return filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz")
}

func loadInput(b *testing.B, path string) []byte {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("benchmark input: %v", err)
	}
	defer f.Close()
	r, err := decompress.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkCollapse measures single-threaded parse-and-fold throughput on
// a capture held in memory (decompressed beforehand), in MB/s and samples/s.
func BenchmarkCollapse(b *testing.B) {
	data := loadInput(b, benchInput())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var samples int64
	for b.Loop() {
		sc := parser.NewScanner(bytes.NewReader(data), parser.Options{})
		c := New(Options{})
		for sc.Scan() {
			c.AddFrames(sc.Sample(), sc.FrameIDs())
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		added, skipped := c.Counts()
		samples += added + skipped
		if _, err := c.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkScan measures the parser alone.
func BenchmarkScan(b *testing.B) {
	data := loadInput(b, benchInput())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := parser.NewScanner(bytes.NewReader(data), parser.Options{})
		for sc.Scan() {
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
	}
}
