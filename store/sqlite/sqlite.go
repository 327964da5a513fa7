// Package sqlite is the store's embedded backend: one SQLite file in
// write-ahead-log mode, through database/sql and github.com/mattn/go-sqlite3.
//
//	b, err := sqlite.Open(ctx, "subsecond.db", sqlite.Options{})
//	if err != nil { … }
//	s := store.New(b, store.Options{})
//
// SQLite admits one writer at a time: within a process imports and deletes
// take turns through a mutex, other processes wait through the busy
// timeout. Readers never wait (WAL). An import holds the writer only for
// its final transaction (see package store). After each import and delete
// the write-ahead log is copied into the database and truncated, in the
// background, so that it does not keep the size of the largest import.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/migrations"
	"github.com/subsecond/subsecond/store"
)

// DSNParams are set on every pooled connection: write-ahead logging so
// readers never wait for an import, foreign keys for ON DELETE CASCADE, a
// busy timeout for a writer in another process, NORMAL sync (durable at
// checkpoints, never corrupt) and a 16 MB page cache.
const DSNParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=10000&_synchronous=NORMAL&_cache_size=-16000"

// Options configure Open.
type Options struct {
	// Progress, when set, is called while Open converts profiles stored by
	// an older version (see convert), with the samples converted so far
	// and in all.
	Progress func(done, total int64)
}

// Backend is a SQLite database of profiles; it implements store.Backend.
type Backend struct {
	db    *sql.DB
	write chan struct{} // holds one token: SQLite has a single writer
	bg    sync.WaitGroup
}

// Open opens the database at path, creating it and its directory if needed,
// applies pending migrations and converts profiles stored in an older
// format.
func Open(ctx context.Context, path string, opt Options) (*Backend, error) {
	if path == "" {
		return nil, fmt.Errorf("open database: %w: empty path", subsecond.ErrInvalid)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open database %s: %w: path may not contain '?' or '#'", path, subsecond.ErrInvalid)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
	}
	db, err := sql.Open("sqlite3", path+"?"+DSNParams)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	b := &Backend{db: db, write: make(chan struct{}, 1)}
	if err := b.migrate(ctx, opt); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return b, nil
}

// chunksVersion is the migration that adds chunks; profiles are converted
// after it and before the next, which drops the row tables.
const chunksVersion = 6

