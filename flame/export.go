package flame

import (
	"fmt"
	"io"

	"github.com/subsecond/subsecond"
)

// Formats lists the export formats Export writes.
var Formats = []string{"json", "folded", "svg", "pprof"}

// Export writes g in format "json", "folded", "svg" or "pprof". An unknown
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
	}
	return fmt.Errorf("format: %q is not json, folded, svg or pprof: %w", format, subsecond.ErrInvalid)
}
