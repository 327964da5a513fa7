package store

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// AddMarkers stores markers of host and says how many were new: a marker
// with the same time and text as a stored one is not stored again. The
// host keeps its newest subsecond.MaxHostMarkers markers: the oldest
// beyond them are dropped, in the same transaction. A host CheckHost
// refuses, or a marker text that is empty, longer than
// subsecond.MaxMarkerText or not UTF-8, is refused with an error wrapping
// subsecond.ErrInvalid, and nothing is stored.
func (s *Store) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker) (subsecond.MarkersAdded, error) {
	return s.addMarkers(ctx, host, ms, subsecond.MaxHostMarkers)
}

// addMarkers is AddMarkers keeping the host's newest keep markers.
func (s *Store) addMarkers(ctx context.Context, host string, ms []subsecond.Marker, keep int) (subsecond.MarkersAdded, error) {
	if err := query.CheckHost(host); err != nil {
		return subsecond.MarkersAdded{}, fmt.Errorf("add markers: %w", err)
	}
	for i, m := range ms {
		if m.Text == "" || len(m.Text) > subsecond.MaxMarkerText || !utf8.ValidString(m.Text) {
			return subsecond.MarkersAdded{}, fmt.Errorf("add markers: marker %d: text must be 1 to %d bytes of UTF-8: %w", i+1, subsecond.MaxMarkerText, subsecond.ErrInvalid)
		}
	}
	added, dropped, err := s.b.AddMarkers(ctx, host, ms, keep)
	s.changes.Add(1)
	if err != nil {
		return subsecond.MarkersAdded{}, fmt.Errorf("add markers: %w", err)
	}
	return subsecond.MarkersAdded{Added: added, Dropped: dropped}, nil
}

// Markers returns host's markers in [from, to) (Unix ns), in time order.
func (s *Store) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	ms, err := s.b.Markers(ctx, host, from, to)
	if err != nil {
		return nil, fmt.Errorf("markers: %w", err)
	}
	return ms, nil
}
