package flame

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteFolded writes g as folded stacks exactly as `subsecond collapse`
// prints the same samples: one line per distinct stack, sorted, the
// command name (spaces as underscores) then the frames root-first,
// ';'-joined, a space and the summed sample period (1 per sample where
// perf printed none). Nodes that differ only by DSO fold to one line.
func (g *Graph) WriteFolded(w io.Writer) error {
	type line struct {
		stack  string
		weight int64
	}
	var lines []line
	var path []byte
	var ends []int // ends[d-1]: the length of path through the node at depth d
	for i := 1; i < g.Len(); i++ {
		d := int(g.Depth[i])
		ends = ends[:d-1]
		if d == 1 {
			path = append(path[:0], CommName(g.NameOf(i))...)
		} else {
			path = append(append(path[:ends[d-2]], ';'), g.NameOf(i)...)
		}
		ends = append(ends, len(path))
		if g.SelfN[i] > 0 {
			lines = append(lines, line{string(path), g.selfW[i]})
		}
	}
	slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.stack, b.stack) })
	bw := bufio.NewWriter(w)
	var num []byte
	for i := 0; i < len(lines); {
		l := lines[i]
		for i++; i < len(lines) && lines[i].stack == l.stack; i++ {
			l.weight += lines[i].weight
		}
		bw.WriteString(l.stack)
		num = append(strconv.AppendInt(append(num[:0], ' '), l.weight, 10), '\n')
		bw.Write(num)
	}
	return bw.Flush()
}
