// Package sqldb is the SQL the store's backends share: reading profiles,
// their segments, chunks and markers, writing a profile's row, and
// storing, reading and pruning hosts' series blocks, through
// database/sql, for the schema both dialects' migrations build (package
// migrations). Queries are written with ? placeholders; for PostgreSQL
// they become $1, $2, ….
//
//	d := &sqldb.DB{DB: db, Dialect: sqldb.SQLite}
//	list, err := d.List(ctx)
package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// Dialect is a SQL dialect of the schema.
type Dialect int

// Dialects.
const (
	SQLite Dialect = iota
	Postgres
)

// DB is a database of profiles in one dialect. Each of its methods is one
// read transaction; Profile, Load and Chunks implement store.Backend's.
type DB struct {
	DB      *sql.DB
	Dialect Dialect
	names   nameCache // fleet names' dictionary IDs
}

// Q returns query in d's dialect: ? placeholders numbered for PostgreSQL.
func (d *DB) Q(query string) string {
	if d.Dialect != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ReadTx runs fn in a read-only transaction that sees one snapshot.
func (d *DB) ReadTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	opt := &sql.TxOptions{ReadOnly: true} // SQLite's transactions see one snapshot
	if d.Dialect == Postgres {
		opt.Isolation = sql.LevelRepeatableRead
	}
	tx, err := d.DB.BeginTx(ctx, opt)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// Each runs query (with ? placeholders) with args in tx and calls fn with
// each row's Scan.
func (d *DB) Each(ctx context.Context, tx *sql.Tx, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := tx.QueryContext(ctx, d.Q(query), args...)
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

// Ready checks that the database answers a query and that the last
// migration goose recorded is want, the last of this build's; a schema
// older or newer is an error wrapping subsecond.ErrUnavailable and
// subsecond.ErrSchema. Servers sharing a database run its migrations when
// they start, so an older schema means none of this build has yet.
func (d *DB) Ready(ctx context.Context, want int64) error {
	var have int64
	err := d.DB.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&have)
	if err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if have != want {
		return fmt.Errorf("%w: %w: version %d, this build's %d", subsecond.ErrUnavailable, subsecond.ErrSchema, have, want)
	}
	return nil
}

// profileCols are the columns scanProfile reads.
const profileCols = `pk, id, name, file_name, sha256, bytes, uploaded_ns, metadata,
	start_ns, end_ns, samples, cpus, frequency_hz, warnings, host, comms, event_count, top_event, top_samples`

type rowScanner interface{ Scan(dest ...any) error }

// scanFunc is a row's Scan as a rowScanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// scanProfile reads one row of profileCols. The profile's Events hold the
// row's summary, its event with most samples alone; loadProfile replaces
// them with every event.
func scanProfile(r rowScanner) (pk int64, p *subsecond.Profile, comms []byte, err error) {
	p = new(subsecond.Profile)
	var uploaded int64
	var meta string
	var top subsecond.EventCount
	err = r.Scan(&pk, &p.ID, &p.Name, &p.FileName, &p.Digest, &p.Bytes, &uploaded, &meta,
		&p.Start, &p.End, &p.Samples, &p.CPUs, &p.FrequencyHz, &p.Warnings, &p.Host, &comms,
		&p.EventCount, &top.Name, &top.Samples)
	if err != nil {
		return 0, nil, nil, err
	}
	p.Digest = readDigest(p.Digest)
	if p.EventCount > 0 {
		p.Events = []subsecond.EventCount{top}
	}
	p.Uploaded = time.Unix(0, uploaded).UTC()
	if err := json.Unmarshal([]byte(meta), &p.Meta); err != nil {
		return 0, nil, nil, fmt.Errorf("profile %s metadata: %w", p.ID, err)
	}
	p.Wall = p.Anchor()
	return pk, p, comms, nil
}

// List returns profiles, most recently imported first, with their event
// summaries (Profile.EventCount, and the event with most samples alone in
// Events) but without warning messages: those after profile opt.After in
// that order (from the first when ""), at most opt.Limit of them (all when
// 0). An unknown opt.After yields an error wrapping subsecond.ErrNotFound.
func (d *DB) List(ctx context.Context, opt store.ListOptions) ([]subsecond.Profile, error) {
	var list []subsecond.Profile
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		list = nil
		where, args := "", []any{}
		if opt.After != "" {
			if !store.ValidID(opt.After) {
				return fmt.Errorf("profile %q: %w", opt.After, subsecond.ErrNotFound)
			}
			var uploaded, pk int64
			err := tx.QueryRowContext(ctx, d.Q(`SELECT uploaded_ns, pk FROM profiles WHERE id = ? AND sha256 NOT LIKE 'pending:%'`),
				opt.After).Scan(&uploaded, &pk)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("profile %q: %w", opt.After, subsecond.ErrNotFound)
			}
			if err != nil {
				return err
			}
			where = ` AND (uploaded_ns < ? OR uploaded_ns = ? AND pk < ?)`
			args = append(args, uploaded, uploaded, pk)
		}
		limit := ""
		if opt.Limit > 0 {
			limit = ` LIMIT ?`
			args = append(args, opt.Limit)
		}
		return d.Each(ctx, tx, `SELECT `+profileCols+` FROM profiles WHERE sha256 NOT LIKE 'pending:%'`+where+`
			ORDER BY uploaded_ns DESC, pk DESC`+limit, args, func(scan func(...any) error) error {
			_, p, _, err := scanProfile(scanFunc(scan))
			if err != nil {
				return err
			}
			list = append(list, *p)
			return nil
		})
	})
	return list, err
}

