package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/subsecond/subsecond/store"
)

// dbHelp documents where the database lives; commands that open it repeat
// it in their --db flag help.
const dbHelp = "database file (default $SUBSECOND_DB, else $XDG_DATA_HOME/subsecond/subsecond.db, else ~/.local/share/subsecond/subsecond.db)"

// dbFlag registers the --db flag on fs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", dbHelp)
}

// defaultDBPath resolves the database location when --db is not given:
// $SUBSECOND_DB, else $XDG_DATA_HOME/subsecond/subsecond.db, else
// ~/.local/share/subsecond/subsecond.db.
func defaultDBPath(getenv func(string) string) (string, error) {
	if p := getenv("SUBSECOND_DB"); p != "" {
		return p, nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "subsecond", "subsecond.db"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("no database location: set --db, $SUBSECOND_DB or $HOME")
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "subsecond", "subsecond.db"), nil
}

// openStore opens the database named by --db, or the default one. Open
// creates the file and its directory if needed.
func openStore(ctx context.Context, path string) (*store.Store, error) {
	if path == "" {
		p, err := defaultDBPath(os.Getenv)
		if err != nil {
			return nil, err
		}
		path = p
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return s, nil
}
