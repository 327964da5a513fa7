package synth

import (
	"bytes"
	"io"
	"runtime"
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
		generated, generatedErr = Parse(text.Bytes(), parser.Options{Strict: true})
		if generated != nil {
			generated.Profile.ID = "generated"
		}
	})
	return generated, generatedTr, generatedErr
}

// Parse reads perf script text into a capture held in memory, in one
// serial pass of the parser and subsecond.Builder: the reference that
// stored captures are compared with.
func Parse(text []byte, opt parser.Options) (*subsecond.Capture, error) {
	sc := parser.NewScanner(bytes.NewReader(text), opt)
	b := subsecond.NewBuilder()
	for sc.Scan() {
		if err := b.Add(sc.Sample()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return b.Capture(subsecond.Profile{Meta: sc.Metadata()}), nil
}

// Real returns the bundled real capture (sampledata.Real: 2 CPUs × 5 s of
// deep stacks), parsed into a new capture on each call.
func Real() (*subsecond.Capture, error) {
	r, err := sampledata.Real()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	text, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(text, parser.Options{})
}

// LiveHeap returns the bytes of the Go heap still reachable after a
// collection: taken before and after building something, what it keeps.
func LiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