// Profile returns profile id with its events and warnings.
func (d *DB) Profile(ctx context.Context, id string) (*subsecond.Profile, error) {
	var p *subsecond.Profile
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		_, p, _, err = d.loadProfile(ctx, tx, id, true)
		return err
	})
	return p, err
}

// The column sha256 holds a profile's digest (subsecond.Profile.Digest)
// as stored: "blake3:" and hex, or the hex of a SHA-256 alone for the
// profiles stored before BLAKE3 (the column is named after those), or
// "pending:" and the ID while an import is in progress.

// readDigest returns the digest of column sha256's value col.
func readDigest(col string) string {
	if len(col) == 64 && !strings.Contains(col, ":") {
		return store.DigestSHA256 + col
	}
	return col
}

// storedDigest returns how digest is stored in column sha256.
func storedDigest(digest string) string {
	if hexPart, ok := strings.CutPrefix(digest, store.DigestSHA256); ok {
		return hexPart
	}
	return digest
}

// ProfileByDigest returns the profile whose text has digest.
func (d *DB) ProfileByDigest(ctx context.Context, digest string) (*subsecond.Profile, error) {
	if !store.ValidDigest(digest) {
		return nil, fmt.Errorf("digest %q: not \"blake3:\" or \"sha256:\" and 64 lower-case hex digits: %w", digest, subsecond.ErrNotFound)
	}
	var p *subsecond.Profile
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, d.Q(`SELECT id FROM profiles WHERE sha256 = ?`), storedDigest(digest)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("profile with digest %s: %w", digest, subsecond.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, p, _, err = d.loadProfile(ctx, tx, id, true)
		return err
	})
	return p, err
}

