package flame_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
)

// TestExportFormats writes a graph in every format of the registry and
// checks that each output is what its content type says, and that an
// unknown format is refused with the list of formats.
func TestExportFormats(t *testing.T) {
	_, c := data(t)
	t0 := c.Profile.T0()
	g, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: t0, End: t0 + 5e9})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flame.Formats() {
		var b bytes.Buffer
		if err := g.Export(&b, f.Name); err != nil {
			t.Errorf("Export(%s): %v", f.Name, err)
			continue
		}
		out := b.Bytes()
		var ok bool
		switch f.MediaType {
		case "application/json":
			ok = json.Valid(out)
		case "image/svg+xml":
			ok = bytes.Contains(out[:min(len(out), 200)], []byte("<svg"))
		case "text/plain; charset=utf-8":
			line, _, _ := strings.Cut(string(out), "\n")
			ok = strings.Contains(line, ";") && strings.LastIndexByte(line, ' ') > 0
		case "application/vnd.google.protobuf":
			p, err := profile.Parse(bytes.NewReader(out))
			ok = err == nil && len(p.Sample) > 0
		default:
			t.Errorf("format %s: content type %q has no check here", f.Name, f.MediaType)
			continue
		}
		if !ok || f.Ext == "" || f.Help == "" {
			t.Errorf("Export(%s) wrote %.80q; want %s, with an extension and help", f.Name, out, f.MediaType)
		}
	}
	err = g.Export(&bytes.Buffer{}, "png")
	if !errors.Is(err, subsecond.ErrInvalid) || err.Error() != `format: "png" is not one of `+strings.Join(flame.FormatNames(), ", ") {
		t.Errorf("Export(png) error = %v; want the list of formats", err)
	}
}
