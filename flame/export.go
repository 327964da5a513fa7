package flame

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/subsecond/subsecond"
)

// Formats lists the export formats Export writes.
var Formats = []string{"json", "folded", "svg", "pprof", "functions"}

// Export writes g in format "json", "folded", "svg", "pprof" or
// "functions" (the function table as JSON, see WriteFunctions). An unknown
// format is an error wrapping subsecond.ErrInvalid.
func (g *Graph) Export(w io.Writer, format string) error {
	switch format {
	case "json", "":
		return g.WriteJSON(w)
	case "folded":
		return g.WriteFolded(w)
	case "svg":
		return g.WriteSVG(w, SVGOptions{})
	case "pprof":
		return g.WritePprof(w)
	case "functions":
		return g.WriteFunctions(w)
	}
	return fmt.Errorf("format: %q is not json, folded, svg, pprof or functions: %w", format, subsecond.ErrInvalid)
}

// WriteFunctions writes g's function table (see Functions) as JSON:
// {"total": n, "functions": [...]}, plus "base_total" for a differential
// graph.
func (g *Graph) WriteFunctions(w io.Writer) error {
	v := struct {
		Total     int64      `json:"total"`
		BaseTotal *int64     `json:"base_total,omitempty"`
		Functions []Function `json:"functions"`
	}{Total: g.Total, Functions: g.Functions()}
	if g.BaseN != nil {
		v.BaseTotal = &g.BaseTotal
	}
	return json.NewEncoder(w).Encode(v)
}
