// Command nightload writes a generated night of rolling captures of one
// host straight into a Subsecond database, with no text on disk, and
// reports how long the import took and how large the database became: the
// import half of bench/night.
//
//	go run ./bench/nightload -db night.db -cpus 96 -hours 12
//
// Without -db it writes into the database subsecond itself opens without
// --db ($SUBSECOND_DB, else $XDG_DATA_HOME/subsecond/subsecond.db, else
// ~/.local/share/subsecond/subsecond.db), beside what is there already.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nightload:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "SQLite database file, created if missing (default: subsecond's own, $SUBSECOND_DB, else $XDG_DATA_HOME/subsecond/subsecond.db, else ~/.local/share/subsecond/subsecond.db)")
	host := flag.String("host", "node-1", "host name")
	cpus := flag.Int("cpus", 96, "CPUs")
	hz := flag.Int("hz", 49, "sampling rate per CPU")
	hours := flag.Float64("hours", 12, "length of the night")
	length := flag.Duration("length", 2*time.Minute, "length of one capture")
	series := flag.Bool("series", false, "also store the host's series as the recorder's state sampler would: each CPU's system % every second, from the generator's own counts, and memory cgroups leaking by one every 2 s (dying ones with them)")
	flag.Parse()
	if *db == "" {
		p, err := defaultDB()
		if err != nil {
			return err
		}
		*db = p
	}
	n := &nightgen.Night{Host: *host, CPUs: *cpus, Hz: *hz, Length: *length, Unanchored: -1, Seed: 1,
		Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	n.Captures = int(time.Duration(*hours*float64(time.Hour)) / *length)
	// A burst on CPU 39 every 40 minutes, 5 s long, in the kernel, from 2 s
	// before a rotation point to 3 s after it (the first at 00:17:58, the
	// 00:18:00 rotation of two-minute captures in its middle).
	for t := 18*time.Minute - 2*time.Second; t < time.Duration(*hours*float64(time.Hour)); t += 40 * time.Minute {
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: min(39, *cpus-1), Start: n.Start.Add(t), End: n.Start.Add(t + 5*time.Second)})
	}
	ctx := context.Background()
	s, err := sqlite.OpenStore(ctx, *db, store.Options{WarmLimit: -1}) // as subsecond import: nothing views what it imports
	if err != nil {
		return err
	}
	begin := time.Now()
	var samples int64
	for i := range n.Captures {
		var counts nightgen.Counts
		if *series {
			counts = nightgen.Counts{}
		}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, counts)) }()
		p, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprintf("perf.data.%03d.perf.txt", i)})
		if err != nil {
			return err
		}
		samples += p.Samples
		if *series {
			if _, err := s.AddSeries(ctx, *host, stateOf(n, i, counts)); err != nil {
				return err
			}
		}
		if i%30 == 29 {
			fmt.Fprintf(os.Stderr, "  %d/%d captures, %d samples, %s\n", i+1, n.Captures, samples, time.Since(begin).Round(time.Second))
		}
	}
	elapsed := time.Since(begin)
	if err := s.Close(); err != nil {
		return err
	}
	var size int64
	matches, _ := filepath.Glob(*db + "*")
	for _, f := range matches {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	fmt.Printf("captures %d\nsamples %d\nimport_s %.1f\nsamples_per_s %.0f\ndb_bytes %d\nbytes_per_sample %.1f\n",
		n.Captures, samples, elapsed.Seconds(), float64(samples)/elapsed.Seconds(), size, float64(size)/float64(samples))
	return nil
}

// defaultDB returns the SQLite database subsecond opens without --db.
func defaultDB() (string, error) {
	if p := os.Getenv("SUBSECOND_DB"); p != "" {
		if strings.Contains(p, "://") {
			return "", fmt.Errorf("$SUBSECOND_DB is %s; nightload writes SQLite only: give -db", p)
		}
		return p, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "subsecond", "subsecond.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no database: give -db, or set $SUBSECOND_DB or $HOME")
	}
	return filepath.Join(home, ".local", "share", "subsecond", "subsecond.db"), nil
}

// stateOf returns the series the recorder's state sampler would have
// stored beside capture i: each CPU's system time every second (the point
// at t covering [t − 1 s, t)), from the generator's counts of what it
// wrote, and memory cgroups leaking by one every 2 s from 64,000 at the
// night's start, those dying a tenth of them.
func stateOf(n *nightgen.Night, i int, counts nightgen.Counts) []subsecond.Series {
	from, to := n.CaptureStart(i).Unix(), n.CaptureStart(i).Add(n.Length).Unix()
	var out []subsecond.Series
	for cpu := range n.CPUs {
		s := subsecond.Series{Name: "cpu.sys", CPU: int32(cpu)}
		for sec := from; sec < to; sec++ {
			if c := counts[nightgen.Key{CPU: cpu, Second: sec}]; c != nil && c.Samples > 0 {
				s.Points = append(s.Points, subsecond.Point{Time: (sec + 1) * int64(time.Second), Value: math.Round(10000*float64(c.System)/float64(c.Samples)) / 100})
			}
		}
		out = append(out, s)
	}
	mem := subsecond.Series{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory"}
	dying := subsecond.Series{Name: "cgroup.dying", CPU: subsecond.Unknown}
	for sec := from; sec < to; sec++ {
		leaked := float64((sec + 1 - n.Start.Unix()) / 2)
		mem.Points = append(mem.Points, subsecond.Point{Time: (sec + 1) * int64(time.Second), Value: 64000 + leaked})
		dying.Points = append(dying.Points, subsecond.Point{Time: (sec + 1) * int64(time.Second), Value: math.Floor(leaked / 10)})
	}
	return append(out, mem, dying)
}
