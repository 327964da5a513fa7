package hoststate

import (
	"runtime"
	"testing"
)

// BenchmarkSample96 measures a Sample of the 96-CPU fixture: reading and
// parsing every file and computing the points (the counters stand still
// between iterations, so irq rates are zero and give no points; parsing is
// the cost). At a 1 s interval, ns/op ÷ 10⁷ is the share of one core in
// percent; the target is ≤ 0.5% (5 ms).
func BenchmarkSample96(b *testing.B) {
	benchmarkSample(b, "testdata/proc96/t1")
}

// BenchmarkSampleProc measures a Sample of this host's /proc and /sys,
// which costs the kernel's formatting of the files besides the parsing.
func BenchmarkSampleProc(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("needs Linux's /proc")
	}
	benchmarkSample(b, "/")
}

func benchmarkSample(b *testing.B, root string) {
	s, err := New(Options{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Sample(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	points := 0
	for b.Loop() {
		series, err := s.Sample()
		if err != nil {
			b.Fatal(err)
		}
		points += len(series)
	}
	b.ReportMetric(float64(points)/float64(b.N), "points/op")
}
