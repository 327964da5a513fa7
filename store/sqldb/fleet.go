package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// DayNS is a day in nanoseconds: the fleet index files a capture by the
// day of its start, floor(start / DayNS).
const DayNS = int64(86400e9)

// Day returns the day of Unix time t (ns), rounded down.
func Day(t int64) int64 {
	q := t / DayNS
	if t%DayNS < 0 {
		q--
	}
	return q
}

// SetHostLabels sets labels of host and removes those whose keys are in
// remove, inside tx, and fails with an error wrapping
// subsecond.ErrInvalid when the host ends with more than max labels.
func (d *DB) SetHostLabels(ctx context.Context, tx *sql.Tx, host string, set []subsecond.Label, remove []string, max int) error {
	for _, k := range remove {
		if _, err := tx.ExecContext(ctx, d.Q(`DELETE FROM host_labels WHERE host = ? AND key = ?`), host, k); err != nil {
			return err
		}
	}
	for _, l := range set {
		if _, err := tx.ExecContext(ctx, d.Q(`INSERT INTO host_labels (host, key, value) VALUES (?, ?, ?)
			ON CONFLICT (host, key) DO UPDATE SET value = excluded.value`), host, l.Key, l.Value); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, d.Q(`SELECT count(*) FROM host_labels WHERE host = ?`), host).Scan(&n); err != nil {
		return err
	}
	if n > max {
		return fmt.Errorf("the host would have %d labels, more than the %d a host may have: %w", n, max, subsecond.ErrInvalid)
	}
	return nil
}

// HostLabels returns the labels set on each host and each host's newest
// indexed capture, without its slots.
func (d *DB) HostLabels(ctx context.Context) (map[string][]subsecond.Label, map[string]store.IndexRow, error) {
	set := map[string][]subsecond.Label{}
	newest := map[string]store.IndexRow{}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		err := d.Each(ctx, tx, `SELECT host, key, value FROM host_labels`, nil, func(scan func(...any) error) error {
			var host string
			var l subsecond.Label
			err := scan(&host, &l.Key, &l.Value)
			set[host] = append(set[host], l)
			return err
		})
		if err != nil {
			return err
		}
		return d.Each(ctx, tx, `SELECT p.id, f.host, f.start_ns, f.end_ns, f.boot_ns, f.kernel, f.cpu_model, f.cpus
			FROM fleet_captures f JOIN profiles p ON p.pk = f.profile
			WHERE f.start_ns = (SELECT MAX(g.start_ns) FROM fleet_captures g WHERE g.host = f.host)`, nil,
			func(scan func(...any) error) error {
				var r store.IndexRow
				err := scan(&r.ID, &r.Host, &r.Start, &r.End, &r.Boot, &r.Kernel, &r.CPUModel, &r.CPUs)
				newest[r.Host] = r
				return err
			})
	})
	if err != nil {
		return nil, nil, err
	}
	return set, newest, nil
}

