package flame

import (
	"testing"

	"github.com/subsecond/subsecond/query"
)

// TestWritersMatchRegistry checks that Export has a writer for each format
// of the registry and none besides.
func TestWritersMatchRegistry(t *testing.T) {
	names := query.ExportFormatNames()
	for _, n := range names {
		if writers[n] == nil {
			t.Errorf("format %s is registered but Export has no writer for it", n)
		}
	}
	if len(writers) != len(names) {
		t.Errorf("Export has %d writers for %d registered formats (%v)", len(writers), len(names), names)
	}
}
