package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// runFleet implements `subsecond fleet [--function RE | --comm COMM |
// --comm_regex RE | --stack RE] [--label K=V…] [--group KEY] [--groups |
// --uptime] [--from T --to T] [--format text|json]`: the hosts ranked by
// the busiest core's system share, or by a search's share; or the group
// and uptime contrasts. It reads the fleet index as /api/fleet does.
func runFleet(ctx context.Context, e env) error {
	v := newViewFlags("fleet", e, query.ViewFleet)
	groups := v.fs.Bool("groups", false, "contrast the groups of --group: the names whose share differs between one value of the label and the other hosts")
	uptime := v.fs.Bool("uptime", false, "contrast uptimes: the names whose share rises or falls with the hosts' uptime")
	format := v.fs.String("format", "text", "output format: text or json (the API's /api/fleet, /api/fleet/search, /groups or /uptime)")
	v.fs.Usage = func() {
		fmt.Fprintln(v.fs.Output(), `Usage: subsecond fleet [--function RE | --comm COMM | --comm_regex RE | --stack RE] [--label KEY=VALUE…] [--group KEY] [--from T] [--to T] [--format text|json]
       subsecond fleet --groups --group KEY [--label KEY=VALUE…] [--permutations N] [--seed N] [--limit N]
       subsecond fleet --uptime [--label KEY=VALUE…] [--permutations N] [--seed N] [--limit N]

Answers across hosts from the fleet index written at import, never decoding
samples. By default it lists the hosts (those carrying every --label) with
the busiest core's system share over the range, its peak and when; with a
search, the hosts ranked by the share of their samples whose stack holds a
function matching --function, whose command is --comm (exactly) or matches
--comm_regex, or whose stack holds a call edge caller;callee matching
--stack. --groups lists the names whose share differs between the values of
the label --group; --uptime those whose share follows uptime (each capture's
host boot time, sent by 'subsecond record'). The range is --from to --to,
by default the last 24 hours of the data.

Flags:`)
		v.fs.PrintDefaults()
	}
	if err := parseFlags(v.fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(v.fs, 0, 0, ""); err != nil {
		return err
	}
	if err := checkFormat("fleet", *format, "text", "json"); err != nil {
		return err
	}
	q, err := v.query()
	if err != nil {
		return err
	}
	if *groups && *uptime {
		return fmt.Errorf("fleet: give --groups or --uptime, not both")
	}
	if *groups && q.Group == "" {
		return fmt.Errorf("fleet: --groups compares the values of a label: give --group KEY")
	}
	s, err := openExisting(ctx, e, *v.db)
	if err != nil {
		return err
	}
	defer s.Close()
	hosts, err := timeline.AllHosts(ctx, s)
	if err != nil {
		return err
	}
	opt, err := fleet.OptionsOf(q, hosts)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	w := termWriter(e.stdout)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	switch {
	case *groups:
		rep, err := fleet.Groups(ctx, s, opt)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		out := web.NewFleetGroups(rep, q.ValuesFor(query.ViewFleet))
		if *format == "json" {
			return json.NewEncoder(e.stdout).Encode(out)
		}
		fmt.Fprintf(w, "%s: ", out.Key)
		for i, g := range out.Groups {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s (%d hosts)", g.Value, g.Hosts)
		}
		fmt.Fprintf(w, "; %d names tested, %d permutations, seed %d\n", out.Tested, out.Permutations, out.Seed)
		if len(out.Findings) == 0 {
			fmt.Fprintln(w, "no name's share differs between the groups")
			return nil
		}
		fmt.Fprintln(tw, "NAME\tKIND\tGROUP\tSHARE IN GROUP\tELSEWHERE\tRATIO\tQ")
		for _, d := range out.Findings {
			ratio := "inf"
			if d.Ratio != nil {
				ratio = strconv.FormatFloat(*d.Ratio, 'f', 2, 64)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s=%s\t%s\t%s\t%s\t%.2g\n", clip(d.Name, 60), d.Kind, out.Key, d.Group,
				web.Percent(d.GroupShare), web.Percent(d.RestShare), ratio, d.Q)
		}
	case *uptime:
		rep, err := fleet.Uptime(ctx, s, opt)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		out := web.NewFleetUptime(rep, q.ValuesFor(query.ViewFleet))
		if *format == "json" {
			return json.NewEncoder(e.stdout).Encode(out)
		}
		fmt.Fprintf(w, "%d sessions of %d hosts (%d without a boot time left out); %d names tested, %d permutations, seed %d\n",
			out.Units, out.Hosts, out.NoBoot, out.Tested, out.Permutations, out.Seed)
		if len(out.Findings) == 0 {
			fmt.Fprintln(w, "no name's share follows uptime")
			return nil
		}
		fmt.Fprintln(tw, "NAME\tKIND\tRHO\tSHARE LOW → HIGH UPTIME\tQ")
		for _, f := range out.Findings {
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s → %s\t%.2g\n", clip(f.Name, 60), f.Kind, f.Rho, web.Percent(f.LowShare), web.Percent(f.HighShare), f.Q)
		}
	case opt.Match != nil:
		res, err := fleet.Search(ctx, s, opt)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		out := web.NewFleetSearch(res)
		if *format == "json" {
			return json.NewEncoder(e.stdout).Encode(out)
		}
		fmt.Fprintf(w, "%s from %s to %s (UTC): %d hosts; %d names matched", q.FleetMeasure(), wallTime(out.From), wallTime(out.To), len(out.Hosts), len(out.Names))
		for i, n := range out.Names[:min(len(out.Names), 5)] {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			fmt.Fprint(w, sep, clip(n, 60))
		}
		if len(out.Names) > 5 {
			fmt.Fprint(w, ", …")
		}
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "HOST\tSHARE\tMATCHED\tSAMPLES\tPEAK\tPEAK AT (UTC)\tLABELS")
		for _, h := range out.Hosts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", h.Host, percentOrDash(h.Share), h.Matched, h.Samples,
				percentOrDash(h.Peak), wallTime(h.PeakAt), formatLabels(h.Labels))
		}
	default:
		g, err := fleet.Map(ctx, s, opt)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		labels, err := s.HostLabels(ctx)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		out := web.NewFleetMap(g, q.Group, web.LabelKeys(labels))
		if *format == "json" {
			return json.NewEncoder(e.stdout).Encode(out)
		}
		fmt.Fprintf(w, "busiest core's system share from %s to %s (UTC), %d hosts\n", wallTime(out.From), wallTime(out.To), len(out.Rows))
		fmt.Fprintln(tw, "HOST\tGROUP\tMEAN\tPEAK\tPEAK AT (UTC)\tSAMPLES\tLABELS")
		for _, r := range out.Rows {
			at := "-"
			if r.Peak != nil {
				at = wallTime(r.PeakAt)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Host, r.Group, percentOrDash(r.Share), percentOrDash(r.Peak), at, r.Samples, formatLabels(r.Labels))
		}
	}
	return tw.Flush()
}

// percentOrDash writes a share as a percentage, "-" for none.
func percentOrDash(x *float64) string {
	if x == nil {
		return "-"
	}
	return web.Percent(*x)
}
