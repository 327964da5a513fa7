package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/folded"
	"github.com/subsecond/subsecond/parser"
)

// runCollapse prints the folded stacks of a perf script capture, as
// FlameGraph's stackcollapse-perf.pl does:
//
//	subsecond collapse [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs] [--srcline] [--event NAME] [--strict] [FILE|-]
func runCollapse(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("collapse", flag.ContinueOnError)
	var o folded.Options
	var all, strict bool
	fs.BoolVar(&o.PID, "pid", false, "root frame comm-pid")
	fs.BoolVar(&o.TID, "tid", false, "root frame comm-pid/tid")
	fs.BoolVar(&o.Kernel, "kernel", false, "suffix kernel frames with _[k]")
	fs.BoolVar(&o.JIT, "jit", false, "suffix JIT frames with _[j]")
	fs.BoolVar(&all, "all", false, "both --kernel and --jit")
	fs.BoolVar(&o.Addrs, "addrs", false, "show addresses of [unknown] frames")
	fs.BoolVar(&o.SrcLine, "srcline", false, "append file:line where perf script -F +srcline printed one")
	fs.StringVar(&o.Event, "event", "", "event to keep (default: the first sampling event in the input, else the first event)")
	fs.BoolVar(&strict, "strict", false, "stop at the first malformed line instead of skipping the record")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond collapse [FLAGS] [FILE|-]\n\nPrints folded stacks (root first, ';'-joined, space, summed period) of a\nperf script capture, plain, gzip or zstd. Reads stdin without FILE or with -.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 1, ""); err != nil {
		return err
	}
	if all {
		o = o.All()
	}
	o.Event = parser.EventName(o.Event)

	arg := "-"
	if fs.NArg() == 1 {
		arg = fs.Arg(0)
	}
	in, err := openInput(ctx, e, arg)
	if err != nil {
		return fmt.Errorf("collapse: %w", err)
	}
	defer in.Close()
	name := in.name
	r, err := decompress.NewReader(in)
	if err != nil {
		return fmt.Errorf("collapse: %s: %w", name, err)
	}
	defer r.Close()

	sc := parser.NewScanner(r, parser.Options{Strict: strict})
	c := folded.New(o)
	for n := 0; sc.Scan(); n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		c.AddFrames(sc.Sample(), sc.FrameIDs())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("collapse: %s: %w", name, err)
	}
	if nw, ws := sc.Warnings(); nw > 0 {
		out := termWriter(e.stderr)
		fmt.Fprintf(out, "subsecond collapse: %s: skipped %d malformed records\n", name, nw)
		for _, w := range ws {
			fmt.Fprintf(out, "  line %d: %s\n", w.Line, clip(w.Message, stackWidth))
		}
	}
	if _, skipped := c.Counts(); skipped > 0 {
		fmt.Fprintf(e.stderr, "subsecond collapse: kept event %q; skipped %d samples of other events (choose with --event)\n", c.Event(), skipped)
	}
	if _, err := c.WriteTo(e.stdout); err != nil {
		return fmt.Errorf("collapse: write: %w", err)
	}
	return nil
}
