package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// runGenerate writes a synthetic perf script capture with planted incidents
// and its ground truth:
//
//	subsecond generate [--cpus 96] [--seconds 120] [--hz 49] [--seed 1] [--host H] [--start-time T] [--incident-cpu 39] [--best] [-o FILE] [--truth FILE]
//
// `subsecond generate fleet` imports a generated fleet instead
// (runGenerateFleet).
// The output is gzip or zstd when FILE ends in .gz or .zst.
func runGenerate(ctx context.Context, e env) error {
	if argAt(e.args, 0) == "fleet" {
		e.args = e.args[1:]
		return runGenerateFleet(ctx, e)
	}
	g := newGenerateFlags()
	fs, best, out, truthPath := g.fs, g.best, g.out, g.truth
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond generate [FLAGS]\n       subsecond generate fleet [--db PATH] [--hosts 20] (see subsecond generate fleet --help)\n\nWrites a realistic perf script capture of a GPU training host with planted\nincidents (one core pegged by the kubelet walking memory cgroups) and the\nground truth of what it wrote. The same flags write the same bytes.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	cfg, err := g.config()
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}

	var w io.Writer = e.stdout
	var f *os.File
	if *out != "" && *out != "-" {
		var err error
		f, err = os.Create(*out + ".tmp")
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		w = f
		if *truthPath == "" {
			*truthPath = strings.TrimSuffix(strings.TrimSuffix(*out, ".gz"), ".zst") + ".truth.json"
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw, err := compressor(bw, *out, *best)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	truth, err := sampledata.Generate(ctxWriter{ctx, cw}, cfg)
	if err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		if err := os.Rename(f.Name(), *out); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
	}
	if *truthPath != "" {
		b, err := json.MarshalIndent(truth, "", "  ")
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		if err := os.WriteFile(*truthPath, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
	}
	if f != nil {
		fmt.Fprintf(e.stderr, "wrote %s: %d samples, %d bytes of text, %d incident windows on CPU %d; truth in %s\n",
			filepath.Base(*out), truth.Samples, truth.Bytes, len(truth.Incidents), cfg.IncidentCPU, *truthPath)
	}
	return nil
}

// Defaults of generate's --host and --start-time: a host and a night of
// their own, apart from the bundled capture's gpu-node-17 in March 2025.
const (
	defaultGenHost  = "synthetic-gpu-node"
	defaultGenStart = "2026-01-01T02:00:00Z"
)

// generateFlags are generate's flags: the shape of the capture, read by
// config once parsed, and where to write it.
type generateFlags struct {
	fs         *flag.FlagSet
	best       *bool
	out, truth *string
	// config returns the sampledata.Config the parsed flags give.
	config func() (sampledata.Config, error)
}

func newGenerateFlags() *generateFlags {
	cfg := sampledata.DefaultConfig()
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.IntVar(&cfg.CPUs, "cpus", cfg.CPUs, "number of CPUs")
	fs.IntVar(&cfg.Seconds, "seconds", cfg.Seconds, "capture length in seconds")
	fs.IntVar(&cfg.Hz, "hz", cfg.Hz, "samples per second per CPU (perf record -F)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same flags and seed give the same bytes")
	host := fs.String("host", defaultGenHost, "the host's name in the capture's header (# hostname), under which it is stored")
	startTime := fs.String("start-time", defaultGenStart, "wall-clock time recording started, RFC 3339 or Unix seconds, to the second; the header's '# captured on' (when perf finished) is --seconds later")
	fs.Float64Var(&cfg.Start, "start", 0, "time of the first tick, seconds since boot as perf prints it (default: seconds since the UTC midnight before --start-time, so that the captures of one host generated for one day share one boot clock)")
	fs.IntVar(&cfg.IncidentCPU, "incident-cpu", cfg.IncidentCPU, "CPU the node agent pegs (-1: no incident)")
	fs.IntVar(&cfg.Incidents, "incidents", 0, "number of incident windows (0: 3 or 4, from the seed)")
	nics := fs.String("nic-cpus", "", "CPUs polling NIC queues, e.g. 32-47 (default: CPUs/3 up to CPUs/2)")
	fs.BoolVar(&cfg.TIDOnly, "tid-only", false, "print 'comm TID' (perf script's default fields) instead of 'comm PID/TID'")
	g := &generateFlags{fs: fs,
		best:  fs.Bool("best", false, "compress as small as possible (slow); used for the bundled sample"),
		out:   fs.String("o", "", "output file (default stdout); .gz or .zst compresses"),
		truth: fs.String("truth", "", "ground-truth JSON file (default with -o: the output name without .gz/.zst, plus .truth.json; none for stdout)"),
	}
	g.config = func() (sampledata.Config, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["incident-cpu"] && cfg.CPUs != 96 {
			// Keep the pegged core where it sits on the 96-CPU host: among
			// the NIC-polling cores, 39/96 of the way up.
			cfg.IncidentCPU = cfg.CPUs * 39 / 96
		}
		if *nics != "" {
			list, err := parseCPUList(*nics)
			if err != nil {
				return cfg, fmt.Errorf("--nic-cpus: %w", err)
			}
			cfg.NICCPUs = list
		}
		if err := query.CheckHost(*host); err != nil {
			return cfg, err
		}
		cfg.Hostname = *host
		ns, err := query.ParseWallTime("start-time", *startTime)
		if err != nil {
			return cfg, err
		}
		start := time.Unix(0, ns).UTC().Truncate(time.Second)
		cfg.CapturedOn = start.Add(time.Duration(cfg.Seconds) * time.Second).Format(time.ANSIC)
		if !set["start"] {
			cfg.Start = start.Sub(start.Truncate(24 * time.Hour)).Seconds()
		}
		return cfg, nil
	}
	return g
}

// nopCloser adds a no-op Close to a plain output.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// compressor wraps w in gzip or zstd according to name's extension.
func compressor(w io.Writer, name string, best bool) (io.WriteCloser, error) {
	switch filepath.Ext(name) {
	case ".gz":
		level := gzip.DefaultCompression
		if best {
			level = gzip.BestCompression
		}
		return gzip.NewWriterLevel(w, level)
	case ".zst":
		level := zstd.SpeedDefault
		if best {
			level = zstd.SpeedBestCompression
		}
		return zstd.NewWriter(w, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
	}
	return nopCloser{w}, nil
}

// ctxWriter stops a long write when ctx is cancelled (Ctrl-C).
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// parseCPUList reads a CPU list such as "0,3-5,39".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q: want a CPU number or a range like 32-47", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("%q: want a range like 32-47", part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
