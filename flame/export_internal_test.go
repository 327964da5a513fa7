package flame

import (
	"bytes"
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

// TestAppendEsc holds the SVG's fast escaping to esc's (xml.EscapeText)
// on names that need escaping, that cannot be carried, and that need
// nothing, as a string and as bytes.
func TestAppendEsc(t *testing.T) {
	var scratch bytes.Buffer
	for _, s := range []string{
		"", "tcp_v4_rcv", "std::vector<int>::push_back", `a "quoted" 'name' & more`,
		"tab\there", "new\nline", "cr\rx", "nul\x00x", "bell\x07", "del\x7f", "ünïcödé λ",
		"bad utf8 \xff\xfe", "\ufffe", "[unknown]", "java.lang.Thread.run()V", "inlined->callee", "a > b",
	} {
		want := esc(s)
		if got := string(appendEsc([]byte("<"), s, &scratch)); got != "<"+want {
			t.Errorf("appendEsc(%q) = %q, want %q", s, got, "<"+want)
		}
		if got := string(appendEsc(nil, []byte(s), &scratch)); got != want {
			t.Errorf("appendEsc([]byte(%q)) = %q, want %q", s, got, want)
		}
	}
}
