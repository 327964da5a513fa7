package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
)

// runFlamegraph implements `subsecond flamegraph --start S --end E
// [filters] [--base FILE|ID] [--start2 S2 --end2 E2]
// --format FORMAT [-o OUT] FILE|ID`: the flame
// graph of [S, E) seconds from T0 (default: the whole capture), or with
// --start2/--end2 or --base the differential graph from that base range (of
// the base capture, seconds from its T0, the whole of it by default) to
// [S, E).
func runFlamegraph(ctx context.Context, e env) error {
	v := newViewFlags("flamegraph", e, query.ViewFlame|query.ViewDiff)
	format := v.fs.String("format", "svg", formatUsage())
	out := v.fs.String("o", "", "write to this file instead of standard output")
	v.usage("flamegraph [--start S] [--end E] [filters] [--base FILE|ID] [--start2 S2 --end2 E2] [--format "+strings.Join(flame.FormatNames(), "|")+"] [-o OUT] FILE|ID",
		"Writes the flame graph of the samples in [S, E) seconds from T0 that pass the\nfilters; with --start2/--end2, the differential graph from that base range,\nof the capture --base names when given. Differential exports: folded as\nflamegraph.pl's difffolded (stack base target), pprof as go tool pprof\n-diff_base builds it (base samples negated), json and functions with both counts.\n\n"+formatList())
	q, err := v.parse(e.args)
	if err != nil {
		return err
	}
	if _, err := flame.LookupFormat(*format); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	c, err := v.load(ctx, q)
	if err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	if err := q.Resolve(&c.Profile); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	var g *flame.Graph
	if q.HasBase() {
		bc := c
		if q.Base != "" {
			if bc, err = loadCapture(ctx, e, q.Base, *v.db); err != nil {
				return fmt.Errorf("flamegraph: --base: %w", err)
			}
			if err := q.ResolveBase(&bc.Profile); err != nil {
				return fmt.Errorf("flamegraph: %w", err)
			}
		}
		if g, err = flame.DiffProfiles(c, bc, q.Filter, q.Range2, q.Range); err != nil {
			return fmt.Errorf("flamegraph: %w", err)
		}
	} else if g, err = flame.Build(c, q.Filter, q.Range); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}

	var w io.Writer = e.stdout
	if *out != "" {
		file, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("flamegraph: %w", err)
		}
		defer file.Close()
		bw := bufio.NewWriter(file)
		if err := g.Export(bw, *format); err != nil {
			return fmt.Errorf("flamegraph: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("flamegraph: %w", err)
		}
		if err := file.Close(); err != nil {
			return fmt.Errorf("flamegraph: %w", err)
		}
		fmt.Fprintf(e.stderr, "subsecond: wrote %s (%d samples, %d frames)\n", *out, g.Total, g.Len())
		return nil
	}
	if err := g.Export(w, *format); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	return nil
}

// formatUsage describes --format in one line from the registry of export
// formats; formatList describes each one, for the command's usage text.
func formatUsage() string {
	names := flame.FormatNames()
	return "output format: " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func formatList() string {
	var b strings.Builder
	b.WriteString("Formats:")
	for _, f := range flame.Formats() {
		fmt.Fprintf(&b, "\n  %-10s %s", f.Name, f.Help)
	}
	return b.String()
}
