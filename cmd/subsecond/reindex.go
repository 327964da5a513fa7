package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

// reindexStore is what reindexing needs of the store.
type reindexStore interface {
	Reindex(ctx context.Context) (int, error)
}

// runReindex implements `subsecond reindex`: it builds the fleet index of
// the stored captures that have none, those imported before the index
// existed (serve does the same in the background when it starts).
func runReindex(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	db := dbFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond reindex\n\n"+
			"Builds the fleet index (per-host counts of commands, functions and call\n"+
			"edges per 10 s, which the fleet views read) of the stored captures\n"+
			"imported before it existed; captures without a wall-clock time have none.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	s, err := openExisting(ctx, e, *db)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	n, err := s.Reindex(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "indexed %d captures in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// reindexLog runs s.Reindex and logs what it did, for serve's start.
func reindexLog(ctx context.Context, s reindexStore, log func(msg string, args ...any)) {
	start := time.Now()
	n, err := s.Reindex(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		log("fleet index: reindex failed", "indexed", n, "err", err)
	case n > 0:
		log("fleet index: indexed captures imported before it", "count", n, "took", time.Since(start).Round(time.Millisecond).String())
	}
}
