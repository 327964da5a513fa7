package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/subsecond/subsecond/engine"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/web"
)

// runHotspots implements `subsecond hotspots [--measure busy|system]
// [--threshold 0.7] [--min 1s] [--bucket B] [--start S] [--end E] [filters]
// [--format text|json] FILE|ID`: busy (or system) episodes per CPU and the
// hottest heatmap cells, of the whole capture or of [S, E).
func runHotspots(ctx context.Context, e env) error {
	v := newViewFlags("hotspots", e, query.ViewHotspots|query.ViewHostHotspots)
	format := v.fs.String("format", "text", "output format: text or json (what the API sends)")
	v.host = v.fs.String("host", "", "instead of FILE|ID: the episodes across every capture of this host, on one score scale")
	system := v.fs.Bool("system", false, "the same as --measure system")
	v.usage("hotspots [--measure busy|system] [--threshold 0.7] [--min 1s] [--bucket B] [--limit N] [--start S] [--end E] [filters] [--format text|json] FILE|ID\n       subsecond hotspots --host HOST [--session N] [--measure busy|system] [--threshold 0.7] [--min 1s] [--limit N] [--near 10s] [--format text|json]",
		"Lists, per CPU, the windows where the busy fraction (or with --measure system\nthe system fraction) stays at or above the threshold for at least --min, with\nwhat ran there, most unusual first; then the hottest heatmap cells. With --start\nand --end, only those within [S, E) seconds from T0. With --host,\nthe episodes of one recording session of the host (--session N, by default\nthe latest), an episode crossing a rotation point as one, those ending within --near before a marker marked and first. docs/hotspots.md explains the score.")
	q, err := v.parse(e.args)
	if err != nil {
		return err
	}
	if *system {
		if v.params["measure"].val == "busy" {
			return fmt.Errorf("hotspots: give --system or --measure busy, not both")
		}
		q.Measure = "system"
	}
	if err := checkFormat("hotspots", *format, "text", "json"); err != nil {
		return err
	}
	if *v.host != "" {
		if v.fs.NArg() > 0 {
			return fmt.Errorf("hotspots: give --host or a FILE|ID, not both")
		}
		if err := query.CheckHost(*v.host); err != nil {
			return fmt.Errorf("hotspots: %w", err)
		}
		if err := v.only(query.ViewHostHotspots, "with --host: a host's hot spots take --session, --measure, --threshold, --min, --limit and --near"); err != nil {
			return err
		}
		return hostHotspots(ctx, e, *v.db, *v.host, q, *format)
	}
	if err := v.only(query.ViewHotspots, "without --host"); err != nil {
		return err
	}
	c, err := v.load(ctx, q)
	if err != nil {
		return fmt.Errorf("hotspots: %w", err)
	}
	if err := q.Resolve(&c.Profile); err != nil {
		return fmt.Errorf("hotspots: %w", err)
	}
	rep, err := engine.Engine{}.Hotspots(c, q)
	if err != nil {
		return fmt.Errorf("hotspots: %w", err)
	}
	if c.Profile.ID != "" {
		link.Hotspots(rep, c.Profile.ID, q.Filter)
	}
	if *format == "json" {
		return json.NewEncoder(e.stdout).Encode(web.NewHotspotList(rep)) // as the API sends it
	}
	t0 := rep.T0
	sec := func(ns int64) string { return query.DisplaySeconds(ns - t0) }
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	what := web.HotspotsWhat(rep.Measure, rep.Threshold, rep.Min) + web.HotspotsWhere(t0, rep.Start, rep.End)
	if rep.Note != "" {
		fmt.Fprintf(tw, "Note: %s.\n", rep.Note)
	}
	if len(rep.Spots) == 0 {
		fmt.Fprintf(tw, "No CPU stayed %s.\n", what)
	} else {
		fmt.Fprintf(tw, "%d %s %s, the %d most unusual first (score = %s samples × (the command's share of them − its usual share of the core)):\n",
			rep.Found, episodes(rep.Found), what, len(rep.Spots), rep.Measure)
		fmt.Fprintln(tw, "#\tCPU\tSTART s\tEND s\tBUSY\tSYS\tUSER\tSCORE\tCOMM\tTOP FUNCTION\tTOP STACK")
	}
	for i, s := range rep.Spots {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.0f%%\t%.0f%%\t%.0f%%\t%.0f\t%s (%.0f%%)\t%s (%.0f%%)\t%s\n", i+1, s.CPU, sec(s.Start), sec(s.End),
			100*s.Busy, 100*s.System, 100*s.User, s.Score, clip(s.Comm, nameWidth), 100*s.CommShare, clip(s.Function, nameWidth), 100*s.FunctionShare, clip(s.Stack, stackWidth))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "Hottest heatmap cells (1 s columns, 50 rows):")
	fmt.Fprintln(tw, "START s\tEND s\tSAMPLES")
	for _, cell := range rep.Cells {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", sec(cell.Start), sec(cell.End), cell.Count)
	}
	return tw.Flush()
}

// episodes returns the noun for n episodes: "episode" or "episodes".
func episodes(n int) string {
	if n == 1 {
		return "episode"
	}
	return "episodes"
}
