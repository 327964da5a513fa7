package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
)

// runImport implements `subsecond import [--db PATH] [--name NAME]
// [--host HOST] [--strict] FILE…`: each FILE (plain, gzip or zstd perf
// script text; "-" for standard input; a directory or a pattern for the
// files in it, in the order recorded) becomes a stored profile, or is recognised as
// one stored before. A failed file does not stop the others.
func runImport(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	db := dbFlag(fs)
	name := fs.String("name", "", "display name of the imported profiles (default: the file name)")
	host := fs.String("host", "", "the host the captures were recorded on (default: their '# hostname', else unknown)")
	strict := fs.Bool("strict", false, "fail on the first malformed record instead of skipping it")
	labels := labelsFlag(fs, "a label key=value set on the captures' host (zone=us-east-1a); repeat for more")
	boot := fs.String("boot", "", "the `time` the host booted, Unix seconds or RFC 3339 (its /proc/stat btime), for the fleet's uptimes")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond import [--db PATH] [--name NAME] [--host HOST] [--label KEY=VALUE…] [--boot T] [--strict] FILE…\n\nStores each FILE (perf script text, plain, gzip or zstd; - for standard input;\na directory or a quoted pattern for its files) as a profile and prints its\nID; a file stored before is recognised by its digest and not stored twice.\nThe files of a directory or pattern are imported in the order they were\nrecorded: by the wall-clock time of their first sample, from the capture's\nheader (realtime timestamps, or else perf's \"# captured on\"), then by name;\nthose without one follow by name (perf's own names sort by time). File\nmodification times are not used: copying rewrites them.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 1, -1, "one or more FILEs (- for standard input)"); err != nil {
		return err
	}
	if *host != "" {
		if err := query.CheckHost(*host); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	ls, err := labels.labels("import")
	if err != nil {
		return err
	}
	bootNS, err := parseBoot("import", *boot)
	if err != nil {
		return err
	}
	files, err := expandFiles(fs.Args())
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	// The compressors' tables are faulted in now, while this is the one
	// busy thread: faulted in by an import's concurrent encoders, each new
	// page costs a TLB flush on every core (the real 5 s capture's import
	// took about 20 ms more CPU, of 80).
	store.Warm()
	s, err := openStore(ctx, e, *db, importOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	defer tuneGC(os.Getenv, importGCPercent, importGCLive)()

	failed := 0
	for _, file := range files {
		if err := importOne(ctx, s, e, file, store.ImportOptions{Name: *name, Host: *host, Strict: *strict, Labels: ls, Boot: bootNS}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			fmt.Fprintln(termWriter(e.stderr), "subsecond:", query.Message(err))
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("import: %d of %d files failed", failed, len(files))
	}
	return nil
}

// importOne imports one file with the name, host and strictness of opt and
// prints its summary line.
func importOne(ctx context.Context, s *store.Store, e env, file string, opt store.ImportOptions) error {
	opt.FileName = file
	in, err := openInput(ctx, e, file)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer in.Close()
	opt.Size = in.size
	if file == "-" {
		opt.FileName = ""
		if opt.Name == "" {
			opt.Name = "stdin"
		}
	}
	bar := newProgress(e.stderr, opt.Size, file)
	if bar != nil {
		opt.Progress = func(n int64) { bar.Set64(n) }
	}
	p, existed, err := s.Import(ctx, in, opt)
	if bar != nil {
		bar.Finish()
		bar.Clear()
	}
	if err != nil {
		return err
	}
	out := termWriter(e.stdout)
	fmt.Fprintln(out, summary(p, existed))
	for _, w := range p.WarningList[:min(len(p.WarningList), 3)] {
		fmt.Fprintf(out, "  warning: line %d: %s\n", w.Line, clip(w.Message, stackWidth))
	}
	return nil
}

// summary is the one line import prints per profile.
func summary(p *subsecond.Profile, existed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s: %d samples, %s, %d CPUs, %d warnings", p.ID, displayName(p), p.Samples,
		duration(p), p.CPUs, p.Warnings)
	if existed {
		fmt.Fprintf(&b, " (already stored, imported %s; not stored again)", p.Uploaded.Local().Format(time.DateTime))
	}
	return b.String()
}

// displayName returns the name under which text output shows p, clipped
// and escaped for a terminal.
func displayName(p *subsecond.Profile) string {
	if p.Name != "" {
		return clip(p.Name, nameWidth)
	}
	if p.FileName != "" {
		return clip(p.FileName, nameWidth)
	}
	return "(unnamed)"
}

// duration writes how long a profile recorded (subsecond.Profile.Duration)
// as the pages write it, "no time" for a capture without timestamps.
func duration(p *subsecond.Profile) string {
	if !p.Timed() {
		return "no time"
	}
	return query.DisplayDuration(p.Duration())
}

// newCountBar returns a progress bar of total items drawn on w when w is a
// terminal, and nil otherwise.
func newCountBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// newProgress returns a progress bar drawn on w when w is a terminal, and
// nil otherwise, so that logs and pipes get only the summary lines. size is
// the input's length in bytes, or 0 when unknown (a spinner is drawn).
func newProgress(w io.Writer, size int64, desc string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return nil
	}
	max := size
	if max <= 0 {
		max = -1
	}
	return progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}
