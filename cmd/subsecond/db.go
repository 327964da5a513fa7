package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"

	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
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

// openStore opens the database named by --db (dsn), or the default one, as
// a store with options opt. The SQLite file and its directory are created
// if needed; a database written by an older version is upgraded first,
// with a progress bar on a terminal.
func openStore(ctx context.Context, e env, dsn string, opt store.Options) (*store.Store, error) {
	if dsn == "" {
		p, err := defaultDBPath(os.Getenv)
		if err != nil {
			return nil, err
		}
		dsn = p
	}
	var bar *progressbar.ProgressBar
	b, err := sqlite.Open(ctx, dsn, sqlite.Options{Progress: func(done, total int64) {
		if bar == nil {
			if bar = newCountBar(e.stderr, total, "upgrading the database"); bar == nil {
				return
			}
		}
		bar.Set64(done)
	}})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return store.New(b, opt), nil
}
