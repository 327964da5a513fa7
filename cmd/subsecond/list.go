package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/subsecond/subsecond"
)

// runList implements `subsecond list [--db PATH] [--format text|json]`:
// every stored profile, most recently imported first.
func runList(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	db := dbFlag(fs)
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond list [--db PATH] [--format text|json]\n\nLists the stored profiles, most recently imported first: ID, name, samples,\nduration, CPUs, parse warnings and import time.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return checkFormat("list", *format, "text", "json")
	}
	s, err := openExisting(ctx, e, *db)
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.List(ctx)
	if err != nil {
		return err
	}
	if *format == "json" {
		if list == nil {
			list = []subsecond.Profile{}
		}
		return json.NewEncoder(e.stdout).Encode(subsecond.ProfileList{Profiles: list}) // as the API sends it
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no profiles stored; add one with 'subsecond import FILE'")
		return nil
	}
	tw := tabwriter.NewWriter(termWriter(e.stdout), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSAMPLES\tDURATION\tCPUS\tWARNINGS\tIMPORTED")
	for i := range list {
		p := &list[i]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", p.ID, displayName(p), p.Samples, duration(p), p.CPUs,
			p.Warnings, p.Uploaded.Local().Format(time.DateTime))
	}
	return tw.Flush()
}
