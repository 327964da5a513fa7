package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// labelFlag is a repeated --label key=value flag, checked as the query
// table's label parameter is (query.ParseLabels).
type labelFlag []string

func (l *labelFlag) String() string     { return strings.Join(*l, " ") }
func (l *labelFlag) Set(s string) error { *l = append(*l, s); return nil }

// labelsFlag adds a repeated --label flag to fs with help usage.
func labelsFlag(fs *flag.FlagSet, usage string) *labelFlag {
	l := &labelFlag{}
	fs.Var(l, "label", usage)
	return l
}

// labels returns the labels given, their error naming the flag.
func (l *labelFlag) labels(cmd string) ([]subsecond.Label, error) {
	ls, err := query.ParseLabels("--label", *l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return ls, nil
}

// parseBoot reads a --boot flag: "" for unknown (0), else Unix seconds or
// an RFC 3339 time, as from takes them; Unix nanoseconds.
func parseBoot(cmd, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	ns, err := query.ParseWallTime("--boot", s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", cmd, err)
	}
	return ns, nil
}

// bootTime returns the Unix time in nanoseconds this host booted, read
// from the btime line of stat (/proc/stat), or 0 and an error when it has
// none.
func bootTime(stat string) (int64, error) {
	f, err := os.Open(stat)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseBtime(f)
}

// parseBtime reads the "btime SECONDS" line of /proc/stat text.
func parseBtime(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // intr lines are long
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil || s <= 0 {
				return 0, fmt.Errorf("btime %q is not Unix seconds", rest)
			}
			return s * 1e9, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no btime line")
}

// hostLabels implements `subsecond hosts label [--db PATH] HOST
// [key=value…] [-k KEY…]`: it sets and removes labels of HOST, then
// prints the host's labels.
func hostLabels(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("hosts label", flag.ContinueOnError)
	db := dbFlag(fs)
	var remove labelFlag
	fs.Var(&remove, "k", "a label `key` to remove from the host; repeat for more")
	format := fs.String("format", "text", "output format: text or json (the labels as GET /api/hosts gives them)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: subsecond hosts label [--db PATH] HOST [key=value…] [-k KEY…] [--format text|json]

Sets labels on HOST (zone=us-east-1a, team=storage), replacing the value of
a key set before, and removes those whose keys -k names; then prints the
host's labels, those set and those derived from its newest capture (kernel,
cpus, cpu_model; a label set with one of these keys hides the derived one).
With no label and no -k it only prints them. A key is lower-case letters,
digits, '_', '.' and '-', starting with a letter; a host has at most 32.
The fleet's views (subsecond fleet, /fleet) group and filter hosts by them.

Flags:`)
		fs.PrintDefaults()
	}
	// Flags may follow the host and the labels: parse them in turns.
	var args []string
	rest := e.args
	for {
		if err := parseFlags(fs, e, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		args = append(args, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(args) == 0 {
		fs.Usage()
		return errors.New("hosts label: give the HOST")
	}
	if err := checkFormat("hosts label", *format, "text", "json"); err != nil {
		return err
	}
	host := args[0]
	if err := query.CheckHost(host); err != nil {
		return fmt.Errorf("hosts label: %w", err)
	}
	set, err := query.ParseLabels("hosts label", args[1:])
	if err != nil {
		return err
	}
	for _, k := range remove {
		if err := query.Check("group", k); err != nil {
			return fmt.Errorf("hosts label: -k %q: %s", k, strings.TrimPrefix(query.Message(err), "group: "))
		}
	}
	s, err := openExisting(ctx, e, *db)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(set) > 0 || len(remove) > 0 {
		if err := s.SetHostLabels(ctx, host, set, remove); err != nil {
			return fmt.Errorf("hosts label: %w", err)
		}
	}
	all, err := s.HostLabels(ctx)
	if err != nil {
		return fmt.Errorf("hosts label: %w", err)
	}
	ls := all[host]
	if ls == nil {
		ls = []subsecond.Label{}
	}
	if *format == "json" {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"host": host, "labels": ls})
	}
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: %d labels\n", host, len(ls))
	for _, l := range ls {
		fmt.Fprintf(tw, "  %s\t%s\n", l.Key, l.Value)
	}
	return tw.Flush()
}

// formatLabels writes labels on one line, key=value separated by spaces.
func formatLabels(ls []subsecond.Label) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, " ")
}
