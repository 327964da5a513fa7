package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/sysstat"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// runState implements `subsecond state --host H [--name cpu.sys] [--from T]
// [--to T] [--bucket B] [--session N] [--format text|json]`: one kind of the
// host's series on the columns `subsecond timeline` draws for the same
// flags, and `subsecond state import --host H FILE`.
func runState(ctx context.Context, e env) error {
	if argAt(e.args, 0) == "import" {
		e.args = e.args[1:]
		return importState(ctx, e)
	}
	v := newHostFlags("state", e, query.ViewSeries)
	v.add("comm")
	moves := v.fs.Bool("moves", false, "rank what moves with the series (--name, --series_label, --series_cpu): the commands and functions whose share of the host rises and falls with it; or, with --comm (and --frame), the series that move with that command's share")
	out := v.textOutput("/api/hosts/HOST/series")
	v.fs.Usage = func() {
		fmt.Fprintln(v.fs.Output(), `Usage: subsecond state --host HOST [--name KIND] [--from T] [--to T] [--bucket B] [--format text|json]
       subsecond state --host HOST --moves (--name KIND [--series_label L] [--series_cpu N] | --comm COMM [--frame FUNCTION])
       subsecond state import --host HOST [--tz ZONE] FILE

Prints one kind of the host's series, recorded beside its captures by
'subsecond record' or imported from sysstat: per-CPU kinds (cpu.sys, the
default, cpu.usr, … as mpstat shows them) one row per CPU shaded like
'subsecond timeline', on its columns for the same flags; other kinds (cgroups,
cgroup.dying, irq, net.errors, …) one row per series shaded up to its peak.

--moves ranks what moves with a series: the commands and functions whose
share of the host's samples rises and falls with it, by rank correlation
over 120 windows of 5 s spread over the session (rho near 1: together; near
-1: opposite; n: the windows it rests on). With --comm (and --frame) it
ranks the host's series that move with that command's share instead. A
correlation says where to look, not what caused what.

'state import' reads what was recorded before: the text of 'mpstat -P ALL 1'
or 'sar -P ALL' (with its header line, which gives the date), or timestamped
/proc/cgroups snapshots ('while sleep 1; do date -Ins; cat /proc/cgroups; done').

Flags:`)
		v.fs.PrintDefaults()
	}
	q, s, err := v.openHost(ctx, e.args, out)
	if err != nil {
		return err
	}
	defer s.Close()
	if *moves {
		return writeMoves(ctx, e, s, *v.host, q, *out.format)
	}
	if q.Filter.Comm != "" {
		return fmt.Errorf("state: --comm ranks the series that move with a command; add --moves")
	}
	l, err := timeline.Lane(ctx, newNight(s), s, *v.host, q.Series, timeline.SpanOf(q))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if *out.format == "json" {
		return json.NewEncoder(e.stdout).Encode(l) // as the API sends it
	}
	ms, err := s.Markers(ctx, *v.host, l.From, l.To)
	if err != nil {
		return err
	}
	return writeLaneText(termWriter(e.stdout), l, ms, *out.width)
}

// writeLaneText renders l with one character per group of buckets, the
// mean of their values shaded ░ ▒ ▓ █: a share (%) up to 100, a rate up to
// the row's peak, a count or a size from the row's lowest to its highest
// (so that a leak shows as a rise); · where nothing was recorded. A
// markers row marks ms; each row ends with its mean and peak.
func writeLaneText(out io.Writer, l *timeline.SeriesLane, ms []subsecond.Marker, width int) error {
	nb := 0
	if len(l.Series) > 0 {
		nb = len(l.Series[0].Values)
	} else if l.Bucket > 0 {
		nb = int((l.To - l.From + l.Bucket - 1) / l.Bucket)
	}
	per, cols := fitColumns(nb, width)
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "%s: %s (%s) from %s to %s (UTC), one character = %s\n", l.Host, l.Name, l.Help,
		wallTime(l.From), wallTime(l.To), time.Duration(int64(per)*l.Bucket))
	if len(l.Series) == 0 {
		fmt.Fprintf(w, "no %s series recorded in this range (record with 'subsecond record', or 'subsecond state import' mpstat/sar text)\n", l.Name)
		return w.Flush()
	}
	writeMarkerRow(w, 12, ms, l.From, int64(per)*l.Bucket, cols)
	level := l.Unit == "count" || l.Unit == "bytes"
	line := make([]rune, cols)
	for _, s := range l.Series {
		means := make([]float64, cols)
		seen := make([]bool, cols)
		lo, hi := math.Inf(1), math.Inf(-1)
		var sum float64
		n := 0
		for c := range line {
			var v float64
			k := 0
			for b := c * per; b < min((c+1)*per, nb); b++ {
				if s.Values[b] != nil {
					v += *s.Values[b]
					k++
				}
			}
			if k > 0 {
				means[c], seen[c] = v/float64(k), true
				lo, hi = min(lo, means[c]), max(hi, means[c])
				sum, n = sum+means[c], n+1
			}
		}
		for c := range line {
			switch {
			case !seen[c]:
				line[c] = '·'
			case l.Unit == "%":
				line[c] = shade(means[c], 100)
			case level && hi > lo:
				// The lowest value shades lightly, not blank: it was recorded.
				line[c] = shade(0.01+means[c]-lo, 0.01+hi-lo)
			case level:
				line[c] = shade(1, 1)
			default:
				line[c] = shade(means[c], hi)
			}
		}
		name := s.Label
		if s.CPU >= 0 {
			name = "cpu " + strconv.Itoa(int(s.CPU))
			if s.Label != "" {
				name += " " + s.Label
			}
		} else if name == "" {
			name = "host"
		}
		if level {
			fmt.Fprintf(w, "%12s │%s│ from %s to %s\n", clip(name, 12), string(line), web.FormatValue(lo, l.Unit), web.FormatValue(hi, l.Unit))
		} else {
			fmt.Fprintf(w, "%12s │%s│ mean %s peak %s\n", clip(name, 12), string(line), web.FormatValue(sum/float64(max(n, 1)), l.Unit), web.FormatValue(max(hi, 0), l.Unit))
		}
	}
	switch {
	case l.Unit == "%":
		fmt.Fprintf(w, "%12s  legend: blank = 0, ░ ▒ ▓ █ = up to 25%% 50%% 75%% 100%%, · = nothing recorded\n", "")
	case level:
		fmt.Fprintf(w, "%12s  legend: ░ ▒ ▓ █ = from the row's lowest to its highest, · = nothing recorded\n", "")
	default:
		fmt.Fprintf(w, "%12s  legend: blank = 0, ░ ▒ ▓ █ = up to 25%% 50%% 75%% 100%% of the row's peak, · = nothing recorded\n", "")
	}
	return w.Flush()
}

