package store

import (
	"context"
	"fmt"

	"github.com/subsecond/subsecond"
)

// HostTotals returns the totals of at most limit hosts (all when 0)
// whose names follow after in byte order (from the first when ""), by
// name, each computed by the database over its profiles' rows without
// reading any profile into memory: the host list's page.
func (s *Store) HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error) {
	ts, err := s.b.HostTotals(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("host totals: %w", err)
	}
	return ts, nil
}

// HostProfiles returns host's profiles as List summarises them, in no
// particular order; none for a host without any.
func (s *Store) HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error) {
	ps, err := s.b.HostProfiles(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("profiles of host %s: %w", host, err)
	}
	return ps, nil
}

// HostLabelsOf is HostLabels for the given hosts alone: what a page of
// the host list shows beside them.
func (s *Store) HostLabelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, error) {
	if err := s.Indexed(ctx); err != nil {
		return nil, fmt.Errorf("host labels: %w", err)
	}
	set, newest, err := s.b.HostLabelsOf(ctx, hosts)
	if err != nil {
		return nil, fmt.Errorf("host labels: %w", err)
	}
	return withDerived(set, newest), nil
}
