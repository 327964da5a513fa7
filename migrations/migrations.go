// Package migrations holds the database schema as numbered SQL files,
// embedded in the binary and applied in order at start-up by the store, each
// in its own transaction and recorded in the goose_db_version table. A
// migration that has shipped is never edited; a change is a new file.
//
//	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS)
//	if err != nil { … }
//	_, err = p.Up(ctx)
package migrations

import "embed"

// FS holds the migration files, named NNNN_what.sql, in goose's SQL format.
//
//go:embed *.sql
var FS embed.FS
