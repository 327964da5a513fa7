// Package postgres is the store's backend for a team: profiles in a
// PostgreSQL database, through github.com/jackc/pgx/v5, which several
// `subsecond serve` processes share as one service.
//
//	b, err := postgres.Open(ctx, "postgres://subsecond@db.example.com/subsecond")
//	if err != nil { … }
//	s := store.New(b, store.Options{})
//
// An import is one transaction whose chunks, segments and events go in
// through COPY; PostgreSQL admits concurrent writers, so imports from
// several servers proceed side by side, and a unique index on the text's
// SHA-256 makes concurrent imports of the same capture store it once. A
// profile becomes visible to every server when its import commits, and a
// delete through one server is seen by the others' capture caches, which
// check a cached capture still exists before they answer with it (see
// store.Store.Capture). Schema migrations (package migrations, directory
// postgres) run at Open under an advisory lock, so servers started
// together migrate once.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/migrations"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqldb"
)

// Backend is a PostgreSQL database of profiles; it implements
// store.Backend, its reads through sqldb.DB.
type Backend struct {
	*sqldb.DB
	pool *pgxpool.Pool
}

// Open connects to the database at url (postgres://… or postgresql://…,
// with libpq's parameters), applies pending migrations and fills the
// wall-clock columns of the profiles stored before migration 0012.
func Open(ctx context.Context, url string) (*Backend, error) {
	cfg, err := pgxpool.ParseConfig(url) // its errors leave the password out
	if err != nil {
		return nil, fmt.Errorf("open database: %w: %v", subsecond.ErrInvalid, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	b := &Backend{DB: &sqldb.DB{DB: db, Dialect: sqldb.Postgres}, pool: pool}
	if err := migrate(ctx, db); err != nil {
		b.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := b.fillWalls(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return b, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.Postgres, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// fillWalls sets the wall-clock columns of the profiles stored before
// migration 0012, in one transaction. Servers starting together on one
// database write the same values.
func (b *Backend) fillWalls(ctx context.Context) error {
	w, err := b.DB.Unwalled(ctx)
	if err != nil || w.Len() == 0 {
		return err
	}
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.SetWalls(ctx, tx, w); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the connections.
func (b *Backend) Close() error {
	err := b.DB.DB.Close()
	b.pool.Close()
	return err
}

// Begin starts the import of profile id: a transaction, on a connection of
// its own, that inserts the profile's placeholder row.
func (b *Backend) Begin(ctx context.Context, id string) (store.Import, error) {
	conn, err := b.DB.DB.Conn(ctx)
	if err != nil {
		return nil, noSpace(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, noSpace(err)
	}
	im := &importTx{b: b, conn: conn, tx: tx}
	if im.pk, err = b.InsertPending(ctx, tx, id); err != nil {
		im.Abort()
		return nil, noSpace(err)
	}
	return im, nil
}

// importTx is one import's transaction. Rows go in through COPY on the
// transaction's own connection.
type importTx struct {
	b    *Backend
	conn *sql.Conn
	tx   *sql.Tx
	pk   int64
	done bool
}

// copyFrom copies rows into table inside the transaction.
func (im *importTx) copyFrom(ctx context.Context, table string, cols []string, n int, row func(i int) []any) error {
	return im.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return row(i), nil
		}))
		return noSpace(err)
	})
}

func (im *importTx) WriteSegments(ctx context.Context, segs []store.Segment) error {
	err := im.copyFrom(ctx, "segments", []string{"profile", "kind", "seq", "data"}, len(segs), func(i int) []any {
		return []any{im.pk, int32(segs[i].Kind), segs[i].Seq, segs[i].Data}
	})
	if err != nil {
		return fmt.Errorf("store table segments: %w", err)
	}
	return nil
}

func (im *importTx) WriteChunks(ctx context.Context, chunks []store.Chunk) error {
	err := im.copyFrom(ctx, "chunks", []string{"profile", "second", "seq", "samples", "summary", "data"}, len(chunks), func(i int) []any {
		c := &chunks[i]
		return []any{im.pk, c.Second, c.Seq, c.Samples, c.Summary, c.Data}
	})
	if err != nil {
		return fmt.Errorf("store chunks: %w", err)
	}
	return nil
}

func (im *importTx) Commit(ctx context.Context, rec *store.Record) error {
	if im.done {
		return errors.New("import already finished")
	}
	defer im.Abort()
	p := &rec.Profile
	err := im.b.UpdateProfile(ctx, im.tx, im.pk, rec)
	if isCode(err, "23505") { // unique_violation: the same text was stored meanwhile
		return fmt.Errorf("store profile: %w", store.ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("store profile: %w", noSpace(err))
	}
	err = im.copyFrom(ctx, "events", []string{"profile", "idx", "name", "samples"}, len(p.Events), func(i int) []any {
		return []any{im.pk, int32(i), p.Events[i].Name, p.Events[i].Samples}
	})
	if err != nil {
		return fmt.Errorf("store events: %w", err)
	}
	err = im.copyFrom(ctx, "warnings", []string{"profile", "seq", "line", "message"}, len(p.WarningList), func(i int) []any {
		w := p.WarningList[i]
		return []any{im.pk, int32(i), int32(w.Line), w.Message}
	})
	if err != nil {
		return fmt.Errorf("store warnings: %w", err)
	}
	if err := im.writeLabels(ctx, rec); err != nil {
		return err
	}
	if rec.Rollup != nil {
		if err := im.b.DB.InsertRollup(ctx, im.tx, im.pk, rec.Rollup); err != nil {
			return noSpace(err)
		}
	}
	if err := im.tx.Commit(); err != nil {
		if isCode(err, "23505") {
			return fmt.Errorf("store profile: %w", store.ErrDuplicate)
		}
		return noSpace(err)
	}
	im.done = true
	im.conn.Close()
	return nil
}

func (im *importTx) Abort() error {
	if im.done {
		return nil
	}
	im.done = true
	err := im.tx.Rollback()
	im.conn.Close()
	return err
}

// Ready checks that the database answers and that its schema is this
// build's (see sqldb.DB.Ready).
func (b *Backend) Ready(ctx context.Context) error {
	return b.DB.Ready(ctx, migrations.Latest(migrations.Postgres))
}

// Unavailable reports whether err means that PostgreSQL cannot be reached
// or is restarting: a failed connection attempt, a connection exception
// (SQLSTATE class 08), an administrator's or crash shutdown and a server
// still starting (57P01, 57P02, 57P03), too many connections (53300), or a
// pooled connection that broke on I/O, as those do when the server went
// away underneath them. A cancelled request is not an outage.
func (b *Backend) Unavailable(err error) bool { return unavailable(err) }

func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		strings.HasSuffix(err.Error(), "conn closed")
}

// isCode reports whether err is a PostgreSQL error with the given
// SQLSTATE.
func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// noSpace marks err with subsecond.ErrNoSpace when the server's disk is
// full (SQLSTATE 53100, disk_full).
func noSpace(err error) error {
	if isCode(err, "53100") {
		return fmt.Errorf("%w: %w", subsecond.ErrNoSpace, err)
	}
	return err
}

func (b *Backend) Rename(ctx context.Context, id, name string) error {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.Rename(ctx, tx, id, name); err != nil {
		return err
	}
	return tx.Commit()
}

func (b *Backend) Delete(ctx context.Context, id string) error {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.Delete(ctx, tx, id); err != nil {
		return err
	}
	return tx.Commit()
}

func (b *Backend) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker, keep int) (int, int, error) {
	added, dropped := 0, 0
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		added, dropped = 0, 0
		batch := &pgx.Batch{}
		for _, m := range ms {
			batch.Queue(`INSERT INTO markers (host, t_ns, text) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, host, m.Time, m.Text)
		}
		res := tx.SendBatch(ctx, batch)
		for range ms {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			added += int(tag.RowsAffected())
		}
		if err := res.Close(); err != nil || added == 0 {
			return err
		}
		tag, err := tx.Exec(ctx, b.DB.MarkerTrim(), host, host, keep-1)
		dropped = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, 0, noSpace(err)
	}
	return added, dropped, nil
}

func (b *Backend) AddSeries(ctx context.Context, host string, blocks []store.SeriesBlock, keep int) (subsecond.SeriesAdded, error) {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return subsecond.SeriesAdded{}, err
	}
	defer tx.Rollback()
	added, err := b.DB.AddSeries(ctx, tx, host, blocks, keep)
	if err != nil {
		return subsecond.SeriesAdded{}, noSpace(err)
	}
	if err := tx.Commit(); err != nil {
		return subsecond.SeriesAdded{}, noSpace(err)
	}
	return added, nil
}

func (b *Backend) DeleteSeries(ctx context.Context, host string, before int64) error {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.DeleteSeries(ctx, tx, host, before); err != nil {
		return err
	}
	return tx.Commit()
}

// OpenStore connects to the database at url (see Open) as a store with
// options opt.
func OpenStore(ctx context.Context, url string, opt store.Options) (*store.Store, error) {
	b, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	return store.New(b, opt), nil
}

// partitions are the fleet index's tables partitioned by day; a day's
// partition of each is named TABLE_dDAY.
var partitions = []string{"fleet_captures", "fleet_counts"}

// partitionLock is the key of the advisory lock under which partitions of
// the fleet index are created and dropped, so that several servers on
// one database never race to create the same one.
const partitionLock = 0x5ec0d1dc

// partitionName returns the quoted name of table's partition of day.
func partitionName(table string, day int64) string {
	return pgx.Identifier{fmt.Sprintf("%s_d%d", table, day)}.Sanitize()
}

// prepareIndex creates the fleet index's partitions of day when missing,
// in a transaction of its own under an advisory lock.
func (b *Backend) prepareIndex(ctx context.Context, day int64) error {
	var have int
	for _, t := range partitions {
		var ok bool
		if err := b.DB.DB.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, partitionName(t, day)).Scan(&ok); err != nil {
			return err
		}
		if ok {
			have++
		}
	}
	if have == len(partitions) {
		return nil
	}
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, partitionLock); err != nil {
		return err
	}
	for _, t := range partitions {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)`,
			partitionName(t, day), t, day, day+1)); err != nil {
			return fmt.Errorf("create the fleet index's partition of day %d: %w", day, err)
		}
	}
	return noSpace(tx.Commit())
}