func (b *Backend) migrate(ctx context.Context, opt Options) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, b.db, migrations.SQLite)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if v < chunksVersion+1 {
		if _, err := p.UpTo(ctx, chunksVersion); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := b.convert(ctx, opt.Progress); err != nil {
			return err
		}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close waits for background checkpoints and closes the database.
func (b *Backend) Close() error {
	b.bg.Wait()
	return b.db.Close()
}

// DB returns the database, for tests and tools.
func (b *Backend) DB() *sql.DB { return b.db }

// lockWrite waits for the single writer slot, or for ctx to end.
func (b *Backend) lockWrite(ctx context.Context) error {
	select {
	case b.write <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Backend) unlockWrite() { <-b.write }

// checkpoint copies the write-ahead log into the database file and
// truncates it, in the background; Close waits for it. It waits for
// readers that still use the log (busy timeout), so a long read delays it
// but never fails it silently: a failure leaves the log to the next
// checkpoint.
func (b *Backend) checkpoint() {
	b.bg.Go(func() {
		b.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
	})
}

// Begin starts the import of profile id: it takes the writer and inserts
// the profile's row with a placeholder hash, inside a transaction.
func (b *Backend) Begin(ctx context.Context, id string) (store.Import, error) {
	if err := b.lockWrite(ctx); err != nil {
		return nil, err
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		b.unlockWrite()
		return nil, err
	}
	im := &importTx{b: b, tx: tx}
	res, err := tx.ExecContext(ctx, `INSERT INTO profiles (id, name, file_name, sha256, bytes, uploaded_ns, metadata,
		time_base, start_ns, end_ns, samples, cpus, frequency_hz, warnings)
		VALUES (?, '', '', ?, 0, 0, '{}', 0, 0, 0, 0, 0, 0, 0)`, id, "pending:"+id)
	if err == nil {
		im.pk, err = res.LastInsertId()
	}
	if err != nil {
		im.Abort()
		return nil, err
	}
	return im, nil
}

// importTx is one import's transaction; it holds the writer until Commit
// or Abort.
type importTx struct {
	b    *Backend
	tx   *sql.Tx
	pk   int64
	done bool
}

func (im *importTx) WriteSegments(ctx context.Context, segs []store.Segment) error {
	return insertSegments(ctx, im.tx, im.pk, segs)
}

func (im *importTx) WriteChunks(ctx context.Context, chunks []store.Chunk) error {
	return insertChunks(ctx, im.tx, im.pk, chunks)
}

// insertSegments stores table segments of profile pk.
func insertSegments(ctx context.Context, tx *sql.Tx, pk int64, segs []store.Segment) error {
	for _, s := range segs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO segments (profile, kind, seq, data) VALUES (?, ?, ?, ?)`,
			pk, int64(s.Kind), int64(s.Seq), s.Data); err != nil {
			return fmt.Errorf("store table segment: %w", err)
		}
	}
	return nil
}

// insertChunks stores chunks of profile pk.
func insertChunks(ctx context.Context, tx *sql.Tx, pk int64, chunks []store.Chunk) error {
	st, err := tx.PrepareContext(ctx, `INSERT INTO chunks (profile, second, seq, samples, summary, data) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("store chunks: %w", err)
	}
	defer st.Close()
	for _, c := range chunks {
		if _, err := st.ExecContext(ctx, pk, c.Second, int64(c.Seq), int64(c.Samples), c.Summary, c.Data); err != nil {
			return fmt.Errorf("store chunk %d/%d: %w", c.Second, c.Seq, err)
		}
	}
	return nil
}

func (im *importTx) Commit(ctx context.Context, rec *store.Record) error {
	if im.done {
		return errors.New("import already finished")
	}
	defer im.Abort()
	if err := writeProfile(ctx, im.tx, im.pk, rec); err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store profile: %w", store.ErrDuplicate)
		}
		return err
	}
	if err := im.tx.Commit(); err != nil {
		return err
	}
	im.done = true
	im.b.unlockWrite()
	im.b.checkpoint()
	return nil
}

func (im *importTx) Abort() error {
	if im.done {
		return nil
	}
	im.done = true
	err := im.tx.Rollback()
	im.b.unlockWrite()
	return err
}

// writeProfile fills the profile row pk and its events and warnings.
func writeProfile(ctx context.Context, tx *sql.Tx, pk int64, rec *store.Record) error {
	p := &rec.Profile
	meta, err := json.Marshal(p.Meta)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE profiles SET name = ?, file_name = ?, sha256 = ?, bytes = ?, uploaded_ns = ?,
		metadata = ?, start_ns = ?, end_ns = ?, samples = ?, cpus = ?, frequency_hz = ?, warnings = ?, comms = ?,
		host = ? WHERE pk = ?`, p.Name, p.FileName, p.SHA256, p.Bytes, p.Uploaded.UnixNano(), string(meta),
		p.Start, p.End, p.Samples, p.CPUs, p.FrequencyHz, p.Warnings, rec.Comms, p.Host, pk)
	if err != nil {
		return fmt.Errorf("store profile: %w", err)
	}
	for i, e := range p.Events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (profile, idx, name, samples) VALUES (?, ?, ?, ?)`,
			pk, i, e.Name, e.Samples); err != nil {
			return fmt.Errorf("store events: %w", err)
		}
	}
	for i, w := range p.WarningList {
		if _, err := tx.ExecContext(ctx, `INSERT INTO warnings (profile, seq, line, message) VALUES (?, ?, ?, ?)`,
			pk, i, w.Line, w.Message); err != nil {
			return fmt.Errorf("store warnings: %w", err)
		}
	}
	return nil
}

// isConstraint reports whether err is a SQLite constraint violation.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

