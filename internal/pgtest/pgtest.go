// Package pgtest gives tests a PostgreSQL schema of their own on the
// server $SUBSECOND_TEST_POSTGRES names (.ci/postgres starts one), dropped
// when the test ends.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver
)

// Schema creates a schema of its own in $SUBSECOND_TEST_POSTGRES's
// database, dropped when t ends, and returns the connection URL with it as
// the search path. Without SUBSECOND_TEST_POSTGRES it skips t, saying how
// to run it: the test reports show each PostgreSQL test as skipped.
func Schema(t testing.TB) string {
	t.Helper()
	base := os.Getenv("SUBSECOND_TEST_POSTGRES")
	if base == "" {
		t.Skip("PostgreSQL: SUBSECOND_TEST_POSTGRES is not set; set it to postgres://… to run (.ci/postgres starts a server)")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := "test_" + strings.ToLower(rand.Text())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if admin, err := sql.Open("pgx", base); err == nil {
			admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		}
	})
	return WithSearchPath(base, schema)
}

// WithSearchPath returns the connection URL u with schema as its search
// path.
func WithSearchPath(u, schema string) string {
	if strings.Contains(u, "?") {
		return u + "&search_path=" + schema
	}
	return u + "?search_path=" + schema
}