// WriteIndex stores ix as the fleet index of profile pk inside tx: its
// names in the dictionary (those new to it added), the capture's row with
// every name in its names blob, and a row per command and function. On PostgreSQL the day's partitions must exist. It
// returns the names' IDs for Remember once tx has committed.
func (d *DB) WriteIndex(ctx context.Context, tx *sql.Tx, pk int64, ix *store.Index) (NameIDs, error) {
	ids, learnt, err := d.nameIDs(ctx, tx, ix.Counts)
	if err != nil {
		return NameIDs{}, fmt.Errorf("store fleet names: %w", err)
	}
	_, err = tx.ExecContext(ctx, d.Q(`INSERT INTO fleet_captures (profile, day, host, start_ns, end_ns, boot_ns, kernel,
		cpu_model, cpus, slots, names) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), pk, ix.Day, ix.Host, ix.Start, ix.End, ix.Boot,
		ix.Kernel, ix.CPUModel, ix.CPUs, ix.Slots, store.EncodeNames(ids, ix.Counts))
	if err != nil {
		return NameIDs{}, fmt.Errorf("store fleet capture: %w", err)
	}
	// Rows for commands and functions only: call edges, two thirds of a
	// capture's names and searched the least, are read from the names
	// blob (store.NameCounts), which keeps the index within a tenth of the
	// database on PostgreSQL too.
	var rows []int
	for i, c := range ix.Counts {
		if c.Kind != subsecond.NameEdge {
			rows = append(rows, i)
		}
	}
	if d.Dialect == Postgres {
		names := make([]int64, len(rows))
		totals := make([]int64, len(rows))
		slots := make([][]byte, len(rows))
		for k, i := range rows {
			names[k], totals[k], slots[k] = ids[i], ix.Counts[i].Total, ix.Counts[i].Slots
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO fleet_counts (name, day, profile, total, slots)
			SELECT u.name, $1, $2, u.total, u.slots FROM unnest($3::bigint[], $4::bigint[], $5::bytea[]) AS u (name, total, slots)`,
			ix.Day, pk, names, totals, slots)
		if err != nil {
			return NameIDs{}, fmt.Errorf("store fleet counts: %w", err)
		}
		return learnt, nil
	}
	// Many rows a statement, prepared once: one each took most of a deep
	// capture's import (7,500 names for 5,000 samples), and preparing each
	// batch's statement a tenth.
	st := batchStmt{tx: tx, query: func(rows int) string {
		return `INSERT INTO fleet_counts (name, day, profile, total, slots) VALUES ` + values(rows, 5)
	}}
	defer st.close()
	if _, err := st.insert(ctx, rows, 5, func(args []any, i int) []any {
		return append(args, ids[i], ix.Day, pk, ix.Counts[i].Total, ix.Counts[i].Slots)
	}); err != nil {
		return NameIDs{}, fmt.Errorf("store fleet counts: %w", err)
	}
	return learnt, nil
}

// sqliteBatch is how many names or rows one SQLite statement of
// WriteIndex takes, within SQLite's 32,766 parameters.
const sqliteBatch = 200

