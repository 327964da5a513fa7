package store

import (
	"bytes"
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"

	"github.com/mattn/go-sqlite3"
)

// sampleRows returns every stored samples row of the database at path, in
// key order, without the profile key.
func sampleRows(t *testing.T, path string) [][9]int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", path+"?"+dsnParams)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT t, seq, cpu, pid, tid, comm, event, weight, stack FROM samples ORDER BY profile, t, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][9]int64
	for rows.Next() {
		var r [9]int64
		if err := rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6], &r[7], &r[8]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkInsertMatchesDriver imports the same capture through the bulk
// path and through database/sql/driver and compares the stored rows.
func TestBulkInsertMatchesDriver(t *testing.T) {
	ctx := context.Background()
	// 8 CPUs × 3 s × 49 Hz = 1176 samples: 18 full statements of 64 rows
	// and 24 single rows.
	text := genText(t, genConfig{CPUs: 8, Seconds: 3, Hz: 49, Seed: 21, Start: 42})
	var got [2][][9]int64
	for i, driverOnly := range []bool{false, true} {
		s, path := openTest(t)
		s.driverInserts = driverOnly
		p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
		if err != nil {
			t.Fatalf("Import (driverInserts=%v): %v", driverOnly, err)
		}
		got[i] = sampleRows(t, path)
		if len(got[i]) != int(p.Samples) {
			t.Errorf("driverInserts=%v: %d rows stored; want %d", driverOnly, len(got[i]), p.Samples)
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("bulk and driver inserts stored different rows")
	}
}

// TestBulkInserter checks that the pinned go-sqlite3 exposes its statement
// handles to the bulk path, and that a failing insert reports SQLite's
// message.
func TestBulkInserter(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		sc := dc.(*sqlite3.SQLiteConn)
		if _, err := sc.Exec(`INSERT INTO profiles (pk, id, name, file_name, sha256, bytes, uploaded_ns, metadata,
			time_base, start_ns, end_ns, samples, cpus, frequency_hz, warnings)
			VALUES (7, 'x', '', '', 'y', 0, 0, '{}', 0, 0, 0, 0, 0, 0, 0)`, nil); err != nil {
			return err
		}
		in, err := newInserter(sc, "samples", 7, sampleCols, 4)
		if err != nil {
			return err
		}
		defer in.close()
		b := newBulkInserter(in)
		if b == nil {
			t.Fatal("newBulkInserter = nil; want the bulk path for go-sqlite3")
		}
		var rows []int64
		for i := range int64(6) { // one statement of 4 rows, two single rows
			rows = append(rows, i*10, 0, i, 1, 1, 0, 0, 0, 0)
		}
		if err := b.insert(rows); err != nil {
			t.Fatalf("insert: %v", err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM samples WHERE profile = 7`).Scan(&n); err != nil {
			return err
		}
		if n != 6 {
			t.Errorf("%d rows stored; want 6", n)
		}
		err = b.insert(rows[len(rows)-sampleCols:])
		if err == nil || !strings.Contains(err.Error(), "UNIQUE constraint failed") {
			t.Errorf("inserting a row twice: error %v; want SQLite's UNIQUE constraint message", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
