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
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/migrations"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqldb"
)

// DSNParams are set on every pooled connection: write-ahead logging so
// readers never wait for an import, foreign keys for ON DELETE CASCADE, a
// busy timeout for a writer in another process, NORMAL sync (durable at
// checkpoints, never corrupt) and a 4 MB page cache. The page caches are
// SQLite's own memory, outside the Go heap's soft limit (serve's
// --memory-limit), one per open connection: a server reading with a dozen
// connections kept up to 16 MB in each (bench/soak: 20 readers and 4
// uploaders passed 1 GiB of RSS by 3 MiB under the 896 MiB heap limit). A
// view reads a capture's chunks once, into the capture cache, so the pages
// are seldom read again.
const DSNParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=10000&_synchronous=NORMAL&_cache_size=-4000"

// Options configure Open.
type Options struct {
	// Progress, when set, is called while Open converts profiles stored by
	// an older version (see convert), with the samples converted so far
	// and in all.
	Progress func(done, total int64)
	// CheckpointDelay is how long after a write the write-ahead log is
	// checkpointed (see Backend.checkpoint); 0 means DefaultCheckpointDelay.
	CheckpointDelay time.Duration
}

// DefaultCheckpointDelay is how long a write's checkpoint waits. Run at
// once, the checkpoint of an upload (1.7 ms on a 4 MB capture, in a cgo
// call that keeps its Go processor) met the upload's answer and the
// first heatmap, as the fleet index took the other core of two: the
// answer reached the client 2 ms late. A second later the page that
// asked for them has them.
const DefaultCheckpointDelay = time.Second

// Backend is a SQLite database of profiles; it implements store.Backend,
// its reads through sqldb.DB.
type Backend struct {
	*sqldb.DB
	db    *sql.DB
	write chan struct{} // holds one token: SQLite has a single writer
	bg    sync.WaitGroup

	delay     time.Duration // see Options.CheckpointDelay
	closing   chan struct{} // closed by Close: a pending checkpoint runs now
	closeOnce sync.Once
	mu        sync.Mutex
	pending   bool // a checkpoint waits for its delay
}

// Open opens the database at path, creating it and its directory if needed,
// applies pending migrations, converts profiles stored in an older format
// and fills the wall-clock columns of those stored before migration 0012.
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
	b := &Backend{DB: &sqldb.DB{DB: db, Dialect: sqldb.SQLite}, db: db, write: make(chan struct{}, 1),
		delay: cmp.Or(opt.CheckpointDelay, DefaultCheckpointDelay), closing: make(chan struct{})}
	if err := b.migrate(ctx, opt); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := b.fillWalls(ctx); err != nil {
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

// fillWalls sets the wall-clock columns of the profiles stored before
// migration 0012, in one transaction.
func (b *Backend) fillWalls(ctx context.Context) error {
	w, err := b.DB.Unwalled(ctx)
	if err != nil || w.Len() == 0 {
		return err
	}
	return b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.SetWalls(ctx, tx, w) })
}

// Close runs a pending checkpoint at once, waits for it and closes the
// database.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() { close(b.closing) })
	b.bg.Wait()
	return b.db.Close()
}

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
// truncates it, in the background, b.delay after the first write since
// the last checkpoint (so at most one a delay however many writes come:
// the log holds at most a delay's writes, besides SQLite's own
// checkpoints of 1,000 pages); Close runs it at once and waits for it. It
// waits for readers that still use the log (busy timeout), so a long read
// delays it but never fails it silently: a failure leaves the log to the
// next checkpoint.
func (b *Backend) checkpoint() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending {
		return
	}
	b.pending = true
	b.bg.Go(func() {
		select {
		case <-time.After(b.delay):
		case <-b.closing:
		}
		b.mu.Lock()
		b.pending = false // a write from now on is after this checkpoint's start
		b.mu.Unlock()
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
		return nil, noSpace(err)
	}
	im := &importTx{b: b, tx: tx}
	if im.pk, err = b.InsertPending(ctx, tx, id); err != nil {
		im.Abort()
		return nil, noSpace(err)
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
	return noSpace(insertSegments(ctx, im.tx, im.pk, segs))
}

func (im *importTx) WriteChunks(ctx context.Context, chunks []store.Chunk) error {
	return noSpace(insertChunks(ctx, im.tx, im.pk, chunks))
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
	if err := im.b.UpdateProfile(ctx, im.tx, im.pk, rec); err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store profile: %w", store.ErrDuplicate)
		}
		return fmt.Errorf("store profile: %w", noSpace(err))
	}
	if err := insertEventsAndWarnings(ctx, im.tx, im.pk, &rec.Profile); err != nil {
		return noSpace(err)
	}
	if err := im.b.writeLabels(ctx, im.tx, rec); err != nil {
		return noSpace(err)
	}
	if rec.Rollup != nil {
		if err := im.b.DB.InsertRollup(ctx, im.tx, im.pk, rec.Rollup); err != nil {
			return noSpace(err)
		}
	}
	if err := im.tx.Commit(); err != nil {
		return noSpace(err)
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

// insertEventsAndWarnings stores p's events and warnings as rows of profile
// pk.
func insertEventsAndWarnings(ctx context.Context, tx *sql.Tx, pk int64, p *subsecond.Profile) error {
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

// noSpace marks err with subsecond.ErrNoSpace when the disk is full:
// SQLite's SQLITE_FULL, or ENOSPC.
func noSpace(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull || errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", subsecond.ErrNoSpace, err)
	}
	return err
}

// Ready checks that the database answers and that its schema is this
// build's (see sqldb.DB.Ready).
func (b *Backend) Ready(ctx context.Context) error {
	return b.DB.Ready(ctx, migrations.Latest(migrations.SQLite))
}

// Unavailable reports whether err means that the database stayed busy or
// locked by another connection or process past the busy timeout
// (SQLITE_BUSY, SQLITE_LOCKED), so that a later retry may succeed.
func (b *Backend) Unavailable(err error) bool { return unavailable(err) }

func unavailable(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// isConstraint reports whether err is a SQLite constraint violation.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

func (b *Backend) Rename(ctx context.Context, id, name string) error {
	return b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.Rename(ctx, tx, id, name) })
}

