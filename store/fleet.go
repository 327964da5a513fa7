package store

import (
	"context"
	"errors"
	"regexp"

	"github.com/subsecond/subsecond"
)

// errTodo marks the fleet index methods not written yet.
var errTodo = errors.New("store: the fleet index is not implemented yet")

// SetHostLabels sets the labels set on host and removes those whose keys
// are in remove, in one transaction. Each label is checked
// (subsecond.LabelProblem); a host ends with at most subsecond.MaxLabels.
func (s *Store) SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string) error {
	return errTodo
}

// HostLabels returns every host's labels by key: those set, and those
// derived from its newest indexed capture (subsecond.LabelKernel, LabelCPUs,
// LabelCPUModel) unless one with the key is set.
func (s *Store) HostLabels(ctx context.Context) (map[string][]subsecond.Label, error) {
	return nil, errTodo
}

// IndexedCaptures: see fleet.Source.
func (s *Store) IndexedCaptures(ctx context.Context, from, to int64) ([]subsecond.IndexedCapture, error) {
	return nil, errTodo
}

// NameCounts: see fleet.Source.
func (s *Store) NameCounts(ctx context.Context, kind subsecond.NameKind, match *regexp.Regexp, from, to int64) ([]subsecond.NameCount, error) {
	return nil, errTodo
}

// NameTotals: see fleet.Source.
func (s *Store) NameTotals(ctx context.Context, from, to, min int64) ([]subsecond.NameCount, error) {
	return nil, errTodo
}

// Reindex writes the fleet index of the stored profiles that have none
// (imported before the index existed), one profile at a time, and
// returns how many it indexed.
func (s *Store) Reindex(ctx context.Context) (int, error) { return 0, errTodo }
