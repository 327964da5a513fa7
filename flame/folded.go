package flame

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

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
