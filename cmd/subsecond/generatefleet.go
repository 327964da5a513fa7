package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/subsecond/subsecond/fleet/fleetgen"
	"github.com/subsecond/subsecond/store"
)

// runGenerateFleet implements `subsecond generate fleet`: it imports a
// generated fleet (package fleetgen) into the database, each capture with
// its host, labels and boot time as `subsecond record` sends them, and the
// hosts' markers, for trying the fleet views:
//
//	subsecond generate fleet [--db PATH] [--hosts 20] [--leak 4] [--seed 1]
func runGenerateFleet(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("generate fleet", flag.ContinueOnError)
	db := dbFlag(fs)
	hosts := fs.Int("hosts", 20, "hosts, the first half in zone a (label zone=a), the rest in zone b")
	leak := fs.Float64("leak", 4, "how many times its usual share the kubelet's mem_cgroup_nr_lru_pages gains per day of uptime on the zone-a hosts (0: a clean fleet)")
	seed := fs.Uint64("seed", 1, "random seed; the same flags and seed give the same fleet")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond generate fleet [--db PATH] [--hosts 20] [--leak 4] [--seed 1]\n\n"+
			"Imports a generated fleet into the database: hosts in two zones, each booted\n"+
			"three times in November 2026 and recorded in sessions of back-to-back\n"+
			"two-minute captures (2 CPUs at 10 Hz), with a leak planted in zone a that\n"+
			"grows with uptime and resets at each reboot. Open /fleet to find it.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	if *hosts < 2 || *hosts > 1000 {
		return fmt.Errorf("generate fleet: --hosts %d: want 2 to 1000", *hosts)
	}
	if *leak < 0 {
		return fmt.Errorf("generate fleet: --leak %g: want 0 or more", *leak)
	}
	s, err := openStore(ctx, e, *db, importOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	f := fleetgen.Fleet{Hosts: *hosts, Leak: *leak, Seed: *seed}
	start := time.Now()
	var samples int64
	caps := f.Captures()
	for _, c := range caps {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(f.Write(pw, c)) }()
		p, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: c.ID + ".perf.txt", Host: c.Host, Labels: c.Labels, Boot: c.Boot.UnixNano()})
		pr.CloseWithError(err) // stops the writer when the import failed
		if err != nil {
			return fmt.Errorf("generate fleet: %w", err)
		}
		samples += p.Samples
	}
	markers := 0
	for h := range *hosts {
		n, err := s.AddMarkers(ctx, fleetgen.HostName(h), f.HostMarkers(h))
		if err != nil {
			return fmt.Errorf("generate fleet: %w", err)
		}
		markers += n.Added
	}
	first, last := caps[0].Start, caps[0].Start
	for _, c := range caps {
		if c.Start.Before(first) {
			first = c.Start
		}
		if c.Start.After(last) {
			last = c.Start
		}
	}
	fmt.Fprintf(e.stderr, "imported %d captures of %d hosts (zone=a, zone=b), %d samples and %d markers from %s to %s in %s\n",
		len(caps), *hosts, samples, markers, first.UTC().Format(time.DateOnly), last.Add(2*time.Minute).UTC().Format(time.DateOnly),
		time.Since(start).Round(time.Millisecond))
	return nil
}
