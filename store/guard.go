package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/subsecond/subsecond"
)

// guard is a Backend whose errors that mean the database is unavailable
// (Backend.Unavailable) wrap subsecond.ErrUnavailable, so that every
// caller of a Store classifies an outage the same way whichever backend
// and driver reported it.
type guard struct{ b Backend }

// wrap marks err with subsecond.ErrUnavailable when it means an outage.
func (g guard) wrap(err error) error {
	if err == nil || errors.Is(err, subsecond.ErrUnavailable) || !g.b.Unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", subsecond.ErrUnavailable, err)
}

func (g guard) Begin(ctx context.Context, id string) (Import, error) {
	im, err := g.b.Begin(ctx, id)
	if err != nil {
		return nil, g.wrap(err)
	}
	return guardImport{im, g}, nil
}

func (g guard) ProfileByDigest(ctx context.Context, digest string) (*subsecond.Profile, error) {
	p, err := g.b.ProfileByDigest(ctx, digest)
	return p, g.wrap(err)
}

func (g guard) LegacyDigests(ctx context.Context) (bool, error) {
	some, err := g.b.LegacyDigests(ctx)
	return some, g.wrap(err)
}

func (g guard) List(ctx context.Context, opt ListOptions) ([]subsecond.Profile, error) {
	l, err := g.b.List(ctx, opt)
	return l, g.wrap(err)
}

func (g guard) Profile(ctx context.Context, id string) (*subsecond.Profile, error) {
	p, err := g.b.Profile(ctx, id)
	return p, g.wrap(err)
}

func (g guard) Load(ctx context.Context, id string) (*Stored, error) {
	st, err := g.b.Load(ctx, id)
	return st, g.wrap(err)
}

func (g guard) LoadWindow(ctx context.Context, id string, from, to int64) (*Stored, error) {
	st, err := g.b.LoadWindow(ctx, id, from, to)
	return st, g.wrap(err)
}

func (g guard) Chunks(ctx context.Context, id string, from, to int64, data bool) (*Stored, error) {
	st, err := g.b.Chunks(ctx, id, from, to, data)
	return st, g.wrap(err)
}

func (g guard) Exists(ctx context.Context, id string) (bool, error) {
	ok, err := g.b.Exists(ctx, id)
	return ok, g.wrap(err)
}

func (g guard) Rollup(ctx context.Context, id string) ([]byte, error) {
	b, err := g.b.Rollup(ctx, id)
	return b, g.wrap(err)
}

func (g guard) WriteRollup(ctx context.Context, id string, b []byte) error {
	return g.wrap(g.b.WriteRollup(ctx, id, b))
}

func (g guard) Rename(ctx context.Context, id, name string) error {
	return g.wrap(g.b.Rename(ctx, id, name))
}

func (g guard) Delete(ctx context.Context, id string) error { return g.wrap(g.b.Delete(ctx, id)) }

func (g guard) AddMarkers(ctx context.Context, host string, ms []subsecond.Marker, keep int) (int, int, error) {
	added, dropped, err := g.b.AddMarkers(ctx, host, ms, keep)
	return added, dropped, g.wrap(err)
}

func (g guard) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	ms, err := g.b.Markers(ctx, host, from, to)
	return ms, g.wrap(err)
}

func (g guard) AddSeries(ctx context.Context, host string, blocks []SeriesBlock, keep int) (subsecond.SeriesAdded, error) {
	n, err := g.b.AddSeries(ctx, host, blocks, keep)
	return n, g.wrap(err)
}

func (g guard) SeriesBlocks(ctx context.Context, host, name string, from, to int64) ([]SeriesBlock, error) {
	bs, err := g.b.SeriesBlocks(ctx, host, name, from, to)
	return bs, g.wrap(err)
}

func (g guard) SeriesPoints(ctx context.Context, host, name string, from, to int64) (int64, error) {
	n, err := g.b.SeriesPoints(ctx, host, name, from, to)
	return n, g.wrap(err)
}

func (g guard) SeriesNames(ctx context.Context, host string) ([]subsecond.SeriesExtent, error) {
	es, err := g.b.SeriesNames(ctx, host)
	return es, g.wrap(err)
}

func (g guard) DeleteSeries(ctx context.Context, host string, before int64) error {
	return g.wrap(g.b.DeleteSeries(ctx, host, before))
}

func (g guard) SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string, max int) error {
	return g.wrap(g.b.SetHostLabels(ctx, host, set, remove, max))
}

func (g guard) HostLabels(ctx context.Context) (map[string][]subsecond.Label, map[string]IndexRow, error) {
	ls, newest, err := g.b.HostLabels(ctx)
	return ls, newest, g.wrap(err)
}

func (g guard) HostLabelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, map[string]IndexRow, error) {
	ls, newest, err := g.b.HostLabelsOf(ctx, hosts)
	return ls, newest, g.wrap(err)
}

func (g guard) HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error) {
	ts, err := g.b.HostTotals(ctx, after, limit)
	return ts, g.wrap(err)
}

func (g guard) HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error) {
	ps, err := g.b.HostProfiles(ctx, host)
	return ps, g.wrap(err)
}

func (g guard) WriteIndex(ctx context.Context, id string, ix *Index) (bool, error) {
	ok, err := g.b.WriteIndex(ctx, id, ix)
	return ok, g.wrap(err)
}

func (g guard) Unindexed(ctx context.Context) ([]string, error) {
	ids, err := g.b.Unindexed(ctx)
	return ids, g.wrap(err)
}

func (g guard) IndexedCaptures(ctx context.Context, from, to int64, limit int) ([]IndexRow, error) {
	rows, err := g.b.IndexedCaptures(ctx, from, to, limit)
	return rows, g.wrap(err)
}

func (g guard) IndexNames(ctx context.Context, kind subsecond.NameKind) ([]IndexName, error) {
	ns, err := g.b.IndexNames(ctx, kind)
	return ns, g.wrap(err)
}

func (g guard) IndexCounts(ctx context.Context, names []int64, from, to int64) ([]CountRow, error) {
	rows, err := g.b.IndexCounts(ctx, names, from, to)
	return rows, g.wrap(err)
}

func (g guard) IndexNameBlobs(ctx context.Context, from, to int64, fn func(id string, start, end int64, names []byte) error) error {
	return g.wrap(g.b.IndexNameBlobs(ctx, from, to, fn))
}

func (g guard) DropIndexDays(ctx context.Context, before int64) (int, error) {
	n, err := g.b.DropIndexDays(ctx, before)
	return n, g.wrap(err)
}

func (g guard) Ready(ctx context.Context) error { return g.wrap(g.b.Ready(ctx)) }

func (g guard) Unavailable(err error) bool { return g.b.Unavailable(err) }

func (g guard) Close() error { return g.b.Close() }

// guardImport is an Import whose outage errors wrap
// subsecond.ErrUnavailable; the import is still all or nothing.
type guardImport struct {
	im Import
	g  guard
}

func (i guardImport) WriteSegments(ctx context.Context, segs []Segment) error {
	return i.g.wrap(i.im.WriteSegments(ctx, segs))
}

func (i guardImport) WriteChunks(ctx context.Context, chunks []Chunk) error {
	return i.g.wrap(i.im.WriteChunks(ctx, chunks))
}

func (i guardImport) Commit(ctx context.Context, rec *Record) error {
	return i.g.wrap(i.im.Commit(ctx, rec))
}

func (i guardImport) Abort() error { return i.im.Abort() }
