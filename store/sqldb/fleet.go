package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

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
// names in the dictionary (those new to it added), the capture's row and
// a row per name. On PostgreSQL the day's partitions must exist.
func (d *DB) WriteIndex(ctx context.Context, tx *sql.Tx, pk int64, ix *store.Index) error {
	ids, err := d.nameIDs(ctx, tx, ix.Counts)
	if err != nil {
		return fmt.Errorf("store fleet names: %w", err)
	}
	_, err = tx.ExecContext(ctx, d.Q(`INSERT INTO fleet_captures (profile, day, host, start_ns, end_ns, boot_ns, kernel,
		cpu_model, cpus, slots, names) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), pk, ix.Day, ix.Host, ix.Start, ix.End, ix.Boot,
		ix.Kernel, ix.CPUModel, ix.CPUs, ix.Slots, store.EncodeNames(ids, ix.Counts))
	if err != nil {
		return fmt.Errorf("store fleet capture: %w", err)
	}
	if d.Dialect == Postgres {
		totals := make([]int64, len(ix.Counts))
		slots := make([][]byte, len(ix.Counts))
		for i, c := range ix.Counts {
			totals[i], slots[i] = c.Total, c.Slots
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO fleet_counts (name, day, profile, total, slots)
			SELECT u.name, $1, $2, u.total, u.slots FROM unnest($3::bigint[], $4::bigint[], $5::bytea[]) AS u (name, total, slots)`,
			ix.Day, pk, ids, totals, slots)
		if err != nil {
			return fmt.Errorf("store fleet counts: %w", err)
		}
		return nil
	}
	// Many rows a statement: one each took most of a deep capture's
	// import (7,500 names for 5,000 samples).
	for lo := 0; lo < len(ix.Counts); lo += sqliteBatch {
		hi := min(lo+sqliteBatch, len(ix.Counts))
		args := make([]any, 0, 5*(hi-lo))
		for i := lo; i < hi; i++ {
			args = append(args, ids[i], ix.Day, pk, ix.Counts[i].Total, ix.Counts[i].Slots)
		}
		q := `INSERT INTO fleet_counts (name, day, profile, total, slots) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", hi-lo), ", ")
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("store fleet counts: %w", err)
		}
	}
	return nil
}

// sqliteBatch is how many names or rows one SQLite statement of
// WriteIndex takes, within SQLite's 32,766 parameters.
const sqliteBatch = 200

// nameIDs returns the dictionary IDs of the names of counts (sorted by
// kind and name, the order in which concurrent imports add them, so that
// they wait for each other's new names in one order), adding the names
// it lacks.
func (d *DB) nameIDs(ctx context.Context, tx *sql.Tx, counts []store.IndexCount) ([]int64, error) {
	ids := make([]int64, len(counts))
	if d.Dialect == Postgres {
		kinds := make([]int16, len(counts))
		names := make([]string, len(counts))
		for i, c := range counts {
			kinds[i], names[i] = int16(c.Kind), c.Name
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fleet_names (kind, name)
			SELECT * FROM unnest($1::smallint[], $2::text[]) ON CONFLICT DO NOTHING`, kinds, names); err != nil {
			return nil, err
		}
		type key struct {
			kind int16
			name string
		}
		byName := make(map[key]int64, len(counts))
		err := d.Each(ctx, tx, `SELECT n.id, n.kind, n.name FROM fleet_names n
			JOIN unnest(?::smallint[], ?::text[]) AS u (kind, name) ON n.kind = u.kind AND n.name = u.name`,
			[]any{kinds, names}, func(scan func(...any) error) error {
				var k key
				var id int64
				err := scan(&id, &k.kind, &k.name)
				byName[k] = id
				return err
			})
		if err != nil {
			return nil, err
		}
		for i := range counts {
			id, ok := byName[key{kinds[i], names[i]}]
			if !ok {
				return nil, fmt.Errorf("name %q of kind %d not in the dictionary", names[i], kinds[i])
			}
			ids[i] = id
		}
		return ids, nil
	}
	// A batch of names of one kind at a time: those new are added, then
	// all are looked up.
	for lo := 0; lo < len(counts); {
		hi := lo + 1
		for hi < len(counts) && hi-lo < sqliteBatch && counts[hi].Kind == counts[lo].Kind {
			hi++
		}
		kind := int(counts[lo].Kind)
		ins := make([]any, 0, 2*(hi-lo))
		names := make([]any, 0, hi-lo+1)
		names = append(names, kind)
		at := make(map[string]int, hi-lo)
		for i := lo; i < hi; i++ {
			ins = append(ins, kind, counts[i].Name)
			names = append(names, counts[i].Name)
			at[counts[i].Name] = i
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fleet_names (kind, name) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?), ", hi-lo), ", ")+` ON CONFLICT DO NOTHING`, ins...); err != nil {
			return nil, err
		}
		found := 0
		err := d.Each(ctx, tx, `SELECT id, name FROM fleet_names WHERE kind = ? AND name IN (`+placeholders(hi-lo)+`)`, names,
			func(scan func(...any) error) error {
				var id int64
				var name string
				if err := scan(&id, &name); err != nil {
					return err
				}
				if i, ok := at[name]; ok {
					ids[i] = id
					found++
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		if found != hi-lo {
			return nil, fmt.Errorf("%d of %d names of kind %d not in the dictionary", hi-lo-found, hi-lo, kind)
		}
		lo = hi
	}
	return ids, nil
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
				if err == nil && p.Wall.Known() && p.Timed() {
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

// IndexNameBlobs calls fn with the ID, slot 0's start and the names blob
// (store.EncodeNames) of each capture with a slot in [from, to), one
// capture at a time.
func (d *DB) IndexNameBlobs(ctx context.Context, from, to int64, fn func(id string, start int64, names []byte) error) error {
	return d.ReadTx(ctx, func(tx *sql.Tx) error {
		cond, args, err := d.capturesIn(ctx, tx, from, to)
		if err != nil {
			return err
		}
		return d.Each(ctx, tx, `SELECT p.id, f.start_ns, f.names FROM fleet_captures f JOIN profiles p ON p.pk = f.profile WHERE `+cond,
			args, func(scan func(...any) error) error {
				var id string
				var start int64
				var names []byte
				if err := scan(&id, &start, &names); err != nil {
					return err
				}
				return fn(id, start, names)
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
		if err := store.EachName(c.names, func(id int64, _ []byte) error { ids = append(ids, id); return nil }); err != nil {
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
