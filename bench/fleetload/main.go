// Command fleetload writes a generated fleet (package fleetgen: hosts in
// two zones, back-to-back two-minute captures, a planted leak on the
// zone-a hosts) straight into a SQLite or PostgreSQL database, with each
// capture's host labels and boot time as `subsecond record` sends them,
// and prints what the import took and what the database and its fleet
// index hold. bench/fleet runs it and then times the fleet views.
//
//	go run ./bench/fleetload -db /tmp/fleet.db -hosts 50 -cpus 96 -minutes 60
//	go run ./bench/fleetload -db postgres://… -hosts 50 -cpus 96 -minutes 60
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subsecond/subsecond/fleet/fleetgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
	"github.com/subsecond/subsecond/store/sqlite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleetload:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "SQLite database file (created if missing) or postgres://… URL")
	hosts := flag.Int("hosts", 50, "hosts, the first half in zone a")
	cpus := flag.Int("cpus", 96, "CPUs per host")
	hz := flag.Int("hz", 50, "samples per CPU per second (a divisor of 1e9)")
	minutes := flag.Int("minutes", 60, "minutes recorded per host, in two-minute captures, back to back")
	leak := flag.Float64("leak", 4, "the planted leak's growth per day of uptime on zone-a hosts (0: a clean fleet)")
	variety := flag.Int("variety", 2000, "deep service stacks beside the fixed ones (fleetgen.Fleet.Variety): thousands of names per capture, as a real host has")
	jobs := flag.Int("j", runtime.GOMAXPROCS(0), "captures imported at once")
	flag.Parse()
	if *db == "" {
		return errors.New("give -db")
	}
	ctx := context.Background()
	var s *store.Store
	var err error
	if strings.HasPrefix(*db, "postgres://") || strings.HasPrefix(*db, "postgresql://") {
		s, err = postgres.OpenStore(ctx, *db, store.Options{WarmLimit: -1}) // as subsecond import: nothing views what it imports
	} else {
		s, err = sqlite.OpenStore(ctx, *db, store.Options{WarmLimit: -1}) // as subsecond import: nothing views what it imports
	}
	if err != nil {
		return err
	}
	// One boot an uptime of days before the hour recorded, so the leak
	// shows; one session per host of back-to-back captures.
	f := fleetgen.Fleet{Hosts: *hosts, CPUs: *cpus, Hz: *hz, Boots: 1, Sessions: 1, PerSession: max(1, *minutes/2),
		Length: 2 * time.Minute, BootLen: 7 * 24 * time.Hour, Leak: *leak, Markers: 2, Seed: 1, Variety: *variety,
		At: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	caps := f.Captures()
	begin := time.Now()
	var samples, text atomic.Int64
	work := make(chan fleetgen.Capture)
	errc := make(chan error, *jobs)
	var wg sync.WaitGroup
	for range *jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				pr, pw := io.Pipe()
				go func() { pw.CloseWithError(f.Write(pw, c)) }()
				p, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: c.ID + ".perf.txt", Host: c.Host, Labels: c.Labels, Boot: c.Boot.UnixNano()})
				if err != nil {
					pr.CloseWithError(err)
					errc <- fmt.Errorf("%s: %w", c.ID, err)
					return
				}
				samples.Add(p.Samples)
				text.Add(p.Bytes)
			}
		}()
	}
	done := 0
	var ferr error
feed:
	for _, c := range caps {
		select {
		case work <- c:
			done++
			if done%100 == 0 {
				fmt.Fprintf(os.Stderr, "  %d/%d captures, %d samples, %s\n", done, len(caps), samples.Load(), time.Since(begin).Round(time.Second))
			}
		case ferr = <-errc:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if ferr == nil && len(errc) > 0 {
		ferr = <-errc
	}
	if ferr != nil {
		return ferr
	}
	for h := range *hosts {
		if _, err := s.AddMarkers(ctx, fleetgen.HostName(h), f.HostMarkers(h)); err != nil {
			return err
		}
	}
	elapsed := time.Since(begin)
	from, to := caps[0].Start, caps[0].Start
	for _, c := range caps {
		if c.Start.Before(from) {
			from = c.Start
		}
		if e := c.Start.Add(f.Length); e.After(to) {
			to = e
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Printf("hosts %d\ncaptures %d\nsamples %d\ntext_bytes %d\nimport_s %.1f\nsamples_per_s %.0f\ntext_mb_per_s %.0f\nfrom %s\nto %s\n",
		*hosts, len(caps), samples.Load(), text.Load(), elapsed.Seconds(), float64(samples.Load())/elapsed.Seconds(),
		float64(text.Load())/1e6/elapsed.Seconds(), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	if !strings.Contains(*db, "://") {
		var size int64
		matches, _ := filepath.Glob(*db + "*")
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil {
				size += fi.Size()
			}
		}
		fmt.Printf("db_bytes %d\nbytes_per_sample %.2f\n", size, float64(size)/float64(samples.Load()))
	}
	return nil
}