// LegacyDigests reports whether a stored profile is known by a SHA-256
// digest alone: the only values of column sha256 that start with neither
// "blake3:" nor "pending:".
func (d *DB) LegacyDigests(ctx context.Context) (bool, error) {
	var some bool
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM profiles
			WHERE sha256 NOT LIKE 'blake3:%' AND sha256 NOT LIKE 'pending:%')`).Scan(&some)
	})
	return some, err
}

// Exists reports whether profile id is stored.
func (d *DB) Exists(ctx context.Context, id string) (bool, error) {
	if !store.ValidID(id) {
		return false, nil
	}
	var n int
	err := d.DB.QueryRowContext(ctx, d.Q(`SELECT count(*) FROM profiles WHERE id = ?`), id).Scan(&n)
	return n > 0, err
}

// loadProfile reads profile id and its events, and its warnings when
// warnings is set, inside tx.
func (d *DB) loadProfile(ctx context.Context, tx *sql.Tx, id string, warnings bool) (pk int64, p *subsecond.Profile, comms []byte, err error) {
	if !store.ValidID(id) {
		return 0, nil, nil, subsecond.ErrNotFound
	}
	pk, p, comms, err = scanProfile(tx.QueryRowContext(ctx, d.Q(`SELECT `+profileCols+` FROM profiles WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil, subsecond.ErrNotFound
	}
	if err != nil {
		return 0, nil, nil, err
	}
	p.Events = nil
	err = d.Each(ctx, tx, `SELECT name, samples FROM events WHERE profile = ? ORDER BY idx`, []any{pk}, func(scan func(...any) error) error {
		var e subsecond.EventCount
		err := scan(&e.Name, &e.Samples)
		p.Events = append(p.Events, e)
		return err
	})
	if err != nil || !warnings {
		return pk, p, comms, err
	}
	err = d.Each(ctx, tx, `SELECT line, message FROM warnings WHERE profile = ? ORDER BY seq`, []any{pk}, func(scan func(...any) error) error {
		var w subsecond.Warning
		err := scan(&w.Line, &w.Message)
		p.WarningList = append(p.WarningList, w)
		return err
	})
	return pk, p, comms, err
}

// Load returns profile id with its comm list, table segments and chunks.
func (d *DB) Load(ctx context.Context, id string) (*store.Stored, error) {
	return d.read(ctx, id, true, -1<<63, 1<<63-1, true)
}

// LoadWindow returns profile id with its comm list, its table segments
// and its chunks with Second in [from, to], with their data.
func (d *DB) LoadWindow(ctx context.Context, id string, from, to int64) (*store.Stored, error) {
	return d.read(ctx, id, true, from, to, true)
}

// Chunks returns profile id with its comm list and its chunks with Second
// in [from, to], their data when data is set.
func (d *DB) Chunks(ctx context.Context, id string, from, to int64, data bool) (*store.Stored, error) {
	return d.read(ctx, id, false, from, to, data)
}