func (b *Backend) SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string, max int) error {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.SetHostLabels(ctx, tx, host, set, remove, max); err != nil {
		return err
	}
	return noSpace(tx.Commit())
}

func (b *Backend) WriteRollup(ctx context.Context, id string, data []byte) error {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.DB.WriteRollup(ctx, tx, id, data); err != nil {
		return noSpace(err)
	}
	return noSpace(tx.Commit())
}

func (b *Backend) WriteIndex(ctx context.Context, id string, ix *store.Index) (bool, error) {
	if err := b.prepareIndex(ctx, ix.Day); err != nil {
		return false, err
	}
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	// The profile's row is locked so that a second writer of its index
	// waits for the first and then finds it.
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM profiles WHERE id = $1 FOR UPDATE`, id); err != nil {
		return false, err
	}
	pk, indexed, err := b.DB.IndexProfile(ctx, tx, id)
	if err != nil || indexed {
		return false, err
	}
	names, err := b.DB.WriteIndex(ctx, tx, pk, ix)
	if err != nil {
		return false, noSpace(err)
	}
	if err := tx.Commit(); err != nil {
		return false, noSpace(err)
	}
	b.DB.Remember(names)
	return true, nil
}

// DropIndexDays drops the partitions of the fleet index's days that end
// at or before before and whose captures all ended before it, each day in
// a transaction of its own under the partitions' advisory lock.
func (b *Backend) DropIndexDays(ctx context.Context, before int64) (int, error) {
	var days []int64
	err := b.DB.ReadTx(ctx, func(tx *sql.Tx) error {
		days = nil
		return b.DB.Each(ctx, tx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = 'fleet_captures'::regclass`, nil, func(scan func(...any) error) error {
			var name string
			if err := scan(&name); err != nil {
				return err
			}
			var day int64
			if _, err := fmt.Sscanf(name, "fleet_captures_d%d", &day); err == nil && (day+1)*sqldb.DayNS <= before {
				days = append(days, day)
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	dropped := 0
	for _, day := range days {
		ok, err := b.dropDay(ctx, day, before)
		if err != nil {
			return dropped, fmt.Errorf("drop the fleet index of day %d: %w", day, err)
		}
		if ok {
			dropped++
		}
	}
	return dropped, nil
}

// dropDay drops the partitions of day unless one of its captures ends at
// or after before.
func (b *Backend) dropDay(ctx context.Context, day, before int64) (bool, error) {
	tx, err := b.DB.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, partitionLock); err != nil {
		return false, err
	}
	var live bool
	err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM fleet_captures WHERE day = $1 AND end_ns >= $2)`, day, before).Scan(&live)
	if err != nil || live {
		return false, err
	}
	for i := len(partitions) - 1; i >= 0; i-- {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+partitionName(partitions[i], day)); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

// writeLabels sets an import's record's host labels inside its
// transaction.
func (im *importTx) writeLabels(ctx context.Context, rec *store.Record) error {
	if len(rec.Labels) == 0 {
		return nil
	}
	if err := im.b.DB.SetHostLabels(ctx, im.tx, rec.Profile.Host, rec.Labels, nil, rec.MaxLabels); err != nil {
		return fmt.Errorf("label host %s: %w", rec.Profile.Host, noSpace(err))
	}
	return nil
}
