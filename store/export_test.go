package store

import (
	"context"
	"time"

	"github.com/subsecond/subsecond"
)

// AddMarkersKeeping is AddMarkers keeping the host's newest keep markers
// instead of subsecond.MaxHostMarkers, for tests of the trimming at a
// small size.
func AddMarkersKeeping(s *Store, ctx context.Context, host string, ms []subsecond.Marker, keep int) (subsecond.MarkersAdded, error) {
	return s.addMarkers(ctx, host, ms, keep)
}

// AddSeriesKeeping is AddSeries keeping keep distinct series of the host
// instead of subsecond.MaxHostSeries, for tests of the bound at a small
// size.
func AddSeriesKeeping(s *Store, ctx context.Context, host string, ss []subsecond.Series, keep int) (subsecond.SeriesAdded, error) {
	return s.addSeries(ctx, host, ss, keep)
}

// SetCloseWait sets how long Close waits for the fleet index writes in
// flight, returning the wait it replaces.
func SetCloseWait(d time.Duration) time.Duration {
	old := closeWait
	closeWait = d
	return old
}
