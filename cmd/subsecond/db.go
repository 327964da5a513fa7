package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
	"github.com/subsecond/subsecond/store/sqlite"
)

// dbHelp documents where the database lives; commands that open it repeat
// it in their --db flag help.
const dbHelp = "SQLite database file, or postgres://… URL of a PostgreSQL database (default $SUBSECOND_DB, else $XDG_DATA_HOME/subsecond/subsecond.db, else ~/.local/share/subsecond/subsecond.db)"

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

// isPostgres reports whether dsn, the value of --db or $SUBSECOND_DB, is
// the URL of a PostgreSQL database rather than the path of a SQLite file.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// showDSN returns dsn fit to print: a URL without its password.
func showDSN(dsn string) string {
	if !isPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "a PostgreSQL database"
	}
	return u.Redacted()
}

// openExisting opens the database as openStore does, for a command that
// only reads it (list, info, a view of a stored profile, hosts, timeline,
// delete, prune): a SQLite file that does not exist, or whose directory
// does not, is an error naming it rather than a new empty database.
func openExisting(ctx context.Context, e env, dsn string) (*store.Store, error) {
	if dsn == "" {
		p, err := defaultDBPath(os.Getenv)
		if err != nil {
			return nil, err
		}
		dsn = p
	}
	if !isPostgres(dsn) {
		if _, err := os.Stat(dsn); errors.Is(err, os.ErrNotExist) {
			dir := filepath.Dir(dsn)
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("database %s: its directory %s does not exist (check --db or $SUBSECOND_DB; 'subsecond import FILE' creates a database)", dsn, dir)
			}
			return nil, fmt.Errorf("database %s does not exist (check --db or $SUBSECOND_DB; 'subsecond import FILE' creates it)", dsn)
		}
	}
	return openStore(ctx, e, dsn, store.Options{})
}

// importOnly are the store options of commands that import and never
// view (import, record, generate fleet): a store keeps the capture it has
// just imported loaded for the views that usually follow an upload
// (store.Options.WarmLimit), which such a command never asks for, so that
// importing a night of captures in one command would hold the capture
// cache's whole budget (512 MiB by default) for nothing.
var importOnly = store.Options{WarmLimit: -1}

// openStore opens the database named by --db (dsn), or the default one, as
// a store with options opt: a postgres:// URL is a PostgreSQL database,
// anything else the path of a SQLite file, created with its directory if
// needed. A SQLite database written by an older version is upgraded first,
// with a progress bar on a terminal.
func openStore(ctx context.Context, e env, dsn string, opt store.Options) (*store.Store, error) {
	if dsn == "" {
		p, err := defaultDBPath(os.Getenv)
		if err != nil {
			return nil, err
		}
		dsn = p
	}
	if isPostgres(dsn) {
		s, err := postgres.OpenStore(ctx, dsn, opt)
		if err != nil {
			return nil, fmt.Errorf("database %s: %w", showDSN(dsn), err)
		}
		return s, nil
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

// readFlags are the flags of the commands that read the database and print
// text or JSON (list, info, hosts): --db and --format.
type readFlags struct {
	fs     *flag.FlagSet
	db     *string
	format *string
}

// newReadFlags returns command name's flags; usage is the synopsis and the
// description that --help prints above them.
func newReadFlags(name, usage string) *readFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	r := &readFlags{fs: fs, db: dbFlag(fs), format: fs.String("format", "text", "output format: text or json")}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return r
}

// open parses e's arguments, wanting min to max of them (see checkArgs),
// checks --format and opens the database, which must exist.
func (r *readFlags) open(ctx context.Context, e env, min, max int, want string) (*store.Store, error) {
	if err := parseFlags(r.fs, e, e.args); err != nil {
		return nil, err
	}
	if err := checkArgs(r.fs, min, max, want); err != nil {
		return nil, err
	}
	if err := checkFormat(r.fs.Name(), *r.format, "text", "json"); err != nil {
		return nil, err
	}
	return openExisting(ctx, e, *r.db)
}
