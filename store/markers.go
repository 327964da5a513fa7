package store

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
)

// AddMarkers stores markers of host and returns how many were new: a
// marker with the same time and text as a stored one is not stored again.
// A host CheckHost refuses, or a marker text that is empty, longer than
// subsecond.MaxMarkerText or not UTF-8, is refused with an error wrapping
// subsecond.ErrInvalid, and nothing is stored.
func (s *Store) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker) (int, error) {
	if err := subsecond.CheckHost(host); err != nil {
		return 0, fmt.Errorf("add markers: %w", err)
	}
	for i, m := range ms {
		if m.Text == "" || len(m.Text) > subsecond.MaxMarkerText || !utf8.ValidString(m.Text) {
			return 0, fmt.Errorf("add markers: marker %d: text must be 1 to %d bytes of UTF-8: %w", i+1, subsecond.MaxMarkerText, subsecond.ErrInvalid)
		}
	}
	if err := s.lockWrite(ctx); err != nil {
		return 0, fmt.Errorf("add markers: %w", err)
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("add markers: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO markers (host, t_ns, text) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, fmt.Errorf("add markers: %w", err)
	}
	defer st.Close()
	added := 0
	for _, m := range ms {
		res, err := st.ExecContext(ctx, host, m.Time, m.Text)
		if err != nil {
			return 0, fmt.Errorf("add markers: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			added++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("add markers: %w", err)
	}
	return added, nil
}

// Markers returns host's markers in [from, to) (Unix ns), in time order.
func (s *Store) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("markers: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT t_ns, text FROM markers WHERE host = ? AND t_ns >= ? AND t_ns < ? ORDER BY t_ns, text`, host, from, to)
	if err != nil {
		return nil, fmt.Errorf("markers: %w", err)
	}
	defer rows.Close()
	out := []subsecond.Marker{}
	for rows.Next() {
		var m subsecond.Marker
		if err := rows.Scan(&m.Time, &m.Text); err != nil {
			return nil, fmt.Errorf("markers: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("markers: %w", err)
	}
	return out, nil
}
