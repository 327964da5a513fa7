package synth

import (
	"bytes"
	"sync"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

var (
	generatedOnce sync.Once
	generated     *subsecond.Capture
	generatedTr   sampledata.Truth
	generatedErr  error
)

// Generated returns the shared generator's default incident capture (96
// CPUs × 120 s × 49 Hz with planted windows), written as perf script text
// and parsed back, built once per process.
func Generated() (*subsecond.Capture, sampledata.Truth, error) {
	generatedOnce.Do(func() {
		var text bytes.Buffer
		generatedTr, generatedErr = sampledata.Generate(&text, sampledata.DefaultConfig())
		if generatedErr != nil {
			return
		}
		sc := parser.NewScanner(&text, parser.Options{Strict: true})
		b := subsecond.NewBuilder()
		for sc.Scan() {
			b.Add(sc.Sample())
		}
		if generatedErr = sc.Err(); generatedErr != nil {
			return
		}
		generated = b.Capture(subsecond.Profile{ID: "generated", Meta: sc.Metadata()})
	})
	return generated, generatedTr, generatedErr
}
