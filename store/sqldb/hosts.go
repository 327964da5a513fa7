package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// wallCols returns the wall-clock columns of p's row (migration 0012):
// the source of its own anchor ("" when it has none), 1 when that anchor
// is approximate, and its span [start, end) in Unix ns as the host
// timeline places a capture, one sampling period after its last sample;
// 0 and 0 without a wall clock.
func wallCols(p *subsecond.Profile) (source string, approx int, start, end int64) {
	w := p.Anchor()
	if !w.Known() {
		return "", 0, 0, 0
	}
	if w.Approximate {
		approx = 1
	}
	return w.Source, approx, w.Wall(p.Start), w.Wall(p.End) + p.Period()
}

// Walls is the wall-clock columns of profiles stored before migration
// 0012 gave them some, to be set by SetWalls.
type Walls struct {
	pks  []int64
	list []*subsecond.Profile
}

// Len returns how many profiles w holds.
func (w *Walls) Len() int { return len(w.pks) }

// Unwalled returns the profiles whose wall-clock columns are unset, in a
// read transaction of its own: a write transaction that read first would
// meet SQLite's busy snapshot.
func (d *DB) Unwalled(ctx context.Context) (*Walls, error) {
	w := new(Walls)
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		w.pks, w.list = nil, nil
		return d.Each(ctx, tx, `SELECT `+profileCols+` FROM profiles WHERE wall_source IS NULL AND sha256 NOT LIKE 'pending:%'`, nil,
			func(scan func(...any) error) error {
				pk, p, _, err := scanProfile(scanFunc(scan))
				if err != nil {
					return err
				}
				w.pks, w.list = append(w.pks, pk), append(w.list, p)
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("profiles without wall-clock columns: %w", err)
	}
	return w, nil
}

// SetWalls sets the wall-clock columns of w's profiles inside tx.
// Profiles deleted meanwhile are skipped; concurrent calls write the same
// values.
func (d *DB) SetWalls(ctx context.Context, tx *sql.Tx, w *Walls) error {
	for i, p := range w.list {
		source, approx, start, end := wallCols(p)
		if _, err := tx.ExecContext(ctx, d.Q(`UPDATE profiles SET wall_source = ?, wall_approx = ?, wall_start = ?, wall_end = ? WHERE pk = ?`),
			source, approx, start, end, w.pks[i]); err != nil {
			return fmt.Errorf("set wall clock of %s: %w", p.ID, err)
		}
	}
	return nil
}

// byName is the collation that orders host names by their bytes, as Go
// compares strings: PostgreSQL's default follows the database's locale.
func (d *DB) byName() string {
	if d.Dialect == Postgres {
		return ` COLLATE "C"`
	}
	return ""
}

// HostTotals returns the totals of at most limit hosts (all when 0) whose
// names follow after (from the first when ""), by name, each computed in
// one aggregate over its profiles' rows.
func (d *DB) HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error) {
	c := d.byName()
	args := []any{after}
	lim := ""
	if limit > 0 {
		lim = ` LIMIT ?`
		args = append(args, limit)
	}
	// A capture is placed when it has a wall clock and samples (see
	// timeline.place); Start and End span those whose anchor is exact.
	q := `SELECT host` + c + `, count(*), CAST(COALESCE(sum(samples), 0) AS BIGINT),
		sum(CASE WHEN wall_source = '' OR samples = 0 THEN 1 ELSE 0 END),
		sum(CASE WHEN wall_source <> '' AND samples > 0 AND wall_approx = 0 THEN 1 ELSE 0 END),
		COALESCE(min(CASE WHEN wall_source <> '' AND samples > 0 AND wall_approx = 0 THEN wall_start END), 0),
		COALESCE(max(CASE WHEN wall_source <> '' AND samples > 0 AND wall_approx = 0 THEN wall_end END), 0),
		sum(CASE WHEN wall_source <> '' AND samples > 0 AND wall_approx <> 0 THEN 1 ELSE 0 END)
		FROM profiles WHERE sha256 NOT LIKE 'pending:%' AND host` + c + ` > ?
		GROUP BY host` + c + ` ORDER BY host` + c + lim
	var out []subsecond.HostTotals
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		out = nil
		return d.Each(ctx, tx, q, args, func(scan func(...any) error) error {
			var t subsecond.HostTotals
			err := scan(&t.Host, &t.Captures, &t.Samples, &t.Unanchored, &t.Exact, &t.Start, &t.End, &t.Approximate)
			out = append(out, t)
			return err
		})
	})
	return out, err
}

// HostProfiles returns host's profiles as List summarises them, in no
// particular order.
func (d *DB) HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error) {
	var list []subsecond.Profile
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		list = nil
		return d.Each(ctx, tx, `SELECT `+profileCols+` FROM profiles WHERE host = ? AND sha256 NOT LIKE 'pending:%'`, []any{host},
			func(scan func(...any) error) error {
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

// HostLabelsOf is HostLabels for the given hosts alone: the labels set on
// each and each one's newest indexed capture, without its slots.
func (d *DB) HostLabelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, map[string]store.IndexRow, error) {
	set := map[string][]subsecond.Label{}
	newest := map[string]store.IndexRow{}
	if len(hosts) == 0 {
		return set, newest, nil
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(hosts)), ", ") + ")"
	args := make([]any, len(hosts))
	for i, h := range hosts {
		args[i] = h
	}
	err := d.ReadTx(ctx, func(tx *sql.Tx) error {
		err := d.Each(ctx, tx, `SELECT host, key, value FROM host_labels WHERE host IN `+in, args, func(scan func(...any) error) error {
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
			WHERE f.host IN `+in+` AND f.start_ns = (SELECT MAX(g.start_ns) FROM fleet_captures g WHERE g.host = f.host)`, args,
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
