// Package store keeps imported captures in one SQLite file and answers
// every later question from it: a capture's text is parsed once, at import,
// and never read again.
//
//	s, err := store.Open(ctx, "subsecond.db")
//	if err != nil { … }
//	defer s.Close()
//	p, existed, err := s.Import(ctx, f, store.ImportOptions{FileName: "out.perf"})
//	c, err := s.Capture(ctx, p.ID) // columnar samples for heatmaps and flame graphs
//
// # Schema
//
// The schema lives in the migrations package and is applied by Open. A
// profile row carries the capture's metadata and summary figures; strings,
// frames, stack nodes, samples, events and warnings hang off it and are
// deleted with it.
//
// Stacks are stored as a shared-prefix tree (node, parent, frame), the same
// tree subsecond.Interner builds and subsecond.Capture.Nodes holds, rather
// than as interned frame arrays: perf stacks share long caller prefixes, so
// the tree stores each prefix once, a sample refers to a single integer,
// and loading a capture copies rows into slices with no re-interning.
//
// Samples live in a WITHOUT ROWID table keyed by (profile, t, seq), with t
// in nanoseconds from the profile's first timestamp. Rows are therefore
// clustered by time: a query over a time window, with or without a CPU
// filter, reads only that window's rows (see Window), and no secondary index
// doubles the table. Every column is a small integer, and the two that
// would repeat the same value in nearly every row cost nothing: seq is 0
// unless another sample has the same time (see seqCounter), and weight is 0
// when it equals the event's usual period, kept in the events table.
//
// # Atomicity
//
// An import runs in a single transaction, so a profile becomes visible only
// when it is complete. A cancelled context, a strict-mode parse error or a
// process killed mid-ingest (SQLite discards the uncommitted tail of the
// write-ahead log on the next open) leaves neither a profile nor orphan
// rows. One transaction is simpler than a "complete" flag with clean-up at
// start-up and costs nothing in concurrency: SQLite admits one writer at a
// time anyway, and readers keep reading committed profiles meanwhile (WAL).
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/migrations"
)

// Store is a SQLite database of imported profiles. Its methods are safe for
// concurrent use.
type Store struct {
	db    *sql.DB
	write chan struct{} // holds one token: SQLite has a single writer
	cache *captureCache
	// warmLimit is the largest import whose capture Import caches (see
	// warmCapture).
	warmLimit int
	// driverOnly turns off the bulk insert and read of samples (see
	// bulkInserter, readSamplesRaw), for tests of the paths they replace.
	driverOnly bool
	bg         sync.WaitGroup // background checkpoints (see checkpointLater)
}

// dsnParams are set on every pooled connection: write-ahead logging so
// readers never wait for an import, foreign keys for ON DELETE CASCADE, a
// busy timeout for a writer in another process, NORMAL sync (durable at
// checkpoints, never corrupt) and a 16 MB page cache for bulk inserts.
const dsnParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=10000&_synchronous=NORMAL&_cache_size=-16000"

// Open opens the database at path, creating it and its directory if needed,
// and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open store: %w: empty database path", subsecond.ErrInvalid)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open store %s: %w: path may not contain '?' or '#'", path, subsecond.ErrInvalid)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	db, err := sql.Open("sqlite3", path+"?"+dsnParams)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{db: db, write: make(chan struct{}, 1), cache: newCaptureCache(4), warmLimit: warmLimit}
	return s, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close waits for background work and closes the database.
func (s *Store) Close() error {
	s.bg.Wait()
	return s.db.Close()
}

