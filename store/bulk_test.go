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
		s.driverOnly = driverOnly
		p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
		if err != nil {
			t.Fatalf("Import (driverOnly=%v): %v", driverOnly, err)
		}
		got[i] = sampleRows(t, path)
		if len(got[i]) != int(p.Samples) {
			t.Errorf("driverOnly=%v: %d rows stored; want %d", driverOnly, len(got[i]), p.Samples)
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

// TestBulkReadMatchesDriver loads captures cold through readSamplesRaw and
// through database/sql/driver and compares the results, for small input,
// out-of-order input and a capture read in two halves of more than one
// read chunk each.
func TestBulkReadMatchesDriver(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	var ids []string
	for _, text := range [][]byte{[]byte(smallCapture), []byte(lateCapture),
		genText(t, genConfig{CPUs: 96, Seconds: 30, Hz: 49, Seed: 4, Start: 9})} {
		p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	for _, id := range ids {
		s.driverOnly = false
		bulk, err := s.loadCapture(ctx, id)
		if err != nil {
			t.Fatalf("bulk load: %v", err)
		}
		s.driverOnly = true
		plain, err := s.loadCapture(ctx, id)
		if err != nil {
			t.Fatalf("driver load: %v", err)
		}
		compareCapture(t, bulk, plain)
		if !reflect.DeepEqual(bulk, plain) {
			t.Errorf("bulk and driver loads differ")
		}
	}
	if c, _ := s.Capture(ctx, ids[2]); c == nil || c.Samples.Len() <= 2*readChunk {
		t.Errorf("the large capture does not fill more than one read chunk per half")
	}
}

// TestLoadRefusesDamagedSamples checks that a samples row that is not an
// integer or points outside the tables fails the load, on both paths.
func TestLoadRefusesDamagedSamples(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{
		`UPDATE samples SET cpu = 'x' WHERE t = (SELECT max(t) FROM samples)`,
		`UPDATE samples SET stack = -1`,
		`UPDATE samples SET comm = 1 << 33`,
		`UPDATE samples SET stack = 1000000`,
	} {
		for _, driverOnly := range []bool{false, true} {
			s, _ := openTest(t)
			s.driverOnly = driverOnly
			p, _, err := s.Import(ctx, strings.NewReader(lateCapture), ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, damage); err != nil {
				t.Fatalf("%s: %v", damage, err)
			}
			if c, err := s.loadCapture(ctx, p.ID); err == nil {
				t.Errorf("driverOnly=%v, %s: loaded %d samples; want an error", driverOnly, damage, c.Samples.Len())
			}
		}
	}
}
