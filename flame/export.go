package flame

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/subsecond/subsecond/query"
)

// Format is one way to write a graph: Name is the value of the format
// parameter and flag; Title names it for people, as the text of its link
// on the flame page ("" keeps it off the page); MediaType and Ext are the
// media type and file extension of its file; Attachment says that its
// link saves a file rather than showing it; Help is a line for the CLI.
type Format struct {
	Name       string
	Title      string
	MediaType  string
	Ext        string
	Attachment bool
	Help       string

	write func(g *Graph, w io.Writer) error
}

// formats is the registry of export formats, in the order pages and help
// list them: the API's format parameter, the flame page's links and the
// CLI's --format read it. Adding a format is a row here and its writer.
var formats = []Format{
	{Name: "svg", Title: "SVG", MediaType: "image/svg+xml", Ext: "svg", Attachment: true,
		Help:  "a standalone SVG: click to zoom, search, hover",
		write: func(g *Graph, w io.Writer) error { return g.WriteSVG(w, SVGOptions{}) }},
	{Name: "folded", Title: "folded", MediaType: "text/plain; charset=utf-8", Ext: "folded.txt", Attachment: true,
		Help:  "folded stacks as stackcollapse-perf.pl prints them (differential: stack base target)",
		write: (*Graph).WriteFolded},
	{Name: "pprof", Title: "pprof", MediaType: "application/vnd.google.protobuf", Ext: "pb.gz", Attachment: true,
		Help:  "a gzipped pprof profile for go tool pprof (differential: base samples negated)",
		write: (*Graph).WritePprof},
	{Name: "speedscope", Title: "speedscope", MediaType: "application/json", Ext: "speedscope.json", Attachment: true,
		Help:  "every sample in time order, a profile per CPU; opens in speedscope (https://www.speedscope.app) (differential: the target range only)",
		write: (*Graph).WriteSpeedscope},
	{Name: "json", Title: "JSON", MediaType: "application/json", Ext: "json",
		Help:  "the graph as JSON (docs/contracts.md)",
		write: (*Graph).WriteJSON},
	{Name: "functions", MediaType: "application/json", Ext: "functions.json",
		Help:  "the function table as JSON, self and total per function",
		write: (*Graph).WriteFunctions},
}

// Formats returns the registry of export formats.
func Formats() []Format { return slices.Clone(formats) }

// FormatNames returns the formats' names, in registry order.
func FormatNames() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

// LookupFormat returns the format named name; "" is "json". An unknown
// name is a *query.ParamError for the format parameter, listing the
// formats.
func LookupFormat(name string) (Format, error) {
	if name == "" {
		name = "json"
	}
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, query.Invalidf("format", "%q is not one of %s", name, strings.Join(FormatNames(), ", "))
}

// Export writes g in one of the registered formats (Formats: "json", the
// default for "", "svg", "folded", "pprof", "functions"). An unknown format
// is an error wrapping subsecond.ErrInvalid that lists them.
func (g *Graph) Export(w io.Writer, format string) error {
	f, err := LookupFormat(format)
	if err != nil {
		return err
	}
	return f.write(g, w)
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
