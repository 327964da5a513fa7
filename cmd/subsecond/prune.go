package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/timeline"
)

// pruneStore is what pruning needs of the store.
type pruneStore interface {
	List(ctx context.Context) ([]subsecond.Profile, error)
	Delete(ctx context.Context, id string) error
	PruneSeries(ctx context.Context, host string, before int64) error
	PruneIndex(ctx context.Context, before int64) (int, error)
}

// runPrune implements `subsecond prune --older-than DURATION [--host HOST]
// [--dry-run]`: it deletes the profiles that ended more than DURATION ago.
func runPrune(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	db := dbFlag(fs)
	older := fs.Duration("older-than", 0, "delete captures that ended longer ago than this, e.g. 72h (required)")
	host := fs.String("host", "", "only this host's captures (default: every host)")
	dry := fs.Bool("dry-run", false, "list what would be deleted, delete nothing")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond prune --older-than DURATION [--host HOST] [--dry-run]\n\n"+
			"Deletes the stored captures that ended longer ago than DURATION: by their\n"+
			"wall-clock time when known, else by when they were imported.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	if *older <= 0 {
		fs.Usage()
		return errors.New("prune: --older-than must be a positive duration, e.g. 72h")
	}
	s, err := openExisting(ctx, e, *db)
	if err != nil {
		return err
	}
	defer s.Close()
	n, err := prune(ctx, s, time.Now().Add(-*older), *host, *dry, e.stdout)
	if err != nil {
		return err
	}
	verb := "deleted"
	if *dry {
		verb = "would delete"
	}
	fmt.Fprintf(e.stdout, "%s %d captures that ended before %s\n", verb, n, time.Now().Add(-*older).UTC().Format(time.RFC3339))
	return nil
}

// prune deletes the profiles (of host, or of every host when host is "")
// that ended before cutoff, printing one line each to out, and the same
// hosts' series before cutoff (see store.Store.PruneSeries), and returns
// how many profiles there were. Pruning every host, it first drops the
// fleet index's whole days before cutoff (store.Store.PruneIndex), which
// spares the deletes their index rows. With dry set it deletes nothing.
func prune(ctx context.Context, s pruneStore, cutoff time.Time, host string, dry bool, out io.Writer) (int, error) {
	list, err := s.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if host == "" && !dry {
		if _, err := s.PruneIndex(ctx, cutoff.UnixNano()); err != nil {
			return 0, fmt.Errorf("prune: %w", err)
		}
	}
	n := 0
	for _, p := range timeline.Expired(list, cutoff) {
		if host != "" && p.Host != host {
			continue
		}
		if !dry {
			if err := s.Delete(ctx, p.ID); err != nil && !errors.Is(err, subsecond.ErrNotFound) {
				return n, fmt.Errorf("prune: %w", err)
			}
		}
		n++
		fmt.Fprintf(out, "%s  %s  %s\n", p.ID, p.Host, displayName(&p))
	}
	if !dry {
		if err := s.PruneSeries(ctx, host, cutoff.UnixNano()); err != nil {
			return n, fmt.Errorf("prune: %w", err)
		}
	}
	return n, nil
}

// retain runs prune every interval until ctx ends, keeping the captures
// of the last age, and logs what it deletes.
func retain(ctx context.Context, s pruneStore, age, interval time.Duration, log func(msg string, args ...any)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := prune(ctx, s, time.Now().Add(-age), "", false, io.Discard)
		if err != nil && ctx.Err() == nil {
			log("retention: prune failed", "err", err)
		} else if n > 0 {
			log("retention: deleted old captures", "count", n, "older_than", age.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
