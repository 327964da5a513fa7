package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
)

// runFlamegraph implements `subsecond flamegraph --start S --end E
// [filters] [--base FILE|ID] [--start2 S2 --end2 E2]
// --format FORMAT [-o OUT] FILE|ID`: the flame
// graph of [S, E) seconds from T0 (default: the whole capture), or with
// --start2/--end2 or --base the differential graph from that base range (of
// the base capture, seconds from its T0, the whole of it by default) to
// [S, E); `subsecond flamegraph --host H --from T --to T [--from2 T2 --to2
// T2]` draws the same of a host's wall-clock range across its captures.
func runFlamegraph(ctx context.Context, e env) error {
	v := newViewFlags("flamegraph", e, query.ViewFlame|query.ViewDiff)
	format := v.fs.String("format", "svg", formatUsage())
	out := v.fs.String("o", "", "write to this file instead of standard output")
	v.host = v.fs.String("host", "", "instead of FILE|ID: the host whose wall-clock range --from, --to (--from2, --to2 for a differential graph's base) spans its captures")
	v.usage("flamegraph [--start S] [--end E] [filters] [--base FILE|ID] [--start2 S2 --end2 E2] [--format "+strings.Join(flame.FormatNames(), "|")+"] [-o OUT] FILE|ID\n       subsecond flamegraph --host HOST [--from T] [--to T] [filters] [--from2 T2 --to2 T2] [--format FORMAT] [-o OUT]",
		"Writes the flame graph of the samples in [S, E) seconds from T0 that pass the\nfilters; with --start2/--end2, the differential graph from that base range,\nof the capture --base names when given. With --host, the same of the host's\nwall-clock range [T, T) across every capture that recorded part of it (times\nas RFC 3339 or Unix seconds); json says how much of it none recorded.\nDifferential exports: folded as flamegraph.pl's difffolded (stack base\ntarget), pprof as go tool pprof -diff_base builds it (base samples negated),\njson and functions with both counts.\n\n"+formatList())
	q, err := v.parse(e.args)
	if err != nil {
		return err
	}
	if _, err := flame.LookupFormat(*format); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	var g *flame.Graph
	if *v.host != "" {
		g, err = hostGraph(ctx, v, q)
	} else {
		g, err = captureGraph(ctx, v, q)
	}
	if err != nil {
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

// captureGraph returns the flame graph (or differential graph) q asks for
// of the capture the command's argument names.
func captureGraph(ctx context.Context, v *viewFlags, q *query.Query) (*flame.Graph, error) {
	c, err := v.load(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := q.Resolve(&c.Profile); err != nil {
		return nil, err
	}
	if !q.HasBase() {
		return flame.Build(c, q.Filter, q.Range)
	}
	bc := c
	if q.Base != "" {
		if bc, err = loadCapture(ctx, v.e, q.Base, *v.db); err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
		if err := q.ResolveBase(&bc.Profile); err != nil {
			return nil, err
		}
	}
	return flame.DiffProfiles(c, bc, q.Filter, q.Range2, q.Range)
}

// hostGraph returns the flame graph (or differential graph) of --host's
// wall-clock range across its captures (--from, --to; --from2, --to2 for
// the base), as the API's /api/hosts/{host}/flamegraph computes it.
func hostGraph(ctx context.Context, v *viewFlags, q *query.Query) (*flame.Graph, error) {
	if v.fs.NArg() > 0 {
		return nil, fmt.Errorf("give --host or a FILE|ID, not both")
	}
	if err := query.CheckHost(*v.host); err != nil {
		return nil, err
	}
	s, err := openExisting(ctx, v.e, *v.db)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	src := newNight(s)
	target, base, err := timeline.SelectQuery(ctx, src, *v.host, q, q.HasBase())
	if err != nil {
		return nil, err
	}
	c, err := target.Load(ctx, src, nil)
	if err != nil {
		return nil, err
	}
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	var g *flame.Graph
	if base == nil {
		g, err = flame.Build(c, q.Filter, q.Range)
	} else {
		var bc *subsecond.Capture
		if bc, err = base.Load(ctx, src, nil); err != nil {
			return nil, err
		}
		if g, err = flame.DiffProfiles(c, bc, q.Filter, q.Range2, q.Range); err == nil {
			g.BaseUnrecorded = base.Unrecorded
		}
	}
	if err != nil {
		return nil, err
	}
	g.Unrecorded = target.Unrecorded
	return g, nil
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