const profileCols = `pk, id, name, file_name, sha256, bytes, uploaded_ns, metadata,
	start_ns, end_ns, samples, cpus, frequency_hz, warnings, host, comms`

type rowScanner interface{ Scan(dest ...any) error }

// scanFunc is a row's Scan as a rowScanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// scanProfile reads one row of profileCols.
func scanProfile(r rowScanner) (pk int64, p *subsecond.Profile, comms []byte, err error) {
	p = new(subsecond.Profile)
	var uploaded int64
	var meta string
	err = r.Scan(&pk, &p.ID, &p.Name, &p.FileName, &p.SHA256, &p.Bytes, &uploaded, &meta,
		&p.Start, &p.End, &p.Samples, &p.CPUs, &p.FrequencyHz, &p.Warnings, &p.Host, &comms)
	if err != nil {
		return 0, nil, nil, err
	}
	p.Uploaded = time.Unix(0, uploaded).UTC()
	if err := json.Unmarshal([]byte(meta), &p.Meta); err != nil {
		return 0, nil, nil, fmt.Errorf("profile %s metadata: %w", p.ID, err)
	}
	p.Wall = subsecond.Anchor(p.Meta, p.End)
	return pk, p, comms, nil
}

// readTx runs fn in a read-only transaction.
func (b *Backend) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

func (b *Backend) List(ctx context.Context) ([]subsecond.Profile, error) {
	var list []subsecond.Profile
	err := b.readTx(ctx, func(tx *sql.Tx) error {
		byPK := map[int64]int{}
		err := each(ctx, tx, `SELECT `+profileCols+` FROM profiles WHERE sha256 NOT LIKE 'pending:%'
			ORDER BY uploaded_ns DESC, pk DESC`, nil, func(scan func(...any) error) error {
			pk, p, _, err := scanProfile(scanFunc(scan))
			if err != nil {
				return err
			}
			byPK[pk] = len(list)
			list = append(list, *p)
			return nil
		})
		if err != nil {
			return err
		}
		return each(ctx, tx, `SELECT profile, name, samples FROM events ORDER BY profile, idx`, nil, func(scan func(...any) error) error {
			var pk int64
			var e subsecond.EventCount
			if err := scan(&pk, &e.Name, &e.Samples); err != nil {
				return err
			}
			if i, ok := byPK[pk]; ok {
				list[i].Events = append(list[i].Events, e)
			}
			return nil
		})
	})
	return list, err
}

func (b *Backend) Profile(ctx context.Context, id string) (*subsecond.Profile, error) {
	var p *subsecond.Profile
	err := b.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		_, p, _, err = loadProfile(ctx, tx, id, true)
		return err
	})
	return p, err
}

