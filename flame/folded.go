package flame

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond/symbol"
)

// WriteFolded writes g as folded stacks exactly as `subsecond collapse`
// prints the same samples: one line per distinct stack, sorted, the
// command name (spaces as underscores) then the frames root-first,
// ';'-joined, a space and the summed sample period (1 per sample where
// perf printed none). Nodes that differ only by DSO fold to one line.
//
// A differential graph is written in flamegraph.pl's difffolded format,
// which `flamegraph.pl` reads: each stack seen in either range, then the
// base's and the target's summed periods, "stack base target", 0 where a
// range lacks the stack.
func (g *Graph) WriteFolded(w io.Writer) error {
	type line struct {
		stack        string
		weight, base int64
	}
	diff := g.BaseN != nil
	var lines []line
	var path []byte
	var ends []int // ends[d-1]: the length of path through the node at depth d
	for i := 1; i < g.Len(); i++ {
		d := int(g.Depth[i])
		ends = ends[:d-1]
		if d == 1 {
			path = append(path[:0], symbol.Comm(g.NameOf(i))...)
		} else {
			path = append(append(path[:ends[d-2]], ';'), g.NameOf(i)...)
		}
		ends = append(ends, len(path))
		switch {
		case g.SelfN[i] > 0 && !diff:
			lines = append(lines, line{stack: string(path), weight: g.selfW[i]})
		case diff && (g.SelfN[i] > 0 || g.BaseSelfN[i] > 0):
			lines = append(lines, line{string(path), g.selfW[i], g.baseSelfW[i]})
		}
	}
	slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.stack, b.stack) })
	bw := bufio.NewWriter(w)
	var num []byte
	for i := 0; i < len(lines); {
		l := lines[i]
		for i++; i < len(lines) && lines[i].stack == l.stack; i++ {
			l.weight += lines[i].weight
			l.base += lines[i].base
		}
		bw.WriteString(l.stack)
		num = append(num[:0], ' ')
		if diff {
			num = append(strconv.AppendInt(num, l.base, 10), ' ')
		}
		num = append(strconv.AppendInt(num, l.weight, 10), '\n')
		bw.Write(num)
	}
	return bw.Flush()
}