func (d *DB) read(ctx context.Context, id string, all bool, from, to int64, data bool) (*store.Stored, error) {
	var st *store.Stored
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		st = new(store.Stored)
		pk, p, comms, err := d.loadProfile(ctx, tx, id, all)
		if err != nil {
			return err
		}
		st.Profile, st.Comms = *p, comms
		if all {
			err = d.Each(ctx, tx, `SELECT kind, seq, data FROM segments WHERE profile = ? ORDER BY kind, seq`, []any{pk},
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
		cols := `second, seq, samples, summary, data`
		if !data {
			cols = `second, seq, samples, summary, NULL`
			if d.Dialect == Postgres {
				cols += `::bytea`
			}
		}
		return d.Each(ctx, tx, `SELECT `+cols+` FROM chunks WHERE profile = ? AND second BETWEEN ? AND ? ORDER BY second, seq`,
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

// Markers returns host's markers in [from, to) (Unix ns), ordered by time
// and then text, byte by byte.
func (d *DB) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	out := []subsecond.Marker{}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return d.Each(ctx, tx, `SELECT t_ns, text FROM markers WHERE host = ? AND t_ns >= ? AND t_ns < ? ORDER BY t_ns, `+d.markerText(),
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

// markerText is the markers' text column compared in byte order, as both
// dialects order markers.
func (d *DB) markerText() string {
	if d.Dialect == Postgres {
		return `text COLLATE "C"`
	}
	return `text`
}

// MarkerTrim returns the statement that keeps a host's newest markers: it
// deletes those before the oldest one kept, by time, then text in byte
// order, as Markers orders them (arguments: the host, twice, and how many
// newer markers are kept); none when the host holds no more.
func (d *DB) MarkerTrim() string {
	text := d.markerText()
	return d.Q(`DELETE FROM markers WHERE host = ? AND (t_ns, ` + text + `) <
		(SELECT t_ns, ` + text + ` FROM markers WHERE host = ? ORDER BY t_ns DESC, ` + text + ` DESC LIMIT 1 OFFSET ?)`)
}

// UpdateProfile fills the placeholder row pk of an import with rec's
// profile, inside the import's transaction. Its events and warnings are
// the caller's to write.
func (d *DB) UpdateProfile(ctx context.Context, tx *sql.Tx, pk int64, rec *store.Record) error {
	p := &rec.Profile
	meta, err := json.Marshal(p.Meta)
	if err != nil {
		return err
	}
	top := subsecond.TopEvent(p.Events)
	source, approx, start, end := wallCols(p)
	_, err = tx.ExecContext(ctx, d.Q(`UPDATE profiles SET name = ?, file_name = ?, sha256 = ?, bytes = ?, uploaded_ns = ?,
		metadata = ?, start_ns = ?, end_ns = ?, samples = ?, cpus = ?, frequency_hz = ?, warnings = ?, comms = ?,
		host = ?, event_count = ?, top_event = ?, top_samples = ?, wall_source = ?, wall_approx = ?, wall_start = ?, wall_end = ?
		WHERE pk = ?`), p.Name, p.FileName, storedDigest(p.Digest), p.Bytes, p.Uploaded.UnixNano(), string(meta),
		p.Start, p.End, p.Samples, p.CPUs, p.FrequencyHz, p.Warnings, rec.Comms, p.Host, len(p.Events), top.Name, top.Samples,
		source, approx, start, end, pk)
	return err
}

// InsertPending inserts the placeholder row of an import of profile id,
// which no reader lists until UpdateProfile gives it its hash, and
// returns its key.
func (d *DB) InsertPending(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	var pk int64
	err := tx.QueryRowContext(ctx, d.Q(`INSERT INTO profiles (id, name, file_name, sha256, bytes, uploaded_ns, metadata,
		time_base, start_ns, end_ns, samples, cpus, frequency_hz, warnings)
		VALUES (?, '', '', ?, 0, 0, '{}', 0, 0, 0, 0, 0, 0, 0) RETURNING pk`), id, "pending:"+id).Scan(&pk)
	return pk, err
}

// Delete removes profile id and, through ON DELETE CASCADE, everything
// stored with it, inside tx.
// Rename sets profile id's name.
func (d *DB) Rename(ctx context.Context, tx *sql.Tx, id, name string) error {
	if !store.ValidID(id) {
		return subsecond.ErrNotFound
	}
	res, err := tx.ExecContext(ctx, d.Q(`UPDATE profiles SET name = ? WHERE id = ?`), name, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return subsecond.ErrNotFound
	}
	return nil
}

func (d *DB) Delete(ctx context.Context, tx *sql.Tx, id string) error {
	if !store.ValidID(id) {
		return subsecond.ErrNotFound
	}
	if err := d.deleteIndex(ctx, tx, id); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, d.Q(`DELETE FROM profiles WHERE id = ?`), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return subsecond.ErrNotFound
	}
	return nil
}

// seriesKey is the WHERE clause of one series block, with the arguments of
// seriesArgs.
const seriesKey = `host = ? AND name = ? AND block_ns = ? AND cpu = ? AND label = ?`

func seriesArgs(host string, b *store.SeriesBlock) []any {
	return []any{host, b.Name, b.Start, b.CPU, b.Label}
}

// AddSeries stores blocks of host's series inside tx, merging each with
// the stored block of the same key, keeping the host's series to keep
// (see store.Backend.AddSeries). On PostgreSQL a stored block is locked
// until tx ends; a block another transaction inserts meanwhile is merged
// once that one commits, and two transactions adding new series at once
// each count the host's series without the other's, so that the host may
// pass keep by what the one adds.
func (d *DB) AddSeries(ctx context.Context, tx *sql.Tx, host string, blocks []store.SeriesBlock, keep int) (subsecond.SeriesAdded, error) {
	added, fresh, err := d.addSeriesBlocks(ctx, tx, host, blocks)
	if err != nil || len(fresh) == 0 {
		return subsecond.SeriesAdded{Added: added}, err
	}
	// Which of the series whose blocks were all inserted are new to the
	// host: those with no other stored block (by the index
	// host_series_key, reading at most one more block than were
	// inserted).
	other, err := tx.PrepareContext(ctx, d.Q(`SELECT COUNT(*) FROM (SELECT 1 FROM host_series
		WHERE host = ? AND name = ? AND cpu = ? AND label = ? LIMIT ?) s`))
	if err != nil {
		return subsecond.SeriesAdded{}, err
	}
	defer other.Close()
	var news []freshSeries
	for _, f := range fresh {
		var n int
		if err := other.QueryRowContext(ctx, host, f.key.Name, f.key.CPU, f.key.Label, f.blocks+1).Scan(&n); err != nil {
			return subsecond.SeriesAdded{}, err
		}
		if n <= f.blocks {
			news = append(news, f)
		}
	}
	if len(news) == 0 {
		return subsecond.SeriesAdded{Added: added}, nil
	}
	var count int
	err = tx.QueryRowContext(ctx, d.Q(`SELECT COUNT(*) FROM (SELECT DISTINCT name, cpu, label FROM host_series WHERE host = ?) s`), host).Scan(&count)
	if err != nil {
		return subsecond.SeriesAdded{}, err
	}
	over := min(count-keep, len(news))
	if over <= 0 {
		return subsecond.SeriesAdded{Added: added}, nil
	}
	// The last new series in the order of the kinds go: a host keeps its
	// CPUs' time before its hundredth interrupt line.
	store.SortSeriesKeys(news, func(f freshSeries) subsecond.SeriesKey { return f.key })
	out := subsecond.SeriesAdded{Added: added, Refused: over}
	del, err := tx.PrepareContext(ctx, d.Q(`DELETE FROM host_series WHERE host = ? AND name = ? AND cpu = ? AND label = ?`))
	if err != nil {
		return subsecond.SeriesAdded{}, err
	}
	defer del.Close()
	for _, f := range news[len(news)-over:] {
		if _, err := del.ExecContext(ctx, host, f.key.Name, f.key.CPU, f.key.Label); err != nil {
			return subsecond.SeriesAdded{}, err
		}
		out.Added -= f.points
		if len(out.RefusedSeries) < subsecond.MaxRefusedNamed {
			out.RefusedSeries = append(out.RefusedSeries, f.key)
		}
	}
	return out, nil
}

// freshSeries is a series of which a post inserted every block: blocks
// of them, holding points.
type freshSeries struct {
	key    subsecond.SeriesKey
	blocks int
	points int
}

// addSeriesBlocks stores blocks (sorted by key, then start) inside tx as
// AddSeries does, and returns how many points were new and the series of
// which every block was inserted, not merged.
func (d *DB) addSeriesBlocks(ctx context.Context, tx *sql.Tx, host string, blocks []store.SeriesBlock) (int, []freshSeries, error) {
	lock := ""
	if d.Dialect == Postgres {
		lock = ` FOR UPDATE`
	}
	sel, err := tx.PrepareContext(ctx, d.Q(`SELECT first_ns, last_ns, points, min_value, max_value, sum_value, data
		FROM host_series WHERE `+seriesKey+lock))
	if err != nil {
		return 0, nil, err
	}
	defer sel.Close()
	ins, err := tx.PrepareContext(ctx, d.Q(`INSERT INTO host_series (host, name, block_ns, cpu, label, first_ns, last_ns,
		points, min_value, max_value, sum_value, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`))
	if err != nil {
		return 0, nil, err
	}
	defer ins.Close()
	upd, err := tx.PrepareContext(ctx, d.Q(`UPDATE host_series SET first_ns = ?, last_ns = ?, points = ?, min_value = ?,
		max_value = ?, sum_value = ?, data = ? WHERE `+seriesKey))
	if err != nil {
		return 0, nil, err
	}
	defer upd.Close()
	added := 0
	var fresh []freshSeries
	merged := false // a block of the last of fresh was merged
	for i := range blocks {
		b := &blocks[i]
		key := seriesArgs(host, b)
		k := subsecond.SeriesKey{Name: b.Name, CPU: b.CPU, Label: b.Label}
		if len(fresh) == 0 || fresh[len(fresh)-1].key != k {
			if merged {
				fresh = fresh[:len(fresh)-1]
			}
			fresh, merged = append(fresh, freshSeries{key: k}), false
		}
		// A block is inserted or, when one is stored already, merged with
		// it. The insert comes first so that the transaction writes
		// before it reads: SQLite takes its writer lock (waiting out a
		// checkpoint within the busy timeout) rather than upgrading a
		// read, which fails at once when another connection writes.
		res, err := ins.ExecContext(ctx, append(key, b.First, b.Last, b.Points, b.Min, b.Max, b.Sum, b.Data)...)
		if err != nil {
			return 0, nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, nil, err
		} else if n == 1 {
			added += int(b.Points)
			f := &fresh[len(fresh)-1]
			f.blocks++
			f.points += int(b.Points)
			continue
		}
		merged = true
		old := store.SeriesBlock{Name: b.Name, CPU: b.CPU, Label: b.Label, Start: b.Start}
		if err := sel.QueryRowContext(ctx, key...).Scan(&old.First, &old.Last, &old.Points, &old.Min, &old.Max, &old.Sum, &old.Data); err != nil {
			return 0, nil, fmt.Errorf("series block %s/%d/%q at %d: %w", b.Name, b.CPU, b.Label, b.Start, err)
		}
		m, n, err := store.MergeSeriesBlocks(&old, b)
		if err != nil {
			return 0, nil, err
		}
		if n > 0 {
			if _, err := upd.ExecContext(ctx, append([]any{m.First, m.Last, m.Points, m.Min, m.Max, m.Sum, m.Data}, key...)...); err != nil {
				return 0, nil, err
			}
		}
		added += n
	}
	if merged {
		fresh = fresh[:len(fresh)-1]
	}
	return added, fresh, nil
}

// SeriesBlocks returns the blocks of host's series of kind name that hold
// a point in [from, to), with their data.
func (d *DB) SeriesBlocks(ctx context.Context, host, name string, from, to int64) ([]store.SeriesBlock, error) {
	out := []store.SeriesBlock{}
	if from >= to {
		return out, nil
	}
	where, args := seriesSpan(host, name, from, to)
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return d.Each(ctx, tx, `SELECT cpu, label, block_ns, first_ns, last_ns, points, min_value, max_value, sum_value, data
			FROM host_series WHERE `+where, args, func(scan func(...any) error) error {
			b := store.SeriesBlock{Name: name}
			err := scan(&b.CPU, &b.Label, &b.Start, &b.First, &b.Last, &b.Points, &b.Min, &b.Max, &b.Sum, &b.Data)
			out = append(out, b)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SeriesPoints returns the points of the blocks SeriesBlocks returns,
// summed from their rows' counts.
func (d *DB) SeriesPoints(ctx context.Context, host, name string, from, to int64) (int64, error) {
	if from >= to {
		return 0, nil
	}
	where, args := seriesSpan(host, name, from, to)
	var n int64
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, d.Q(`SELECT COALESCE(SUM(points), 0) FROM host_series WHERE `+where), args...).Scan(&n)
	})
	return n, err
}

// seriesSpan returns the condition (with its arguments) of host's blocks
// of kind name holding a point in [from, to).
func seriesSpan(host, name string, from, to int64) (string, []any) {
	// A block holding a point at or after from starts after from − span.
	lo := from - store.SeriesBlockSpan
	if lo > from {
		lo = from
	}
	return `host = ? AND name = ? AND block_ns > ? AND block_ns < ? AND last_ns >= ? AND first_ns < ?`, []any{host, name, lo, to, from, to}
}

// SeriesNames returns every series stored for host with the times of its
// first and last points: those of its first and last blocks.
func (d *DB) SeriesNames(ctx context.Context, host string) ([]subsecond.SeriesExtent, error) {
	out := []subsecond.SeriesExtent{}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		// The first and last blocks of each series from the unique index
		// alone, then one lookup each. CROSS JOIN keeps SQLite's order of
		// the loops (without statistics it scanned host_series first,
		// taking 46 s for a night of 96 CPUs); PostgreSQL plans it as a
		// join.
		return d.Each(ctx, tx, `SELECT s.name, s.cpu, s.label, f.first_ns, l.last_ns FROM
			(SELECT name, cpu, label, MIN(block_ns) AS lo, MAX(block_ns) AS hi FROM host_series WHERE host = ?
				GROUP BY name, cpu, label) s
			CROSS JOIN host_series f CROSS JOIN host_series l
			WHERE f.host = ? AND f.name = s.name AND f.block_ns = s.lo AND f.cpu = s.cpu AND f.label = s.label
			AND l.host = ? AND l.name = s.name AND l.block_ns = s.hi AND l.cpu = s.cpu AND l.label = s.label`,
			[]any{host, host, host}, func(scan func(...any) error) error {
				var e subsecond.SeriesExtent
				err := scan(&e.Name, &e.CPU, &e.Label, &e.First, &e.Last)
				out = append(out, e)
				return err
			})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteSeries removes, inside tx, the series blocks of host (of every
// host when host is "") whose points all lie before before.
func (d *DB) DeleteSeries(ctx context.Context, tx *sql.Tx, host string, before int64) error {
	q, args := `DELETE FROM host_series WHERE block_ns < ? AND last_ns < ?`, []any{before, before}
	if host != "" {
		q, args = q+` AND host = ?`, append(args, host)
	}
	_, err := tx.ExecContext(ctx, d.Q(q), args...)
	return err
}

// Rollup returns profile id's encoded rollup, nil when it has none.
func (d *DB) Rollup(ctx context.Context, id string) ([]byte, error) {
	if !store.ValidID(id) {
		return nil, subsecond.ErrNotFound
	}
	var pk int64
	var b []byte
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, d.Q(`SELECT p.pk, r.data FROM profiles p LEFT JOIN rollups r ON r.profile = p.pk
			WHERE p.id = ? AND p.sha256 NOT LIKE 'pending:%'`), id).Scan(&pk, &b)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("profile %s: %w", id, subsecond.ErrNotFound)
		}
		return err
	})
	return b, err
}

// InsertRollup stores b as profile pk's encoded rollup inside tx, unless
// it has one already.
func (d *DB) InsertRollup(ctx context.Context, tx *sql.Tx, pk int64, b []byte) error {
	if _, err := tx.ExecContext(ctx, d.Q(`INSERT INTO rollups (profile, data) VALUES (?, ?) ON CONFLICT (profile) DO NOTHING`), pk, b); err != nil {
		return fmt.Errorf("store rollup: %w", err)
	}
	return nil
}

// WriteRollup stores b as profile id's encoded rollup inside tx, unless
// it has one already or is not stored, in one statement (so that SQLite
// takes the writer with its busy timeout rather than upgrading a read).
func (d *DB) WriteRollup(ctx context.Context, tx *sql.Tx, id string, b []byte) error {
	if !store.ValidID(id) {
		return subsecond.ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, d.Q(`INSERT INTO rollups (profile, data) SELECT pk, ? FROM profiles
		WHERE id = ? AND sha256 NOT LIKE 'pending:%' ON CONFLICT (profile) DO NOTHING`), b, id); err != nil {
		return fmt.Errorf("store rollup: %w", err)
	}
	return nil
}
