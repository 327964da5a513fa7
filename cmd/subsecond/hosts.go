package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/markers"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// night is the host views' source over the local store: the store's
// profiles, captures and markers, and the rollups it keeps with each
// capture, cached in memory within a budget.
type night struct {
	*store.Store
	cache *timeline.RollupCache
}

func newNight(s *store.Store) night {
	return night{s, timeline.NewRollupCache(s.Rollup, 0)}
}

// warm reads every stored capture's rollup into the cache, newest first,
// until ctx ends or the cache's budget is spent; a capture imported
// before rollups were stored gets its rollup made and stored on the way.
func (n night) warm(ctx context.Context) {
	list, err := n.List(ctx)
	if err != nil {
		return
	}
	for _, p := range list {
		if ctx.Err() != nil {
			return
		}
		n.cache.Rollup(ctx, p.ID)
	}
}

// Rollup returns capture id's rollup through the cache.
func (n night) Rollup(ctx context.Context, id string) (*subsecond.Rollup, error) {
	return n.cache.Rollup(ctx, id)
}

// wallTime formats Unix nanoseconds as UTC to the millisecond.
func wallTime(ns int64) string { return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z") }

// approx marks an approximate time.
func approx(a bool) string {
	if a {
		return "≈"
	}
	return ""
}

// runHosts implements `subsecond hosts [--db PATH] [--format text|json]
// [HOST]`.
func runHosts(ctx context.Context, e env) error {
	if argAt(e.args, 0) == "label" {
		e.args = e.args[1:]
		return hostLabels(ctx, e)
	}
	r := newReadFlags("hosts", "Usage: subsecond hosts [--db PATH] [--format text|json] [HOST]\n       subsecond hosts label [--db PATH] HOST [KEY=VALUE…] [-k KEY…]\n\nLists the hosts of the stored captures: their labels, how many captures,\nsamples, and the wall-clock span they cover (≈ when some capture's time is\nan estimate). 'hosts label' sets and removes a host's labels.\nWith HOST, lists that host's captures in time order, where each lies on its\nnight and in which recording session, and the sessions when there are more\nthan one (a pause of more than 30 minutes starts another).")
	s, err := r.open(ctx, e, 0, 1, "HOST")
	if err != nil {
		return err
	}
	defer s.Close()
	if host := r.fs.Arg(0); host != "" {
		return hostCaptures(ctx, e, s, host, *r.format)
	}
	hosts, err := allHosts(ctx, s)
	if err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	if *r.format == "json" {
		return json.NewEncoder(e.stdout).Encode(timeline.HostList{Hosts: hosts}) // as the API sends it
	}
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tCAPTURES\tSAMPLES\tFROM (UTC)\tTO (UTC)\tWITHOUT WALL CLOCK\tLABELS")
	for _, h := range hosts {
		from, to := "-", "-"
		if h.End > 0 {
			from, to = approx(h.Approximate)+wallTime(h.Start), approx(h.Approximate)+wallTime(h.End)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%s\n", h.Host, h.Captures, h.Samples, from, to, h.Unanchored, formatLabels(h.Labels))
	}
	return tw.Flush()
}

// allHosts returns every host with its labels, read a page of
// query.MaxPerPage hosts at a time, as the API's pages list them.
func allHosts(ctx context.Context, s *store.Store) ([]timeline.Host, error) {
	hosts := []timeline.Host{}
	for after := ""; ; {
		page, next, err := timeline.HostPage(ctx, s, query.MaxPerPage, after)
		if err != nil {
			return nil, err
		}
		labels, err := s.HostLabelsOf(ctx, timeline.HostNames(page))
		if err != nil {
			return nil, err
		}
		timeline.Labelled(page, labels)
		hosts = append(hosts, page...)
		if next == "" {
			return hosts, nil
		}
		after = next
	}
}

// hostCaptures prints host's captures placed on its night
// (timeline.Captures), as a table or as the API's JSON.
func hostCaptures(ctx context.Context, e env, s *store.Store, host, format string) error {
	list, err := timeline.Captures(ctx, newNight(s), host, 0, "") // every capture: the CLI reads its own database
	if err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	if format == "json" {
		return json.NewEncoder(e.stdout).Encode(list) // as the API sends it
	}
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSESSION\tFROM (UTC)\tTO (UTC)\tSAMPLES\tCLOCK")
	for _, c := range list.Captures {
		a := approx(c.Approximate)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\n", c.ID, c.Name, c.Session, a+wallTime(c.Start), a+wallTime(c.End), c.Samples, c.Source)
	}
	if list.Unanchored > 0 {
		fmt.Fprintf(tw, "(%d more without wall-clock time)\n", list.Unanchored)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// More than one session: each, with its span; the host views show the
	// latest unless given --session or a range.
	if ss := timeline.SessionsOf(list.Captures); len(ss) > 1 {
		fmt.Fprintf(e.stdout, "\n%d recording sessions (a pause of more than %v starts another); the host views show the latest unless given --session N:\n", len(ss), timeline.SessionGap)
		tw = tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tFROM (UTC)\tTO (UTC)\tCAPTURES\tSAMPLES")
		for _, x := range ss {
			a := approx(x.Approximate)
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\n", x.Number, a+wallTime(x.Start), a+wallTime(x.End), x.Captures, x.Samples)
		}
		return tw.Flush()
	}
	return nil
}

// runTimeline implements `subsecond timeline --host H [--from T] [--to T]
// [--bucket B] [--width W] [--measure busy|system] [--format text|json]`:
// the host's cores × time map across its captures.
func runTimeline(ctx context.Context, e env) error {
	v := newHostFlags("timeline", e, query.ViewTimeline)
	v.add("measure")
	out := v.textOutput("/api/hosts/HOST/timeline")
	v.fs.Usage = func() {
		fmt.Fprintln(v.fs.Output(), "Usage: subsecond timeline --host HOST [--from T] [--to T] [--bucket B] [--measure busy|system] [--format text|json]\n\n"+
			"Prints the host's night: one row per CPU across all its captures in wall-clock\ntime, shaded by busy (or system) fraction, with the gaps between captures\ndrawn as ·, and the captures and markers listed below.\n\nFlags:")
		v.fs.PrintDefaults()
	}
	q, s, err := v.openHost(ctx, e.args, out)
	if err != nil {
		return err
	}
	defer s.Close()
	g, err := timeline.Timeline(ctx, newNight(s), *v.host, timeline.SpanOf(q))
	if err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	if *out.format == "json" {
		return json.NewEncoder(e.stdout).Encode(g) // as the API sends it
	}
	ms, err := s.Markers(ctx, *v.host, g.From, g.To)
	if err != nil {
		return err
	}
	return writeTimelineText(termWriter(e.stdout), g, ms, q.Measure == "system", *out.width)
}

// writeTimelineText renders g with one character per group of buckets:
// their mean fraction as ░ ▒ ▓ █, · where no capture covers them; then the
// captures and markers.
func writeTimelineText(out io.Writer, g *timeline.Grid, ms []subsecond.Marker, system bool, width int) error {
	t := newCellsText(&g.Cells, width)
	w := bufio.NewWriter(out)
	span := t.span()
	m := heatmap.MeasureBusy
	if system {
		m = heatmap.MeasureSystem
	}
	what := string(m)
	fmt.Fprintf(w, "%s: %d CPUs, %d captures from %s to %s (UTC), one character = %s; shading: %s fraction\n",
		g.Host, len(g.CPUs), len(g.Captures), wallTime(g.From), wallTime(g.To), time.Duration(span), what)
	writeMarkerRow(w, 8, ms, g.From, span, t.cols)
	t.writeRows(w, g.Fractions(m), g.Covered, func(int) string { return "" })
	fmt.Fprintf(w, "%8s  legend: blank = idle, ░ ▒ ▓ █ = %s up to 25%% 50%% 75%% 100%%, · = no capture; columns: mean %s, peak\n", "", what, what)
	if g.Unplaced > 0 {
		fmt.Fprintf(w, "%d captures of %s have no wall-clock time and are not shown (record with -k CLOCK_REALTIME, or keep perf script's --header)\n", g.Unplaced, g.Host)
	}
	fmt.Fprintln(w, "\nCaptures:")
	for _, c := range g.Captures {
		fmt.Fprintf(w, "  %s  %s%s to %s%s  %s\n", c.ID, approx(c.Approximate), wallTime(c.Start), approx(c.Approximate), wallTime(c.End), clip(c.Name, nameWidth))
	}
	if len(ms) > 0 {
		fmt.Fprintln(w, "\nMarkers:")
		for _, m := range ms {
			fmt.Fprintf(w, "  ▼ %s  %s\n", wallTime(m.Time), clip(m.Text, stackWidth))
		}
	}
	return w.Flush()
}

// writeMarkerRow writes, when ms holds any, a row titled "markers" (right
// aligned in label characters) with ▼ in the column of each marker, for
// cols columns of span ns from from.
func writeMarkerRow(w io.Writer, label int, ms []subsecond.Marker, from, span int64, cols int) {
	if len(ms) == 0 {
		return
	}
	row := []rune(strings.Repeat(" ", cols))
	for _, mk := range ms {
		if c := int((mk.Time - from) / span); c >= 0 && c < cols {
			row[c] = '▼'
		}
	}
	fmt.Fprintf(w, "%*s  %s\n", label, "markers", string(row))
}

// hostHotspots is `subsecond hotspots --host H [--session N]`: the
// episodes of one recording session, by default the latest.
func hostHotspots(ctx context.Context, e env, db, host string, q *query.Query, format string) error {
	s, err := openExisting(ctx, e, db)
	if err != nil {
		return err
	}
	defer s.Close()
	ms, err := s.Markers(ctx, host, 0, timeline.EndOfTime)
	if err != nil {
		return err
	}
	rep, err := timeline.Hotspots(ctx, newNight(s), host, timeline.HotOptionsOf(q, ms))
	if err != nil {
		return fmt.Errorf("hotspots: %w", err)
	}
	if format == "json" {
		return json.NewEncoder(e.stdout).Encode(rep) // as the API sends it
	}
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	what := web.HotspotsWhat(rep.Measure, rep.Threshold, rep.Min)
	if len(rep.Spots) == 0 {
		fmt.Fprintf(tw, "No CPU of %s stayed %s in recording session %d.\n", host, what, rep.Session)
		return tw.Flush()
	}
	first := ""
	if len(ms) > 0 {
		first = "; those just before a marker first"
	}
	fmt.Fprintf(tw, "%d episodes on %s in recording session %d %s, the %d most unusual first (score = samples × (1 − the CPU's usual share over the session)%s):\n",
		rep.Found, host, rep.Session, what, len(rep.Spots), first)
	fmt.Fprintln(tw, "#\tCPU\tSTART (UTC)\tEND\tBUSY\tSYS\tSCORE\tCOMM\tTOP FUNCTION\tCAPTURE\tSTART s\tMARKER")
	for i, sp := range rep.Spots {
		mark := ""
		if sp.Marker != nil {
			mark = fmt.Sprintf("%s before %q", time.Duration(sp.Before).Round(100*time.Millisecond), clip(sp.Marker.Text, nameWidth))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s%s\t%s\t%.0f%%\t%.0f%%\t%.0f\t%s\t%s\t%s\t%s\t%s\n", i+1, sp.CPU, approx(sp.Approximate), wallTime(sp.Start),
			time.Unix(0, sp.End).UTC().Format("15:04:05.0"), 100*sp.Busy, 100*sp.System, sp.Score, clip(sp.Comm, nameWidth), clip(sp.Function, nameWidth), sp.Capture,
			query.DisplaySeconds(sp.Start-sp.Offset-sp.T0), mark)
	}
	return tw.Flush()
}

// runMarkers implements `subsecond markers import --host H [--match REGEX]
// [--tz ZONE] [--year Y] FILE…` and `subsecond markers list --host H
// [--from T] [--to T] [--format text|json]`.
func runMarkers(ctx context.Context, e env) error {
	switch argAt(e.args, 0) {
	case "import":
		return importMarkers(ctx, e, e.args[1:])
	case "list":
		return listMarkers(ctx, e, e.args[1:])
	}
	fs := flag.NewFlagSet("markers", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), markersUsage+"\n\n'subsecond markers import --help' and 'subsecond markers list --help' list their flags.")
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	return usageError(fs, "want 'markers import' or 'markers list'")
}

const markersUsage = "Usage: subsecond markers import --host HOST [--match REGEX] [--tz ZONE] FILE…\n" +
	"       subsecond markers list --host HOST [--from T] [--to T] [--format text|json]\n\n" +
	"import reads kernel logs (dmesg -T, journalctl -k -o short-iso, or any text with\n" +
	"ISO or syslog timestamps; - for standard input) and stores each line matching\n" +
	"--match as a marker of HOST, drawn on its timeline; the hot spots just before\n" +
	"a marker rank first. list prints them with the capture range 10 s before each."

// listMarkers implements `subsecond markers list`.
func listMarkers(ctx context.Context, e env, args []string) error {
	v := newHostFlags("markers", e, query.ViewMarkers)
	format := v.fs.String("format", "text", "output format: text or json (the API's /api/hosts/HOST/markers)")
	v.fs.Usage = func() {
		fmt.Fprintln(v.fs.Output(), markersUsage+"\n\nFlags:")
		v.fs.PrintDefaults()
	}
	q, err := v.parseHost(args)
	if err != nil {
		return err
	}
	if err := checkFormat("markers", *format, "text", "json"); err != nil {
		return err
	}
	s, err := openExisting(ctx, e, *v.db)
	if err != nil {
		return err
	}
	defer s.Close()
	from, to := timeline.MarkerRange(q)
	ms, err := s.Markers(ctx, *v.host, from, to)
	if err != nil {
		return err
	}
	list, err := timeline.Markers(ctx, newNight(s), *v.host, ms)
	if err != nil {
		return fmt.Errorf("markers: %w", err)
	}
	if *format == "json" {
		return json.NewEncoder(e.stdout).Encode(list) // as the API sends it
	}
	w := bufio.NewWriter(termWriter(e.stdout))
	for _, m := range list.Markers {
		where := "no capture holds the 10 s before it"
		if b := m.Before; b != nil {
			where = fmt.Sprintf("10 s before: --host %s --from %s --to %s", *v.host, query.FormatWallTime(b.From), query.FormatWallTime(b.To))
			if b.Missing > 0 {
				where += fmt.Sprintf(" (%s of it not recorded)", query.DisplayDuration(b.Missing))
			}
		}
		fmt.Fprintf(w, "%s  %s\n    %s\n", wallTime(m.Time), clip(m.Text, stackWidth), where)
	}
	return w.Flush()
}

// importMarkers implements `subsecond markers import`.
func importMarkers(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("markers", flag.ContinueOnError)
	db := dbFlag(fs)
	host := fs.String("host", "", "the host the log is from (required)")
	match := fs.String("match", "", "regular expression naming the events of interest, e.g. 'NETDEV WATCHDOG|reset' (default: every line)")
	tz := fs.String("tz", "UTC", "time zone of timestamps that carry none (dmesg -T, syslog), e.g. Europe/Berlin")
	year := fs.Int("year", 0, "year of syslog timestamps, which carry none (default: this year)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), markersUsage+"\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if err := query.CheckHost(*host); err != nil {
		return fmt.Errorf("markers: %w", err)
	}
	opt := markers.Options{Year: *year}
	var err error
	if opt.Location, err = time.LoadLocation(*tz); err != nil {
		return fmt.Errorf("markers: --tz %q: %v", *tz, err)
	}
	if *match != "" {
		if opt.Match, err = regexp.Compile(*match); err != nil {
			return fmt.Errorf("markers: --match: %v", err)
		}
	}
	if err := checkArgs(fs, 1, -1, "one or more log files (- for standard input)"); err != nil {
		return err
	}
	s, err := openStore(ctx, e, *db, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	return eachFile(e, "markers", fs.Args(), func(name string, r io.Reader) error {
		ms, err := markers.Parse(r, opt)
		if err != nil {
			return err
		}
		added, err := s.AddMarkers(ctx, *host, ms)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: %d markers of %s, %d new\n", name, len(ms), *host, added.Added)
		if added.Dropped > 0 {
			fmt.Fprintf(e.stdout, "%s: %d oldest markers of %s dropped: a host keeps its newest %d\n", name, added.Dropped, *host, subsecond.MaxHostMarkers)
		}
		return nil
	})
}
