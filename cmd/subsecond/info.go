package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/subsecond/subsecond"
)

// runInfo implements `subsecond info [--db PATH] [--format text|json] ID`:
// a stored profile's metadata, events and warnings.
func runInfo(ctx context.Context, e env) error {
	r := newReadFlags("info", "Usage: subsecond info [--db PATH] [--format text|json] ID\n\nShows one stored profile: file, size, digest (BLAKE3), time span, CPUs, sampling\nfrequency, the perf header (host, kernel, perf version, command line), events\nand parse warnings.")
	s, err := r.open(ctx, e, 1, 1, "one profile ID (see 'subsecond list')")
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Profile(ctx, r.fs.Arg(0))
	if err != nil {
		return err
	}
	if *r.format == "json" {
		return json.NewEncoder(e.stdout).Encode(p) // as the API sends it
	}
	printInfo(e, p)
	return nil
}

// printInfo writes p as aligned "field: value" lines.
func printInfo(e env, p *subsecond.Profile) {
	out := termWriter(e.stdout)
	tw := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	row := func(k string, v any) {
		if s, ok := v.(string); ok {
			v = clip(s, stackWidth)
		}
		fmt.Fprintf(tw, "%s:\t%v\n", k, v)
	}
	row("ID", p.ID)
	row("Name", displayName(p))
	if p.FileName != "" {
		row("File", p.FileName)
	} else {
		row("File", "(standard input or unnamed upload)")
	}
	row("Digest", p.Digest)
	row("Bytes", p.Bytes)
	row("Imported", p.Uploaded.Local().Format(time.RFC3339))
	row("Samples", p.Samples)
	if p.Timed() {
		row("First sample", fmt.Sprintf("%.6f s", float64(p.Start)/1e9))
		row("Last sample", fmt.Sprintf("%.6f s", float64(p.End)/1e9))
		row("Duration", duration(p))
	} else {
		row("Duration", "none: the capture has no timestamps (perf script printed no time field); its flame graph holds every sample")
	}
	row("Host", p.Host)
	row("Wall clock", wallSpan(p))
	row("CPUs", p.CPUs)
	switch {
	case p.FrequencyHz > 0:
		row("Frequency", fmt.Sprintf("%.1f Hz per CPU", p.FrequencyHz))
	case !p.Timed():
		row("Frequency", "unknown (no timestamps)")
	default:
		row("Frequency", "unknown (too few samples per CPU)")
	}
	m := p.Meta
	for _, kv := range [][2]string{{"Hostname", m.Hostname}, {"OS release", m.OSRelease}, {"Perf version", m.PerfVersion},
		{"Arch", m.Arch}, {"CPU", m.CPUDesc}, {"Command line", m.Cmdline}, {"Captured on", m.CapturedOn}} {
		if kv[1] != "" {
			row(kv[0], kv[1])
		}
	}
	if m.NrCPUs > 0 {
		row("CPUs online", m.NrCPUs)
	}
	tw.Flush()
	fmt.Fprintln(out, "Events:")
	for i, ev := range p.Events {
		def := ""
		if i == p.DefaultEvent() && len(p.Events) > 1 {
			def = " (default)"
		}
		name := clip(ev.Name, nameWidth)
		if ev.Name == "" {
			name = "(no name: perf script printed no event field)"
		}
		fmt.Fprintf(out, "  %s: %d samples%s\n", name, ev.Samples, def)
	}
	fmt.Fprintf(out, "Warnings: %d\n", p.Warnings)
	for _, w := range p.WarningList {
		fmt.Fprintf(out, "  line %d: %s\n", w.Line, clip(w.Message, stackWidth))
	}
	if n := p.Warnings - len(p.WarningList); n > 0 {
		fmt.Fprintf(out, "  … and %d more\n", n)
	}
	if len(m.Header) > 0 {
		fmt.Fprintln(out, "Header:")
		for _, h := range m.Header {
			fmt.Fprintf(out, "  # %s\n", clip(h, stackWidth))
		}
	}
}

// wallSpan describes when p's samples were taken in UTC, and how that is
// known.
func wallSpan(p *subsecond.Profile) string {
	w := p.Wall
	if !p.Timed() {
		return "none (no timestamps)"
	}
	if !w.Known() {
		return "unknown (record with perf record -k CLOCK_REALTIME, or keep perf script's --header)"
	}
	at := func(t int64) string { return wallTime(w.Wall(t)) }
	s := fmt.Sprintf("%s to %s (%s)", at(p.Start), at(p.End), w.Source)
	if w.Approximate {
		s = "≈ " + s + ", approximate"
	}
	return s
}
