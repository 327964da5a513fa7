package main

import (
	"context"
	"flag"
	"fmt"
)

// runDelete implements `subsecond delete [--db PATH] ID…`: it removes the
// profiles and everything stored with them.
func runDelete(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	db := dbFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond delete [--db PATH] ID…\n\nDeletes the stored profiles and everything stored with them.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 1, -1, "one or more profile IDs (see 'subsecond list')"); err != nil {
		return err
	}
	s, err := openExisting(ctx, e, *db)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, id := range fs.Args() {
		if err := s.Delete(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted %s\n", id)
	}
	return nil
}
