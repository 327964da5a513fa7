// Package fleet answers questions across hosts from the store's fleet
// index (per-capture counts of commands, functions and call edges per
// subsecond.IndexSlot, written at import), never by decoding samples:
// a hosts × time grid for the /fleet page, a search ranking hosts by
// the share of a function, command or call edge, and two contrasts: which
// names' shares differ between the groups of a label (zone=a against
// zone=b), and which rise with uptime (a leak's signature).
package fleet

import (
	"context"
	"regexp"

	"github.com/subsecond/subsecond"
)

// Source is what the fleet views read: the store's fleet index, the hosts'
// labels and markers. *store.Store is one.
type Source interface {
	// IndexedCaptures returns the indexed captures with a slot in
	// [from, to) (Unix ns) of every host, by host and then Start. More
	// than subsecond.MaxIndexedCaptures of them is an error wrapping
	// subsecond.ErrTooLarge.
	IndexedCaptures(ctx context.Context, from, to int64) ([]subsecond.IndexedCapture, error)
	// NameCounts returns the per-slot counts of the names of kind that
	// match matches, in the captures with a slot in [from, to). More
	// than subsecond.MaxIndexNames distinct names matching is an error
	// wrapping subsecond.ErrTooLarge that says so.
	NameCounts(ctx context.Context, kind subsecond.NameKind, match *regexp.Regexp, from, to int64) ([]subsecond.NameCount, error)
	// NameTotals returns the names q selects, each one's total in each
	// capture q counts over its slots starting in [q.From, q.To) (a
	// NameCount with one slot), by kind and name, then capture.
	NameTotals(ctx context.Context, q subsecond.TotalsQuery) ([]subsecond.NameCount, error)
	// HostLabels returns every host's labels, set and derived, by key.
	HostLabels(ctx context.Context) (map[string][]subsecond.Label, error)
	// Markers returns host's markers in [from, to) (Unix ns), in time
	// order.
	Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error)
}
