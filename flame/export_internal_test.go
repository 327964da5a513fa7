package flame

import (
	"testing"
)

// TestFormatsComplete checks that each format of the registry has a
// writer, a media type and an extension, and that no name is registered
// twice.
func TestFormatsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range formats {
		if f.write == nil || f.MediaType == "" || f.Ext == "" {
			t.Errorf("format %s: writer set %v, media type %q, extension %q; want all three", f.Name, f.write != nil, f.MediaType, f.Ext)
		}
		if seen[f.Name] {
			t.Errorf("format %s is registered twice", f.Name)
		}
		seen[f.Name] = true
	}
}
