package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// TestReindex: `subsecond reindex` indexes a capture whose fleet index is
// missing (as one imported by an older version) and then has nothing
// left to do.
func TestReindex(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "c.txt")
	if err := os.WriteFile(capture, []byte(nightCapture("node-1", int(time.Now().Add(-time.Hour).Unix()))), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, capture); err != nil {
		t.Fatal(err)
	}
	out, _, err := runStoreCmd(t, "", "reindex", "--db", db)
	if err != nil || !strings.HasPrefix(out, "indexed 0 captures") {
		t.Errorf("reindex of an indexed database: %v\n%s; want indexed 0 captures", err, out)
	}
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec("DELETE FROM fleet_counts; DELETE FROM fleet_captures"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	out, _, err = runStoreCmd(t, "", "reindex", "--db", db)
	if err != nil || !strings.HasPrefix(out, "indexed 1 captures") {
		t.Errorf("reindex after the index was deleted: %v\n%s; want indexed 1 captures", err, out)
	}
}
