package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/migrations"
)

// TestHelperIngest is not a test on its own: TestKillMidIngest runs the test
// binary again with SUBSECOND_INGEST_DB set, and this function then imports
// a large generated capture slowly into that database, reporting progress on
// stdout until it is killed.
func TestHelperIngest(t *testing.T) {
	path := os.Getenv("SUBSECOND_INGEST_DB")
	if path == "" {
		return
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := genPerf(pw, genConfig{CPUs: 96, Seconds: 600, Hz: 49, Seed: 9})
		pw.CloseWithError(err)
	}()
	_, _, err = s.Import(context.Background(), pr, ImportOptions{Progress: func(n int64) {
		fmt.Printf("progress %d\n", n)
		time.Sleep(5 * time.Millisecond)
	}})
	fmt.Println("finished:", err)
	os.Exit(3)
}

func TestKillMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("kills an importing child process; run without -short")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "kill.db")
	// Create the database first so that the child only ever writes samples.
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Import(context.Background(), strings.NewReader(smallCapture), ImportOptions{Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := rowCounts(t, path)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperIngest$")
	cmd.Env = append(os.Environ(), "SUBSECOND_INGEST_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the child once the write-ahead log holds several megabytes of
	// uncommitted rows (pages spill there once the 16 MB page cache is
	// full).
	sc := bufio.NewScanner(out)
	wal := path + "-wal"
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "progress ") {
			t.Fatalf("child said %q before it was killed", line)
		}
		if fi, err := os.Stat(wal); err == nil && fi.Size() > 4<<20 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
			t.Logf("killed the child after %s with a %d-byte WAL", line, fi.Size())
			break
		}
	}
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed: %v", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child exit = %v; want killed by SIGKILL", err)
	}

	s, err = Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "kept" {
		t.Errorf("profiles after kill = %v; want only the one imported before", list)
	}
	if after := rowCounts(t, path); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("row counts after kill = %v; want %v (no orphan rows)", after, before)
	}
	var check string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", check, err)
	}
}

func TestConcurrentImportsAndReaders(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	seed, _, err := s.Import(ctx, strings.NewReader(smallCapture), ImportOptions{Name: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	texts := [][]byte{
		genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 21}),
		genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 22}),
	}
	var wg sync.WaitGroup
	ids := make([]string, len(texts))
	errs := make(chan error, 100)
	for i, text := range texts {
		wg.Go(func() {
			p, existed, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{Name: fmt.Sprint("gen", i)})
			if err != nil || existed {
				errs <- fmt.Errorf("import %d: existed=%v err=%v", i, existed, err)
				return
			}
			ids[i] = p.ID
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 4 {
		readers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				switch (n + r) % 3 {
				case 0:
					if _, err := s.List(ctx); err != nil {
						errs <- fmt.Errorf("List: %w", err)
					}
				case 1:
					c, err := s.Capture(ctx, seed.ID)
					if err != nil || c.Samples.Len() != 4 {
						errs <- fmt.Errorf("Capture during imports: %v", err)
					}
				case 2:
					cols, err := s.Window(ctx, seed.ID, subsecond.Range{Start: 100e9, End: 101e9}, nil)
					if err != nil || cols.Len() != 3 {
						errs <- fmt.Errorf("Window during imports: %d samples, %v; want 3", cols.Len(), err)
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		if id == "" {
			continue
		}
		c, err := s.Capture(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		compareCapture(t, c, buildCapture(t, texts[i]))
	}
}

func TestUpgradeInPlace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path+"?"+dsnParams)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	// A profile as the first schema stores it.
	const id = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	_, err = db.Exec(`INSERT INTO profiles VALUES (1, ?, 'old', 'old.perf', 'abc123', 42, 1700000000000000000, '{"hostname":"h"}',
		1000, 1000, 2000, 2, 1, 49, 0)`, id)
	if err == nil {
		_, err = db.Exec(`INSERT INTO events VALUES (1, 0, 'cycles', 2);
			INSERT INTO strings VALUES (1, 1, 'main'), (1, 2, 'app');
			INSERT INTO frames VALUES (1, 0, 1, 2, 0, 4096, 2, 0);
			INSERT INTO stack_nodes VALUES (1, 1, 0, 0);
			INSERT INTO samples VALUES (1, 0, 0, 3, 10, 11, 2, 0, 1, 1), (1, 1000, 1, 3, 10, 11, 2, 0, 1, 1)`)
	}
	if err != nil {
		t.Fatalf("insert version-1 data: %v", err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version-1 database: %v", err)
	}
	defer s.Close()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) < 2 {
		t.Fatalf("migrations: %v, %v", files, err)
	}
	var version int64
	if err := s.db.QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&version); err != nil || version != int64(len(files)) {
		t.Errorf("schema version after Open = %d, %v; want %d", version, err, len(files))
	}
	c, err := s.Capture(ctx, id)
	if err != nil {
		t.Fatalf("Capture of upgraded profile: %v", err)
	}
	if c.Profile.Name != "old" || c.Profile.Meta.Hostname != "h" || c.Samples.Len() != 2 ||
		c.Samples.Time[1] != 2000 || c.Strings[c.Frames[c.Nodes[c.Samples.Stack[0]].Frame].Symbol] != "main" {
		t.Errorf("upgraded capture = %+v; want the version-1 data", c)
	}
	// Version 4 gives every profile a host, from its metadata.
	if c.Profile.Host != "h" {
		t.Errorf("upgraded profile's host = %q; want h, its metadata's hostname", c.Profile.Host)
	}
	// Version 2's unique SHA-256 index is in force.
	if _, err := s.db.Exec(`INSERT INTO profiles (pk, id, name, file_name, sha256, bytes, uploaded_ns, metadata,
		time_base, start_ns, end_ns, samples, cpus, frequency_hz, warnings)
		VALUES (2, 'bbbbbbbbbbbbbbbbbbbbbbbbbb', 'dup', '', 'abc123', 0, 0, '{}', 0, 0, 0, 0, 0, 0, 0)`); !isConstraint(err) {
		t.Errorf("insert of a duplicate SHA-256 after upgrade: %v; want a constraint error", err)
	}
}

// TestEveryConnectionConfigured checks the DSN settings on several pooled
// connections held at once, not only on the first.
func TestEveryConnectionConfigured(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3 {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, busy, sync int
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || busy != 10000 || sync != 1 {
			t.Errorf("connection %d: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d; want wal 1 10000 1",
				i, mode, fk, busy, sync)
		}
	}
}

// TestImportCheckpointsAfterwards checks that an import's write-ahead log
// reaches the database file after Import returns, and that the import's
// connection goes back to the pool with the default checkpoint threshold.
func TestImportCheckpointsAfterwards(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	text := genText(t, genConfig{CPUs: 32, Seconds: 10, Hz: 49, Seed: 8})
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	s.bg.Wait()
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() < before.Size()+256<<10 {
		t.Errorf("database file grew from %d to %d bytes after the checkpoint; want the import's rows in it", before.Size(), after.Size())
	}
	s.db.SetMaxIdleConns(4)
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 3 {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var pages int
		if err := c.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages != autoCheckpoint {
			t.Errorf("connection %d: wal_autocheckpoint = %d; want %d", i, pages, autoCheckpoint)
		}
	}
}