// importState is `subsecond state import --host H [--tz ZONE] FILE…`:
// mpstat or sar text, or timestamped /proc/cgroups snapshots, into the
// host's series.
func importState(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("state import", flag.ContinueOnError)
	db := dbFlag(fs)
	host := fs.String("host", "", "the host the file is from (required)")
	tz := fs.String("tz", "UTC", "time zone of the times mpstat and sar print (the host's local time), e.g. Europe/Berlin")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: subsecond state import --host HOST [--tz ZONE] FILE...

Imports into the host's series what was recorded before Subsecond: the text
of 'mpstat -P ALL 1' or 'sar -P ALL' (with its header line, which gives the
date; record it with LC_ALL=C), or timestamped /proc/cgroups snapshots, as
this loop writes them:

  while sleep 1; do date -Ins; cat /proc/cgroups; done > cgroups.log

Times without a zone are in --tz. A point already stored is not stored twice.
A file of more than 10 million points (about three hours of a 96-CPU host's
mpstat at 1 s) is refused: split it (e.g. with csplit at its header lines).

Flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := query.CheckHost(*host); err != nil {
		return fmt.Errorf("state import: %w", err)
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return fmt.Errorf("state import: --tz %q: %v", *tz, err)
	}
	if err := checkArgs(fs, 1, -1, "one or more files of mpstat or sar text or /proc/cgroups snapshots (- for standard input)"); err != nil {
		return err
	}
	s, err := openStore(ctx, e, *db, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	return eachFile(e, "state import", fs.Args(), func(name string, r io.Reader) error {
		br := bufio.NewReader(r)
		format, err := sysstat.Detect(br)
		if err != nil {
			return err
		}
		// What one call may store: a larger file is refused while it is
		// read, before it fills memory.
		ss, err := sysstat.Parse(br, sysstat.Options{Location: loc, Max: store.MaxSeriesPoints})
		if err != nil {
			return err
		}
		points := 0
		for _, x := range ss {
			points += len(x.Points)
		}
		added, err := s.AddSeries(ctx, *host, ss)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: %s, %d series, %d points of %s, %d new\n", name, format, len(ss), points, *host, added.Added)
		if added.Refused > 0 {
			fmt.Fprintf(e.stdout, "%s: %s\n", name, added.Refusal(*host))
		}
		return nil
	})
}

// writeMoves prints what moves with a series, or the series that move
// with a command's share (explain.Moves).
func writeMoves(ctx context.Context, e env, s *store.Store, host string, q *query.Query, format string) error {
	mv, err := explain.Moves(ctx, explainStore{newNight(s), s}, host, explain.MoveOptionsOf(q))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if format == "json" {
		return json.NewEncoder(e.stdout).Encode(mv) // as the API sends it
	}
	w := bufio.NewWriter(termWriter(e.stdout))
	fmt.Fprintf(w, "%s: what moves with %s, over %d windows of %s from %s to %s (UTC)\n", host, mv.Of.String(), len(mv.Windows),
		query.DisplayDuration(mv.Length), wallTime(mv.From), wallTime(mv.To))
	fmt.Fprintf(w, "%6s %4s  %s\n", "RHO", "N", "WHAT")
	for _, m := range mv.Moving {
		fmt.Fprintf(w, "%6.2f %4d  %s\n", m.Rho, m.N, clip(m.Feature.String(), stackWidth))
	}
	if len(mv.Moving) == 0 {
		fmt.Fprintln(w, "nothing moves with it in these windows")
	}
	return w.Flush()
}
