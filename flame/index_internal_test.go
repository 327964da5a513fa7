package flame

import (
	"runtime"
	"testing"

	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

// TestIndexBytes checks that an index's Bytes, which the capture cache
// counts against its budget, is what building it keeps live, within a
// tenth, for each setting of only on the deep-stacked real capture.
func TestIndexBytes(t *testing.T) {
	c, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	for _, only := range []string{"", "kernel", "user"} {
		m, err := query.Filter{Only: only}.Compile(c) // the filter's own index, built before
		if err != nil {
			t.Fatal(err)
		}
		before := synth.LiveHeap()
		ix := buildIndex(c, m.KeepFrame)
		held := synth.LiveHeap() - before
		if got := ix.Bytes(); float64(got) < 0.9*float64(held) || float64(got) > 1.1*float64(held) {
			t.Errorf("only=%q: index of %d nodes: Bytes() = %d; building it keeps %d bytes live", only, ix.Len(), got, held)
		}
		runtime.KeepAlive(ix)
	}
	runtime.KeepAlive(c)
}