func (b *Backend) Delete(ctx context.Context, id string) error {
	err := b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.Delete(ctx, tx, id) })
	if err == nil {
		b.checkpoint()
	}
	return err
}

func (b *Backend) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker, keep int) (int, int, error) {
	added, dropped := 0, 0
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		added, dropped = 0, 0
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
		if added == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, b.DB.MarkerTrim(), host, host, keep-1)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		dropped = int(n)
		return err
	})
	if err != nil {
		return 0, 0, noSpace(err)
	}
	return added, dropped, nil
}

func (b *Backend) AddSeries(ctx context.Context, host string, blocks []store.SeriesBlock, keep int) (subsecond.SeriesAdded, error) {
	var added subsecond.SeriesAdded
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		added, err = b.DB.AddSeries(ctx, tx, host, blocks, keep)
		return err
	})
	if err != nil {
		return subsecond.SeriesAdded{}, noSpace(err)
	}
	return added, nil
}

func (b *Backend) DeleteSeries(ctx context.Context, host string, before int64) error {
	err := b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.DeleteSeries(ctx, tx, host, before) })
	if err == nil {
		b.checkpoint()
	}
	return err
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
	// A statement that writes nothing but takes the write lock, waiting
	// for it (busy_timeout), before fn reads: a transaction that read
	// first and then wrote after another process's commit would fail at
	// once with "database is locked" (its snapshot is stale), as a fleet
	// index written just after an import did beside another process's
	// imports.
	if _, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE 0`); err != nil {
		return err
	}
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

// writeLabels sets an import's record's host labels inside its
// transaction.
func (b *Backend) writeLabels(ctx context.Context, tx *sql.Tx, rec *store.Record) error {
	if len(rec.Labels) == 0 {
		return nil
	}
	if err := b.DB.SetHostLabels(ctx, tx, rec.Profile.Host, rec.Labels, nil, rec.MaxLabels); err != nil {
		return fmt.Errorf("label host %s: %w", rec.Profile.Host, err)
	}
	return nil
}

func (b *Backend) SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string, max int) error {
	return b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.SetHostLabels(ctx, tx, host, set, remove, max) })
}

func (b *Backend) WriteRollup(ctx context.Context, id string, data []byte) error {
	return noSpace(b.writeTx(ctx, func(tx *sql.Tx) error { return b.DB.WriteRollup(ctx, tx, id, data) }))
}

func (b *Backend) WriteIndex(ctx context.Context, id string, ix *store.Index) (bool, error) {
	wrote := false
	var names sqldb.NameIDs
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		pk, indexed, err := b.DB.IndexProfile(ctx, tx, id)
		if err != nil || indexed {
			return err
		}
		wrote = true
		names, err = b.DB.WriteIndex(ctx, tx, pk, ix)
		return err
	})
	if err != nil {
		return false, noSpace(err)
	}
	b.DB.Remember(names)
	return wrote, nil
}

// DropIndexDays drops nothing: SQLite's fleet index rows go with their
// profiles.
func (b *Backend) DropIndexDays(ctx context.Context, before int64) (int, error) { return 0, nil }
