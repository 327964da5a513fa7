package flame

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

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
	if g.BaseN != nil {
		// base_total is written even when 0, which omitempty would drop.
		return json.NewEncoder(w).Encode(struct {
			*Graph
			BaseTotal int64 `json:"base_total"`
		}{g, g.BaseTotal})
	}
	return json.NewEncoder(w).Encode(g)
}

// WriteFolded writes g as folded stacks exactly as `subsecond collapse`
// prints the same samples: one line per distinct stack, sorted, the
// command name (spaces as underscores) then the frames root-first,
// ';'-joined, a space and the summed sample period (1 per sample where
// perf printed none).
func (g *Graph) WriteFolded(w io.Writer) error {
	sums := map[string]int64{}
	var stack []string
	for i := 1; i < g.Len(); i++ {
		d := int(g.Depth[i])
		name := g.NameOf(i)
		if d == 1 {
			name = CommName(name)
		}
		stack = append(stack[:d-1], name)
		if g.SelfN[i] > 0 {
			sums[strings.Join(stack, ";")] += g.selfW[i]
		}
	}
	lines := make([]string, 0, len(sums))
	for k := range sums {
		lines = append(lines, k)
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(sums[l], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