// lockWrite waits for the single writer slot, or for ctx to end.
func (s *Store) lockWrite(ctx context.Context) error {
	select {
	case s.write <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) unlockWrite() { <-s.write }

// newID returns a random 128-bit profile ID in lower-case base32 (26
// characters).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// validID reports whether id has the shape newID produces, so that hostile
// IDs are refused before they reach SQL.
func validID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

const profileCols = `pk, id, name, file_name, sha256, bytes, uploaded_ns, metadata, time_base,
	start_ns, end_ns, samples, cpus, frequency_hz, warnings, host`

type rowScanner interface{ Scan(dest ...any) error }

// scanProfile reads one row of profileCols.
func scanProfile(r rowScanner) (pk, base int64, p *subsecond.Profile, err error) {
	p = new(subsecond.Profile)
	var uploaded int64
	var meta string
	err = r.Scan(&pk, &p.ID, &p.Name, &p.FileName, &p.SHA256, &p.Bytes, &uploaded, &meta, &base,
		&p.Start, &p.End, &p.Samples, &p.CPUs, &p.FrequencyHz, &p.Warnings, &p.Host)
	if err != nil {
		return 0, 0, nil, err
	}
	p.Uploaded = time.Unix(0, uploaded).UTC()
	if err := json.Unmarshal([]byte(meta), &p.Meta); err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s metadata: %w", p.ID, err)
	}
	p.Wall = subsecond.Anchor(p.Meta, p.End)
	return pk, base, p, nil
}

// List returns every stored profile, most recently imported first, with
// their events but without warning messages.
func (s *Store) List(ctx context.Context) ([]subsecond.Profile, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+profileCols+` FROM profiles ORDER BY uploaded_ns DESC, pk DESC`)
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	defer rows.Close()
	var list []subsecond.Profile
	byPK := map[int64]int{}
	for rows.Next() {
		pk, _, p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("list profiles: %w", err)
		}
		byPK[pk] = len(list)
		list = append(list, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	ev, err := tx.QueryContext(ctx, `SELECT profile, name, samples FROM events ORDER BY profile, idx`)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer ev.Close()
	for ev.Next() {
		var pk int64
		var e subsecond.EventCount
		if err := ev.Scan(&pk, &e.Name, &e.Samples); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		if i, ok := byPK[pk]; ok {
			list[i].Events = append(list[i].Events, e)
		}
	}
	if err := ev.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return list, nil
}

// Profile returns the stored profile id with its events and first warning
// messages. An unknown id yields an error wrapping subsecond.ErrNotFound.
func (s *Store) Profile(ctx context.Context, id string) (*subsecond.Profile, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", id, err)
	}
	defer tx.Rollback()
	_, _, p, err := loadProfile(ctx, tx, id)
	return p, err
}

// loadProfile reads profile id, its events and warnings inside tx.
func loadProfile(ctx context.Context, tx *sql.Tx, id string) (pk, base int64, p *subsecond.Profile, err error) {
	if !validID(id) {
		return 0, 0, nil, fmt.Errorf("profile %q: %w", id, subsecond.ErrNotFound)
	}
	pk, base, p, err = scanProfile(tx.QueryRowContext(ctx, `SELECT `+profileCols+` FROM profiles WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil, fmt.Errorf("profile %s: %w", id, subsecond.ErrNotFound)
	}
	if err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, samples FROM events WHERE profile = ? ORDER BY idx`, pk)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s events: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e subsecond.EventCount
		if err := rows.Scan(&e.Name, &e.Samples); err != nil {
			return 0, 0, nil, fmt.Errorf("profile %s events: %w", id, err)
		}
		p.Events = append(p.Events, e)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s events: %w", id, err)
	}
	wrows, err := tx.QueryContext(ctx, `SELECT line, message FROM warnings WHERE profile = ? ORDER BY seq`, pk)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s warnings: %w", id, err)
	}
	defer wrows.Close()
	for wrows.Next() {
		var w subsecond.Warning
		if err := wrows.Scan(&w.Line, &w.Message); err != nil {
			return 0, 0, nil, fmt.Errorf("profile %s warnings: %w", id, err)
		}
		p.WarningList = append(p.WarningList, w)
	}
	if err := wrows.Err(); err != nil {
		return 0, 0, nil, fmt.Errorf("profile %s warnings: %w", id, err)
	}
	return pk, base, p, nil
}

// Delete removes profile id and everything stored with it. An unknown id
// yields an error wrapping subsecond.ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("delete profile %q: %w", id, subsecond.ErrNotFound)
	}
	if err := s.lockWrite(ctx); err != nil {
		return fmt.Errorf("delete profile %s: %w", id, err)
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete profile %s: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete profile %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete profile %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete profile %s: %w", id, subsecond.ErrNotFound)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete profile %s: %w", id, err)
	}
	s.cache.remove(id)
	return nil
}

// isConstraint reports whether err is a SQLite constraint violation.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}
