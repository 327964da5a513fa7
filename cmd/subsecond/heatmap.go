package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/query"
)

// runHeatmap implements `subsecond heatmap [--rows R] [--col C] [filters]
// [--format text|json|csv] FILE|ID`: the offset heatmap, columns of C
// seconds from T0 across, R rows of C/R within each column down.
func runHeatmap(ctx context.Context, e env) error {
	v := newViewFlags("heatmap", e, query.ViewHeatmap)
	format := v.fs.String("format", "text", "output format: text, json or csv")
	v.usage("heatmap [--rows R] [--col C] [--cpu LIST] [filters] [--format text|json|csv] FILE|ID",
		"Prints the subsecond offset heatmap: one column per C seconds from T0, R rows\nwithin each, each cell the number of samples that pass the filters.")
	q, err := v.parse(e.args)
	if err != nil {
		return err
	}
	if err := checkFormat("heatmap", *format, "text", "json", "csv"); err != nil {
		return err
	}
	c, err := v.load(ctx, q)
	if err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	g, err := heatmap.Offset(c, q.Filter, heatmap.Options{Col: q.Col, Rows: q.Rows})
	if err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	switch *format {
	case "json":
		return json.NewEncoder(e.stdout).Encode(g)
	case "csv":
		w := csv.NewWriter(e.stdout)
		w.Write([]string{"col", "row", "start_s", "end_s", "samples"})
		for col := range g.Counts {
			for row, n := range g.Counts[col] {
				r := g.CellRange(col, row)
				w.Write([]string{strconv.Itoa(col), strconv.Itoa(row), query.FormatSeconds(r.Start - g.T0),
					query.FormatSeconds(r.End - g.T0), strconv.FormatInt(n, 10)})
			}
		}
		w.Flush()
		return w.Error()
	}
	return writeHeatmapText(e, c, g)
}

// writeHeatmapText renders g with one character per cell: columns across
// (seconds from T0 on the axis), rows down (milliseconds into the column).
func writeHeatmapText(e env, c *subsecond.Capture, g *heatmap.Grid) error {
	w := bufio.NewWriter(termWriter(e.stdout))
	fmt.Fprintf(w, "%s: %d samples, T0 = %s s, %d columns of %s × %d rows; darkest = %d samples\n",
		clip(c.Profile.Name, nameWidth), g.Total, query.FormatSeconds(g.T0), g.Cols, query.DisplayDuration(g.Col), g.Rows, g.Max)
	const label = 9 // width of the ms axis
	// Column axis: the offset in seconds every ten columns.
	axis := []rune(strings.Repeat(" ", g.Cols+10))
	for col := 0; col < g.Cols; col += 10 {
		copy(axis[col:], []rune(query.DisplaySeconds(int64(col)*g.Col)))
	}
	fmt.Fprintf(w, "%*s  %s\n", label, "s →", strings.TrimRight(string(axis), " "))
	line := make([]rune, g.Cols)
	for row := 0; row < g.Rows; row++ {
		for col := range g.Counts {
			line[col] = shade(float64(g.Counts[col][row]), float64(g.Max))
		}
		ms := g.CellRange(0, row).Start - g.T0
		fmt.Fprintf(w, "%*s │%s│\n", label, strconv.FormatFloat(float64(ms)/1e6, 'f', -1, 64)+" ms", string(line))
	}
	fmt.Fprintf(w, "%*s  legend: %q = 0, ░ ▒ ▓ █ = up to ¼ ½ ¾ 1 × %d samples\n", label, "", " ", g.Max)
	return w.Flush()
}

// checkFormat reports an error unless format is one of allowed.
func checkFormat(cmd, format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", cmd, query.Invalidf("format", "%q is not one of %s", format, strings.Join(allowed, ", ")))
}
