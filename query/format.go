package query

import "strings"

// ExportFormat is one way to write a flame graph: Name is the value of the
// format parameter and flag, ContentType and Ext the HTTP content type and
// file extension of a download, Label the text of its link on the flame
// page (none when empty), Download whether that link saves a file rather
// than opening it, and Help a line for the CLI.
type ExportFormat struct {
	Name        string
	ContentType string
	Ext         string
	Label       string
	Download    bool
	Help        string
}

// exportFormats is the registry of export formats, in the order pages and
// help list them. The flame package's Export holds the writer of each and
// its tests check that the two agree; the API, the flame page's links and
// the CLI's --format read this list. Adding a format is a row here and a
// writer there.
var exportFormats = []ExportFormat{
	{Name: "svg", ContentType: "image/svg+xml", Ext: "svg", Label: "SVG", Download: true,
		Help: "a standalone SVG: click to zoom, search, hover"},
	{Name: "folded", ContentType: "text/plain; charset=utf-8", Ext: "folded.txt", Label: "folded", Download: true,
		Help: "folded stacks as stackcollapse-perf.pl prints them (differential: stack base target)"},
	{Name: "pprof", ContentType: "application/vnd.google.protobuf", Ext: "pb.gz", Label: "pprof", Download: true,
		Help: "a gzipped pprof profile for go tool pprof (differential: base samples negated)"},
	{Name: "json", ContentType: "application/json", Ext: "json", Label: "JSON",
		Help: "the graph as JSON (docs/contracts.md)"},
	{Name: "functions", ContentType: "application/json", Ext: "functions.json",
		Help: "the function table as JSON, self and total per function"},
}

// ExportFormats returns the registry of export formats.
func ExportFormats() []ExportFormat {
	out := make([]ExportFormat, len(exportFormats))
	copy(out, exportFormats)
	return out
}

// ExportFormatNames returns the formats' names, in registry order.
func ExportFormatNames() []string {
	names := make([]string, len(exportFormats))
	for i, f := range exportFormats {
		names[i] = f.Name
	}
	return names
}

// LookupExportFormat returns the format named name; "" is "json". An
// unknown name is a *ParamError for the format parameter, listing the
// formats.
func LookupExportFormat(name string) (ExportFormat, error) {
	if name == "" {
		name = "json"
	}
	for _, f := range exportFormats {
		if f.Name == name {
			return f, nil
		}
	}
	return ExportFormat{}, Invalidf("format", "%q is not one of %s", name, strings.Join(ExportFormatNames(), ", "))
}
