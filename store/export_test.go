package store

import (
	"context"

	"github.com/subsecond/subsecond"
)

// AddMarkersKeeping is AddMarkers keeping the host's newest keep markers
// instead of subsecond.MaxHostMarkers, for tests of the trimming at a
// small size.
func AddMarkersKeeping(s *Store, ctx context.Context, host string, ms []subsecond.Marker, keep int) (subsecond.MarkersAdded, error) {
	return s.addMarkers(ctx, host, ms, keep)
}