// values returns the VALUES list of rows rows of n placeholders each.
func values(rows, n int) string {
	row := "(" + placeholders(n) + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// batchStmt is a statement of SQLite over batches of rows in tx, query(n)
// for n rows: prepared once for the full batches of sqliteBatch rows, and
// run as it is for a shorter one.
type batchStmt struct {
	tx    *sql.Tx
	query func(rows int) string
	full  *sql.Stmt
}

// stmt returns the prepared statement of full batches.
func (b *batchStmt) stmt(ctx context.Context) (*sql.Stmt, error) {
	if b.full == nil {
		st, err := b.tx.PrepareContext(ctx, b.query(sqliteBatch))
		if err != nil {
			return nil, err
		}
		b.full = st
	}
	return b.full, nil
}

// exec runs the statement of rows rows with args.
func (b *batchStmt) exec(ctx context.Context, rows int, args []any) (sql.Result, error) {
	if rows < sqliteBatch {
		return b.tx.ExecContext(ctx, b.query(rows), args...)
	}
	st, err := b.stmt(ctx)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// insert runs the statement over rows, sqliteBatch of them at a time,
// each row's cols arguments appended by row; on failure it returns the
// failed batch's rows beside the error.
func (b *batchStmt) insert(ctx context.Context, rows []int, cols int, row func(args []any, i int) []any) (int, error) {
	args := make([]any, 0, cols*min(len(rows), sqliteBatch))
	for lo := 0; lo < len(rows); lo += sqliteBatch {
		hi := min(lo+sqliteBatch, len(rows))
		args = args[:0]
		for _, i := range rows[lo:hi] {
			args = row(args, i)
		}
		if _, err := b.exec(ctx, hi-lo, args); err != nil {
			return hi - lo, err
		}
	}
	return 0, nil
}

// each runs the query of rows rows with args and calls fn with each row's
// Scan.
func (b *batchStmt) each(ctx context.Context, rows int, args []any, fn func(scan func(...any) error) error) error {
	var r *sql.Rows
	var err error
	if rows < sqliteBatch {
		r, err = b.tx.QueryContext(ctx, b.query(rows), args...)
	} else if st, serr := b.stmt(ctx); serr != nil {
		err = serr
	} else {
		r, err = st.QueryContext(ctx, args...)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		if err := fn(r.Scan); err != nil {
			return err
		}
	}
	return r.Err()
}

func (b *batchStmt) close() {
	if b.full != nil {
		b.full.Close()
	}
}

// nameIDs returns the dictionary IDs of the names of counts (sorted by
// kind and name, the order in which concurrent imports add them, so that
// they wait for each other's new names in one order), adding the names
// it lacks, and those IDs it did not find in d's cache, for Remember once
// tx has committed.
func (d *DB) nameIDs(ctx context.Context, tx *sql.Tx, counts []store.IndexCount) ([]int64, NameIDs, error) {
	ids := make([]int64, len(counts))
	miss := d.names.lookup(counts, ids)
	if len(miss) == 0 {
		return ids, NameIDs{}, nil
	}
	if d.Dialect == Postgres {
		if err := d.pgNameIDs(ctx, tx, counts, miss, ids); err != nil {
			return nil, NameIDs{}, err
		}
	} else if err := d.sqliteNameIDs(ctx, tx, counts, miss, ids); err != nil {
		return nil, NameIDs{}, err
	}
	learnt := NameIDs{keys: make([]nameKey, len(miss)), ids: make([]int64, len(miss))}
	for j, i := range miss {
		learnt.keys[j] = nameKey{counts[i].Kind, counts[i].Name}
		learnt.ids[j] = ids[i]
	}
	return ids, learnt, nil
}

// sqliteNameIDs sets ids[i] for each i of miss to the dictionary ID of
// the name of counts[i], adding those the dictionary lacks. The
// transaction holds SQLite's one writer (it wrote first, or a write fails
// when another committed since it read), so the names it looked up and
// did not find are new, and take the IDs after the dictionary's largest,
// in order: those SQLite gives rows without an ID, and those an INSERT
// that skipped the names found gave before. The new names are inserted
// with their IDs, many rows a statement and nothing returned: reading
// back each new name (RETURNING) took half of a fresh database's import
// of them. On a fresh dictionary nothing is looked up.
func (d *DB) sqliteNameIDs(ctx context.Context, tx *sql.Tx, counts []store.IndexCount, miss []int, ids []int64) error {
	var top sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(id) FROM fleet_names`).Scan(&top); err != nil {
		return err
	}
	fresh := miss
	if top.Valid {
		at := make(map[nameKey]int, len(miss))
		for _, i := range miss {
			at[nameKey{counts[i].Kind, counts[i].Name}] = i
		}
		err := d.findNames(ctx, tx, counts, miss, func(scan func(...any) error) error {
			var id int64
			var k nameKey
			if err := scan(&id, &k.kind, &k.name); err != nil {
				return err
			}
			if i, ok := at[k]; ok {
				ids[i] = id
			}
			return nil
		})
		if err != nil {
			return err
		}
		fresh = nil
		for _, i := range miss {
			if ids[i] == 0 {
				fresh = append(fresh, i)
			}
		}
	}
	next := top.Int64 + 1
	for _, i := range fresh {
		ids[i] = next
		next++
	}
	st := batchStmt{tx: tx, query: func(rows int) string {
		return `INSERT INTO fleet_names (id, kind, name) VALUES ` + values(rows, 3)
	}}
	defer st.close()
	if n, err := st.insert(ctx, fresh, 3, func(args []any, i int) []any {
		return append(args, ids[i], int(counts[i].Kind), counts[i].Name)
	}); err != nil {
		return fmt.Errorf("add %d names: %w", n, err)
	}
	return nil
}

// pgNameIDs sets ids[i] for each i of miss to the dictionary ID of the
// name of counts[i], adding those the dictionary lacks. Concurrent
// imports may add the same names: each adds those it can, and looks up
// the rest.
func (d *DB) pgNameIDs(ctx context.Context, tx *sql.Tx, counts []store.IndexCount, miss []int, ids []int64) error {
	at := make(map[nameKey]int, len(miss))
	for _, i := range miss {
		at[nameKey{counts[i].Kind, counts[i].Name}] = i
	}
	found := 0
	got := func(scan func(...any) error) error {
		var id int64
		var k nameKey
		if err := scan(&id, &k.kind, &k.name); err != nil {
			return err
		}
		if i, ok := at[k]; ok && ids[i] == 0 {
			ids[i] = id
			found++
		}
		return nil
	}
	kinds, names := kindsAndNames(counts, miss)
	err := d.Each(ctx, tx, `INSERT INTO fleet_names (kind, name) SELECT * FROM unnest(?::smallint[], ?::text[])
		ON CONFLICT DO NOTHING RETURNING id, kind, name`, []any{kinds, names}, got)
	if err != nil {
		return err
	}
	if found < len(miss) {
		// Names another import added: looked up.
		var old []int
		for _, i := range miss {
			if ids[i] == 0 {
				old = append(old, i)
			}
		}
		if err := d.findNames(ctx, tx, counts, old, got); err != nil {
			return err
		}
	}
	if found < len(miss) {
		return fmt.Errorf("%d of %d names not in the dictionary", len(miss)-found, len(miss))
	}
	return nil
}

// findNames calls fn with the Scan of the ID, kind and name of each name
// of counts[old] in the dictionary.
func (d *DB) findNames(ctx context.Context, tx *sql.Tx, counts []store.IndexCount, old []int, fn func(scan func(...any) error) error) error {
	if d.Dialect == Postgres {
		kinds, names := kindsAndNames(counts, old)
		return d.Each(ctx, tx, `SELECT n.id, n.kind, n.name FROM fleet_names n
			JOIN unnest(?::smallint[], ?::text[]) AS u (kind, name) ON n.kind = u.kind AND n.name = u.name`,
			[]any{kinds, names}, fn)
	}
	// A batch of names of one kind at a time.
	for lo := 0; lo < len(old); {
		hi := lo + 1
		kind := counts[old[lo]].Kind
		for hi < len(old) && hi-lo < sqliteBatch && counts[old[hi]].Kind == kind {
			hi++
		}
		args := []any{int(kind)}
		for _, i := range old[lo:hi] {
			args = append(args, counts[i].Name)
		}
		err := d.Each(ctx, tx, `SELECT id, kind, name FROM fleet_names WHERE kind = ? AND name IN (`+placeholders(hi-lo)+`)`, args, fn)
		if err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// kindsAndNames returns the kinds and names of counts[at], as PostgreSQL
// arrays take them.
func kindsAndNames(counts []store.IndexCount, at []int) ([]int16, []string) {
	kinds := make([]int16, len(at))
	names := make([]string, len(at))
	for j, i := range at {
		kinds[j], names[j] = int16(counts[i].Kind), counts[i].Name
	}
	return kinds, names
}

// nameKey is a name of the dictionary.
type nameKey struct {
	kind subsecond.NameKind
	name string
}

// NameIDs are dictionary IDs that a transaction read or assigned to
// names. An ID it assigned is true only once it has committed: then
// Remember puts them in the DB's cache.
type NameIDs struct {
	keys []nameKey
	ids  []int64
}

// Remember caches the names' IDs of n, read or assigned by a transaction
// that has committed.
func (d *DB) Remember(n NameIDs) { d.names.add(n) }

// maxCachedNames bounds the bytes of the names a DB caches the IDs of
// (each name's bytes and 64 more): a fleet's commands, functions and call
// edges, some hundred thousand.
const maxCachedNames = 32 << 20

// nameCache holds dictionary IDs of names. A name is never removed from
// the dictionary and its ID never changes once assigned, so an entry
// stays true while the database lives; a name another process added is
// not in it, and is looked up. It holds at most maxCachedNames bytes, and
// starts afresh when full.
type nameCache struct {
	mu    sync.Mutex
	ids   map[nameKey]int64
	bytes int
}

// lookup sets ids[i] to the cached ID of the name of counts[i] and
// returns the indexes of those it does not hold.
func (c *nameCache) lookup(counts []store.IndexCount, ids []int64) []int {
	var miss []int
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range counts {
		id, ok := c.ids[nameKey{n.Kind, n.Name}]
		if !ok {
			miss = append(miss, i)
		}
		ids[i] = id
	}
	return miss
}

// add caches the IDs of n. The names are copied, into one string: an
// index's names may be substrings of one string of them all, and a copy
// each took a third of adding a capture's thousands.
func (c *nameCache) add(n NameIDs) {
	if len(n.keys) == 0 {
		return
	}
	size := 0
	for _, k := range n.keys {
		size += len(k.name)
	}
	var b strings.Builder
	b.Grow(size)
	for _, k := range n.keys {
		b.WriteString(k.name)
	}
	all := b.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	at := 0
	for i, k := range n.keys {
		name := all[at : at+len(k.name)]
		at += len(k.name)
		if _, ok := c.ids[k]; ok {
			continue
		}
		if c.ids == nil || c.bytes+len(k.name)+64 > maxCachedNames {
			c.ids, c.bytes = make(map[nameKey]int64, len(n.keys)-i), 0
		}
		c.ids[nameKey{k.kind, name}] = n.ids[i]
		c.bytes += len(k.name) + 64
	}
}

// IndexProfile returns the key of profile id, for WriteIndex, and whether
// it has a fleet index already, inside tx.
func (d *DB) IndexProfile(ctx context.Context, tx *sql.Tx, id string) (pk int64, indexed bool, err error) {
	if !store.ValidID(id) {
		return 0, false, subsecond.ErrNotFound
	}
	err = tx.QueryRowContext(ctx, d.Q(`SELECT pk, EXISTS (SELECT 1 FROM fleet_captures f WHERE f.profile = p.pk)
		FROM profiles p WHERE id = ? AND sha256 NOT LIKE 'pending:%'`), id).Scan(&pk, &indexed)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, subsecond.ErrNotFound
	}
	return pk, indexed, err
}

// Unindexed returns the IDs of the stored profiles without a fleet index
// that have a wall-clock anchor (those without one never have an index),
// oldest import first.
func (d *DB) Unindexed(ctx context.Context) ([]string, error) {
	var ids []string
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return d.Each(ctx, tx, `SELECT `+profileCols+` FROM profiles p WHERE sha256 NOT LIKE 'pending:%'
			AND NOT EXISTS (SELECT 1 FROM fleet_captures f WHERE f.profile = p.pk) ORDER BY uploaded_ns, pk`, nil,
			func(scan func(...any) error) error {
				_, p, _, err := scanProfile(scanFunc(scan))
				if err == nil && store.Indexable(p) {
					ids = append(ids, p.ID)
				}
				return err
			})
	})
	return ids, err
}

// capturesIn returns the WHERE condition on fleet_captures f, and its
// arguments, of the captures with a slot in [from, to), inside tx: those
// that start before to and end after from, so start after from less the
// longest capture's span, which an index finds.
func (d *DB) capturesIn(ctx context.Context, tx *sql.Tx, from, to int64) (string, []any, error) {
	var span int64
	err := tx.QueryRowContext(ctx, `SELECT end_ns - start_ns FROM fleet_captures ORDER BY end_ns - start_ns DESC LIMIT 1`).Scan(&span)
	if errors.Is(err, sql.ErrNoRows) || from >= to {
		return `1 = 0`, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	lo := int64(math.MinInt64)
	if from > math.MinInt64+span {
		lo = from - span
	}
	return `f.day BETWEEN ? AND ? AND f.start_ns >= ? AND f.start_ns < ? AND f.end_ns > ?`,
		[]any{Day(lo), Day(to - 1), lo, to, from}, nil
}

// IndexedCaptures returns the indexed captures with a slot in [from, to),
// by host, start and ID, at most limit.
func (d *DB) IndexedCaptures(ctx context.Context, from, to int64, limit int) ([]store.IndexRow, error) {
	out := []store.IndexRow{}
	order := `f.host, f.start_ns, p.id`
	if d.Dialect == Postgres {
		order = `f.host COLLATE "C", f.start_ns, p.id COLLATE "C"`
	}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		cond, args, err := d.capturesIn(ctx, tx, from, to)
		if err != nil {
			return err
		}
		return d.Each(ctx, tx, `SELECT p.id, f.host, f.start_ns, f.end_ns, f.boot_ns, f.kernel, f.cpu_model, f.cpus, f.slots
			FROM fleet_captures f JOIN profiles p ON p.pk = f.profile WHERE `+cond+` ORDER BY `+order+` LIMIT ?`,
			append(args, limit), func(scan func(...any) error) error {
				var r store.IndexRow
				err := scan(&r.ID, &r.Host, &r.Start, &r.End, &r.Boot, &r.Kernel, &r.CPUModel, &r.CPUs, &r.Slots)
				out = append(out, r)
				return err
			})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// IndexNames returns every name of kind in the dictionary.
func (d *DB) IndexNames(ctx context.Context, kind subsecond.NameKind) ([]store.IndexName, error) {
	var out []store.IndexName
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		return d.Each(ctx, tx, `SELECT id, name FROM fleet_names WHERE kind = ?`, []any{int(kind)}, func(scan func(...any) error) error {
			var n store.IndexName
			err := scan(&n.ID, &n.Name)
			out = append(out, n)
			return err
		})
	})
	return out, err
}

// captureKeys returns the key, ID and day of each capture with a slot in
// [from, to), and the range of their days, inside tx.
func (d *DB) captureKeys(ctx context.Context, tx *sql.Tx, from, to int64) (map[int64]string, int64, int64, error) {
	cond, args, err := d.capturesIn(ctx, tx, from, to)
	if err != nil {
		return nil, 0, 0, err
	}
	ids := map[int64]string{}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	err = d.Each(ctx, tx, `SELECT f.profile, p.id, f.day FROM fleet_captures f JOIN profiles p ON p.pk = f.profile WHERE `+cond,
		args, func(scan func(...any) error) error {
			var pk, day int64
			var id string
			err := scan(&pk, &id, &day)
			ids[pk] = id
			lo, hi = min(lo, day), max(hi, day)
			return err
		})
	return ids, lo, hi, err
}

// IndexCounts returns the rows of the names with the given IDs in the
// captures with a slot in [from, to): the captures first, then the names'
// rows in the captures' days, by the key that leads with the name.
func (d *DB) IndexCounts(ctx context.Context, names []int64, from, to int64) ([]store.CountRow, error) {
	out := []store.CountRow{}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		ids, lo, hi, err := d.captureKeys(ctx, tx, from, to)
		if err != nil || len(ids) == 0 {
			return err
		}
		args := []any{lo, hi}
		for _, n := range names {
			args = append(args, n)
		}
		return d.Each(ctx, tx, `SELECT profile, name, total, slots FROM fleet_counts WHERE day BETWEEN ? AND ? AND name IN (`+
			placeholders(len(names))+`)`, args, func(scan func(...any) error) error {
			var pk int64
			var r store.CountRow
			if err := scan(&pk, &r.NameID, &r.Total, &r.Slots); err != nil {
				return err
			}
			if id, ok := ids[pk]; ok {
				r.Capture = id
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// placeholders returns n ? placeholders separated by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// IndexNameBlobs calls fn with the ID, the start of slot 0 and the end of
// the last slot, and the names blob (store.EncodeNames) of each capture
// with a slot in [from, to), one capture at a time.
func (d *DB) IndexNameBlobs(ctx context.Context, from, to int64, fn func(id string, start, end int64, names []byte) error) error {
	return d.ReadTx(ctx, func(tx *sql.Tx) error {
		cond, args, err := d.capturesIn(ctx, tx, from, to)
		if err != nil {
			return err
		}
		return d.Each(ctx, tx, `SELECT p.id, f.start_ns, f.end_ns, f.names FROM fleet_captures f JOIN profiles p ON p.pk = f.profile WHERE `+cond,
			args, func(scan func(...any) error) error {
				var id string
				var start, end int64
				var names []byte
				if err := scan(&id, &start, &end, &names); err != nil {
					return err
				}
				return fn(id, start, end, names)
			})
	})
}

// deleteIndex removes the fleet index rows of profile id inside tx: its
// fleet_captures row and its names' rows of fleet_counts, found by the IDs
// of its names blob (the table has no index on profile). It writes before
// it reads, since a SQLite transaction that read first fails at once
// ("database is locked") when another has written meanwhile.
func (d *DB) deleteIndex(ctx context.Context, tx *sql.Tx, id string) error {
	type capture struct {
		pk, day int64
		names   []byte
	}
	var caps []capture
	rows, err := tx.QueryContext(ctx, d.Q(`DELETE FROM fleet_captures WHERE profile = (SELECT pk FROM profiles WHERE id = ?)
		RETURNING profile, day, names`), id)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c capture
		if err := rows.Scan(&c.pk, &c.day, &c.names); err != nil {
			rows.Close()
			return err
		}
		caps = append(caps, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range caps {
		var ids []any
		if err := store.EachName(c.names, func(id, _ int64, _ []byte) error { ids = append(ids, id); return nil }); err != nil {
			return fmt.Errorf("the fleet index of profile %s: %w", id, err)
		}
		for len(ids) > 0 {
			batch := ids[:min(len(ids), 500)]
			ids = ids[len(batch):]
			_, err := tx.ExecContext(ctx, d.Q(`DELETE FROM fleet_counts WHERE day = ? AND profile = ? AND name IN (`+placeholders(len(batch))+`)`),
				append([]any{c.day, c.pk}, batch...)...)
			if err != nil {
				return err
			}
		}
	}
	return nil
}