func (b *Backend) ProfileBySHA(ctx context.Context, sum string) (*subsecond.Profile, error) {
	var p *subsecond.Profile
	err := b.readTx(ctx, func(tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM profiles WHERE sha256 = ?`, sum).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("profile with SHA-256 %s: %w", sum, subsecond.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, p, _, err = loadProfile(ctx, tx, id, true)
		return err
	})
	return p, err
}

func (b *Backend) Exists(ctx context.Context, id string) (bool, error) {
	if !store.ValidID(id) {
		return false, nil
	}
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT count(*) FROM profiles WHERE id = ?`, id).Scan(&n)
	return n > 0, err
}

// loadProfile reads profile id and its events, and its warnings when
// warnings is set, inside tx.
func loadProfile(ctx context.Context, tx *sql.Tx, id string, warnings bool) (pk int64, p *subsecond.Profile, comms []byte, err error) {
	if !store.ValidID(id) {
		return 0, nil, nil, fmt.Errorf("profile %q: %w", id, subsecond.ErrNotFound)
	}
	pk, p, comms, err = scanProfile(tx.QueryRowContext(ctx, `SELECT `+profileCols+` FROM profiles WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil, fmt.Errorf("profile %s: %w", id, subsecond.ErrNotFound)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	err = each(ctx, tx, `SELECT name, samples FROM events WHERE profile = ? ORDER BY idx`, []any{pk}, func(scan func(...any) error) error {
		var e subsecond.EventCount
		err := scan(&e.Name, &e.Samples)
		p.Events = append(p.Events, e)
		return err
	})
	if err != nil || !warnings {
		return pk, p, comms, err
	}
	err = each(ctx, tx, `SELECT line, message FROM warnings WHERE profile = ? ORDER BY seq`, []any{pk}, func(scan func(...any) error) error {
		var w subsecond.Warning
		err := scan(&w.Line, &w.Message)
		p.WarningList = append(p.WarningList, w)
		return err
	})
	return pk, p, comms, err
}

func (b *Backend) Load(ctx context.Context, id string) (*store.Stored, error) {
	return b.read(ctx, id, true, math.MinInt64, math.MaxInt64, true)
}

func (b *Backend) Chunks(ctx context.Context, id string, from, to int64, data bool) (*store.Stored, error) {
	return b.read(ctx, id, false, from, to, data)
}

// read reads profile id in one transaction: with its warnings and table
// segments when all is set, and its chunks with second in [from, to],
// their data when data is set.
func (b *Backend) read(ctx context.Context, id string, all bool, from, to int64, data bool) (*store.Stored, error) {
	st := new(store.Stored)
	err := b.readTx(ctx, func(tx *sql.Tx) error {
		pk, p, comms, err := loadProfile(ctx, tx, id, all)
		if err != nil {
			return err
		}
		st.Profile, st.Comms = *p, comms
		if all {
			err = each(ctx, tx, `SELECT kind, seq, data FROM segments WHERE profile = ? ORDER BY kind, seq`, []any{pk},
				func(scan func(...any) error) error {
					var s store.Segment
					err := scan(&s.Kind, &s.Seq, &s.Data)
					st.Segments = append(st.Segments, s)
					return err
				})
			if err != nil {
				return err
			}
		}
		if from > to {
			return nil
		}
		cols := `second, seq, samples, summary, NULL`
		if data {
			cols = `second, seq, samples, summary, data`
		}
		return each(ctx, tx, `SELECT `+cols+` FROM chunks WHERE profile = ? AND second BETWEEN ? AND ? ORDER BY second, seq`,
			[]any{pk, from, to}, func(scan func(...any) error) error {
				var c store.Chunk
				err := scan(&c.Second, &c.Seq, &c.Samples, &c.Summary, &c.Data)
				st.Chunks = append(st.Chunks, c)
				return err
			})
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// each runs query with args in tx and calls fn for each row with the
// row's Scan.
func each(ctx context.Context, tx *sql.Tx, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (b *Backend) Delete(ctx context.Context, id string) error {
	if !store.ValidID(id) {
		return fmt.Errorf("profile %q: %w", id, subsecond.ErrNotFound)
	}
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("profile %s: %w", id, subsecond.ErrNotFound)
		}
		return nil
	})
	if err == nil {
		b.checkpoint()
	}
	return err
}

func (b *Backend) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker) (int, error) {
	added := 0
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO markers (host, t_ns, text) VALUES (?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, m := range ms {
			res, err := st.ExecContext(ctx, host, m.Time, m.Text)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

func (b *Backend) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	out := []subsecond.Marker{}
	err := b.readTx(ctx, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT t_ns, text FROM markers WHERE host = ? AND t_ns >= ? AND t_ns < ? ORDER BY t_ns, text`,
			[]any{host, from, to}, func(scan func(...any) error) error {
				var m subsecond.Marker
				err := scan(&m.Time, &m.Text)
				out = append(out, m)
				return err
			})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// writeTx runs fn in a transaction that holds the writer, and commits
// unless fn fails.
func (b *Backend) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := b.lockWrite(ctx); err != nil {
		return err
	}
	defer b.unlockWrite()
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// OpenStore opens the database at path (see Open) as a store with options
// opt.
func OpenStore(ctx context.Context, path string, opt store.Options) (*store.Store, error) {
	b, err := Open(ctx, path, Options{})
	if err != nil {
		return nil, err
	}
	return store.New(b, opt), nil
}
