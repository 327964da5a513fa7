package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/subsecond/subsecond"
)

// runList implements `subsecond list [--db PATH] [--format text|json]`:
// every stored profile, most recently imported first.
func runList(ctx context.Context, e env) error {
	r := newReadFlags("list", "Usage: subsecond list [--db PATH] [--format text|json]\n\nLists the stored profiles, most recently imported first: ID, name, samples,\nduration, CPUs, parse warnings and import time.")
	s, err := r.open(ctx, e, 0, 0, "")
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.List(ctx)
	if err != nil {
		return err
	}
	if *r.format == "json" {
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
