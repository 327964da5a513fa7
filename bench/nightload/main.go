// Command nightload writes a generated night of rolling captures of one
// host straight into a Subsecond database, with no text on disk, and
// reports how long the import took and how large the database became: the
// import half of bench/night.
//
//	go run ./bench/nightload -db night.db -cpus 96 -hours 12
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
	db := flag.String("db", "", "database file to create (required)")
	host := flag.String("host", "node-1", "host name")
	cpus := flag.Int("cpus", 96, "CPUs")
	hz := flag.Int("hz", 49, "sampling rate per CPU")
	hours := flag.Float64("hours", 12, "length of the night")
	length := flag.Duration("length", 2*time.Minute, "length of one capture")
	flag.Parse()
	if *db == "" {
		return fmt.Errorf("-db is required")
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
	s, err := sqlite.OpenStore(ctx, *db, store.Options{})
	if err != nil {
		return err
	}
	begin := time.Now()
	var samples int64
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		p, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprintf("perf.data.%03d.perf.txt", i)})
		if err != nil {
			return err
		}
		samples += p.Samples
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
