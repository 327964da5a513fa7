// Package migrations holds the database schema as numbered SQL files, one
// directory per SQL dialect, embedded in the binary and applied in order at
// start-up by the store's backends, each in its own transaction and
// recorded in the goose_db_version table. A migration that has shipped is
// never edited; a change is a new file, in each dialect's directory, with
// the next free number.
//
//	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite)
//	if err != nil { … }
//	_, err = p.Up(ctx)
package migrations

import (
	"embed"
	"io/fs"
	"strconv"
	"strings"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// SQLite and Postgres hold the migration files of each dialect, named
// NNNN_what.sql, in goose's SQL format.
var (
	SQLite   = sub("sqlite")
	Postgres = sub("postgres")
)

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return f
}

// Latest returns the number of the last migration in fsys (SQLite or
// Postgres): the version goose records once all of them have run.
func Latest(fsys fs.FS) int64 {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		panic(err) // the pattern is valid
	}
	var latest int64
	for _, name := range names {
		num, _, _ := strings.Cut(name, "_")
		if n, err := strconv.ParseInt(num, 10, 64); err == nil && n > latest {
			latest = n
		}
	}
	return latest
}
