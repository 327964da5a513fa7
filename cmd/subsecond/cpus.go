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
	"github.com/subsecond/subsecond/web"
)

// runCPUs implements `subsecond cpus [--bucket B] [--measure busy|system]
// [filters] [--format text|json|csv] FILE|ID`: the cores map, one row per
// CPU, busy and system fractions per bucket of B seconds.
func runCPUs(ctx context.Context, e env) error {
	v := newViewFlags("cpus", e, query.ViewCores)
	format := v.fs.String("format", "text", "output format: text, json or csv")
	width := v.fs.Int("width", 120, "text: characters per row; buckets are merged to fit")
	v.usage("cpus [--bucket B] [--measure busy|system] [filters] [--format text|json|csv] FILE|ID",
		"Prints the cores map: one row per CPU and one column per bucket of B seconds\nfrom T0. The busy fraction is the non-idle samples over those expected at the\nsampling rate; the system fraction is the part of them whose leaf frame is in\nthe kernel (%sys as top shows it). Text shades by --measure; csv and json\ncarry both.")
	q, err := v.parse(e.args)
	if err != nil {
		return err
	}
	if err := checkFormat("cpus", *format, "text", "json", "csv"); err != nil {
		return err
	}
	if *width < 10 {
		return fmt.Errorf("cpus: %w", query.Invalidf("width", "%d is less than 10", *width))
	}
	c, err := v.load(ctx, q)
	if err != nil {
		return fmt.Errorf("cpus: %w", err)
	}
	k, err := heatmap.PerCore(c, q.Filter, q.Bucket)
	if err != nil {
		return fmt.Errorf("cpus: %w", err)
	}
	switch *format {
	case "json":
		return json.NewEncoder(e.stdout).Encode(k)
	case "csv":
		w := csv.NewWriter(e.stdout)
		w.Write([]string{"cpu", "bucket", "start_s", "samples", "busy", "system"})
		for r, cpu := range k.CPUs {
			for b := range k.Buckets {
				w.Write([]string{strconv.Itoa(int(cpu)), strconv.Itoa(b), query.FormatSeconds(int64(b) * k.Bucket),
					strconv.FormatInt(k.Samples[r][b], 10), strconv.FormatFloat(k.Busy[r][b], 'f', 4, 64),
					strconv.FormatFloat(k.System[r][b], 'f', 4, 64)})
			}
		}
		w.Flush()
		return w.Error()
	}
	// The episodes that stand out most, marked on their rows so that a
	// pegged core is seen even when every core is busy.
	rep, err := heatmap.Hotspots(c, q.Filter, heatmap.HotOptions{Measure: heatmap.Measure(q.Measure), Bucket: q.Bucket, Limit: 3})
	if err != nil {
		return fmt.Errorf("cpus: %w", err)
	}
	return writeCoresText(e, c, k, heatmap.Measure(q.Measure), rep, *width, hotspotsCommand(q, v.fs.Arg(0)))
}

// hotspotsCommand returns the command that lists every episode the cores
// map's summary counts: hotspots of the same capture with the same filters,
// bucket and measure, and --limit 0.
func hotspotsCommand(q *query.Query, arg string) string {
	v := q.ValuesFor(query.ViewCores)
	v.Set("limit", "0")
	return commandLine("hotspots", query.ViewHotspots, v, arg)
}

// writeCoresText renders k with one character per group of buckets (their
// mean fraction of measure m) and each CPU's mean and peak of it, so that a
// pegged core reads as a solid run of █; the rows of rep's episodes carry a
// ◀ and the episodes are listed below the map, with all, the command that
// lists them all. Busy rows also show the CPU's mean system fraction.
func writeCoresText(e env, c *subsecond.Capture, k *heatmap.Cores, m heatmap.Measure, rep *heatmap.Report, width int, all string) error {
	t := newCellsText(&k.Cells, width)
	w := bufio.NewWriter(termWriter(e.stdout))
	cols, span := t.cols, t.span()
	fmt.Fprintf(w, "%s: %d CPUs, %d buckets of %s (one character = %s), %.1f samples expected per bucket; shading: %s fraction\n",
		clip(c.Profile.Name, nameWidth), len(k.CPUs), k.Buckets, query.DisplayDuration(k.Bucket), query.DisplayDuration(span), k.Expected, m)
	axis := []rune(strings.Repeat(" ", cols+10))
	for col := 0; col < cols; col += 10 {
		copy(axis[col:], []rune(query.DisplaySeconds(int64(col)*span)))
	}
	sysHead := ""
	if m == heatmap.MeasureBusy {
		sysHead = "   sys"
	}
	fmt.Fprintf(w, "%8s  %s  %5s %5s%s\n", "s →", strings.TrimRight(string(axis), " ")+strings.Repeat(" ", max(0, cols-len(strings.TrimRight(string(axis), " ")))), "mean", "peak", sysHead)
	t.writeRows(w, k.Fractions(m), nil, func(r int) string {
		mark := ""
		for i, s := range rep.Spots {
			if s.CPU == k.CPUs[r] {
				mark += fmt.Sprintf(" ◀%d", i+1)
			}
		}
		sys := ""
		if m == heatmap.MeasureBusy {
			var sum float64
			for _, x := range k.System[r] {
				sum += x
			}
			sys = fmt.Sprintf(" %4.0f%%", 100*sum/float64(k.Buckets))
		}
		return sys + mark
	})
	if m == heatmap.MeasureSystem {
		fmt.Fprintf(w, "%8s  legend: blank = no system time, ░ ▒ ▓ █ = system up to 25%% 50%% 75%% 100%% (leaf frame in the kernel)\n", "")
	} else {
		fmt.Fprintf(w, "%8s  legend: blank = idle, ░ ▒ ▓ █ = busy up to 25%% 50%% 75%% 100%%; sys = mean system fraction (--measure system shades by it)\n", "")
	}
	if len(rep.Spots) > 0 {
		fmt.Fprintf(w, "\nStanding out (of %d %s %s):\n", rep.Found, episodes(rep.Found), web.HotspotsWhat(rep.Measure, rep.Threshold, rep.Min))
	}
	for i, s := range rep.Spots {
		fmt.Fprintf(w, "  ◀%d cpu %d %s: %s (%.0f%%) in %s (%.0f%%)\n", i+1, s.CPU,
			query.DisplayRange(s.Start-k.T0, s.End-k.T0), clip(s.Comm, nameWidth), 100*s.CommShare, clip(s.Function, nameWidth), 100*s.FunctionShare)
	}
	if rep.Found > len(rep.Spots) {
		fmt.Fprintf(w, "All %d: %s\n", rep.Found, all)
	}
	if rep.Note != "" {
		fmt.Fprintf(w, "\nNote: %s.\n", rep.Note)
	}
	return w.Flush()
}
