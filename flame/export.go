package flame

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

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

// WriteJSON writes g in the JSON shape of the package doc.
func (g *Graph) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(g)
}

// WriteFolded writes g as folded stacks, one line per node with self
// samples: the command name (spaces as underscores), then the frames
// root-first, ';'-joined, a space and the count. It is what `subsecond
// collapse` prints for the same samples, lines in the graph's order.
func (g *Graph) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var stack []int32
	for i := 1; i < g.Len(); i++ {
		d := int(g.Depth[i])
		stack = append(stack[:d-1], int32(i))
		if g.SelfN[i] == 0 {
			continue
		}
		for j, n := range stack {
			if j > 0 {
				bw.WriteByte(';')
			}
			if j == 0 {
				bw.WriteString(CommName(g.NameOf(int(n))))
			} else {
				bw.WriteString(g.NameOf(int(n)))
			}
		}
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(g.SelfN[i], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
