package parser_test

import (
	"io"
	"testing"

	"github.com/subsecond/subsecond/parser"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// BenchmarkScanner measures the parser's hot loop on text held in memory,
// read in place by one Scanner that is Reset for each pass, as the store's
// parse workers read their blocks: the first 128 MB of the bundled 96-CPU
// incident (generated stacks, few distinct) and the bundled real capture
// (a mixed workload on 2 CPUs, many distinct stacks).
func BenchmarkScanner(b *testing.B) {
	for _, in := range []struct {
		name string
		open func() (io.ReadCloser, error)
	}{{"incident", sampledata.Incident}, {"real", sampledata.Real}} {
		b.Run(in.name, func(b *testing.B) {
			r, err := in.open()
			if err != nil {
				b.Fatal(err)
			}
			text, err := io.ReadAll(io.LimitReader(r, 128<<20))
			r.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			sc := parser.NewScanner(nil, parser.Options{})
			frames := 0
			for b.Loop() {
				sc.ResetBytes(text, parser.Options{Strict: true})
				frames = 0
				for sc.Scan() {
					frames += len(sc.Sample().Frames)
				}
				if err := sc.Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
