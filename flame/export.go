package flame

import (
	"encoding/json"
	"io"

	"github.com/subsecond/subsecond"
)

// writers holds the writer of each export format of the root package's
// registry (subsecond.ExportFormats); TestExportFormats checks that they
// agree.
var writers = map[string]func(g *Graph, w io.Writer) error{
	"json":      (*Graph).WriteJSON,
	"svg":       func(g *Graph, w io.Writer) error { return g.WriteSVG(w, SVGOptions{}) },
	"folded":    (*Graph).WriteFolded,
	"pprof":     (*Graph).WritePprof,
	"functions": (*Graph).WriteFunctions,
}

// Export writes g in one of the registered formats (subsecond.ExportFormats:
// "json", the default for "", "svg", "folded", "pprof", "functions"). An
// unknown format is an error wrapping subsecond.ErrInvalid that lists them.
func (g *Graph) Export(w io.Writer, format string) error {
	f, err := subsecond.LookupExportFormat(format)
	if err != nil {
		return err
	}
	return writers[f.Name](g, w)
}

// FunctionTable is the JSON of a graph's function table: its total, the
// base range's for a differential graph, and the rows of Functions.
type FunctionTable struct {
	Total     int64      `json:"total"`
	BaseTotal *int64     `json:"base_total,omitempty"`
	Functions []Function `json:"functions"`
}

// WriteFunctions writes g's function table (see Functions) as JSON:
// {"total": n, "functions": [...]}, plus "base_total" for a differential
// graph.
func (g *Graph) WriteFunctions(w io.Writer) error {
	v := FunctionTable{Total: g.Total, Functions: g.Functions()}
	if g.BaseN != nil {
		v.BaseTotal = &g.BaseTotal
	}
	return json.NewEncoder(w).Encode(v)
}
