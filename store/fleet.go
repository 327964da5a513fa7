package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// The fleet index (see fleetindex.go) is written for each profile that
// has a wall-clock anchor, just after its import commits (indexer.go), and
// read by the fleet views through the methods below (fleet.Source), each of
// which waits first for the writes in flight (Indexed). Its names are
// those of the capture's tables as perf printed them: a function is a
// frame's symbol, a call edge "caller;callee" of two adjacent frames'
// symbols, root-first.

// checkLabels checks labels to be set on a host: each a valid label
// (subsecond.LabelProblem), no key twice, at most subsecond.MaxLabels.
func checkLabels(labels []subsecond.Label) error {
	if len(labels) > subsecond.MaxLabels {
		return fmt.Errorf("%d labels, more than the %d a host may have: %w", len(labels), subsecond.MaxLabels, subsecond.ErrInvalid)
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if p := subsecond.LabelProblem(l); p != "" {
			return fmt.Errorf("label %q: %s: %w", l.String(), p, subsecond.ErrInvalid)
		}
		if seen[l.Key] {
			return fmt.Errorf("label %q: the key %s is given twice: %w", l.String(), l.Key, subsecond.ErrInvalid)
		}
		seen[l.Key] = true
	}
	return nil
}

// SetHostLabels sets the labels set on host and removes those whose keys
// are in remove, in one transaction. Each label is checked
// (subsecond.LabelProblem); a host ends with at most subsecond.MaxLabels.
// Errors about the labels wrap subsecond.ErrInvalid and name the label.
func (s *Store) SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string) error {
	if err := query.CheckHost(host); err != nil {
		return fmt.Errorf("label host %s: %w", host, err)
	}
	if err := checkLabels(set); err != nil {
		return fmt.Errorf("label host %s: %w", host, err)
	}
	for _, k := range remove {
		if len(k) > subsecond.MaxLabelKey {
			return fmt.Errorf("label host %s: remove %.20q…: the key is longer than %d bytes: %w", host, k, subsecond.MaxLabelKey, subsecond.ErrInvalid)
		}
	}
	err := s.b.SetHostLabels(ctx, host, set, remove, subsecond.MaxLabels)
	s.changes.Add(1)
	if err != nil {
		return fmt.Errorf("label host %s: %w", host, err)
	}
	return nil
}

// HostLabels returns every host's labels by key: those set, and those
// derived from its newest indexed capture (subsecond.LabelKernel, LabelCPUs,
// LabelCPUModel) unless one with the key is set.
func (s *Store) HostLabels(ctx context.Context) (map[string][]subsecond.Label, error) {
	if err := s.Indexed(ctx); err != nil {
		return nil, fmt.Errorf("host labels: %w", err)
	}
	set, newest, err := s.b.HostLabels(ctx)
	if err != nil {
		return nil, fmt.Errorf("host labels: %w", err)
	}
	return withDerived(set, newest), nil
}

// withDerived returns the labels set on each host with those derived
// from its newest indexed capture (see HostLabels), by key.
func withDerived(set map[string][]subsecond.Label, newest map[string]IndexRow) map[string][]subsecond.Label {
	out := map[string][]subsecond.Label{}
	for host, ls := range set {
		out[host] = append(out[host], ls...)
	}
	for host, r := range newest {
		derived := []subsecond.Label{{Key: subsecond.LabelKernel, Value: r.Kernel}, {Key: subsecond.LabelCPUModel, Value: r.CPUModel}}
		if r.CPUs > 0 {
			derived = append(derived, subsecond.Label{Key: subsecond.LabelCPUs, Value: strconv.Itoa(r.CPUs)})
		}
		for _, l := range derived {
			if subsecond.LabelProblem(l) != "" || slices.ContainsFunc(set[host], func(s subsecond.Label) bool { return s.Key == l.Key }) {
				continue
			}
			out[host] = append(out[host], l)
		}
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b subsecond.Label) int { return cmp.Compare(a.Key, b.Key) })
	}
	return out
}

// IndexedCaptures: see fleet.Source.
func (s *Store) IndexedCaptures(ctx context.Context, from, to int64) ([]subsecond.IndexedCapture, error) {
	if err := s.Indexed(ctx); err != nil {
		return nil, fmt.Errorf("indexed captures: %w", err)
	}
	rows, err := s.b.IndexedCaptures(ctx, from, to, subsecond.MaxIndexedCaptures+1)
	if err != nil {
		return nil, fmt.Errorf("indexed captures: %w", err)
	}
	if len(rows) > subsecond.MaxIndexedCaptures {
		return nil, fmt.Errorf("more than %d captures lie in %s: choose a shorter range: %w",
			subsecond.MaxIndexedCaptures, wallRange(from, to), subsecond.ErrTooLarge)
	}
	out := make([]subsecond.IndexedCapture, 0, len(rows))
	for _, r := range rows {
		slots, err := decodeSlotTotals(r.Slots)
		if err != nil {
			return nil, fmt.Errorf("indexed capture %s: %w", r.ID, err)
		}
		out = append(out, subsecond.IndexedCapture{ID: r.ID, Host: r.Host, Start: r.Start, Boot: r.Boot,
			Kernel: r.Kernel, CPUModel: r.CPUModel, CPUs: r.CPUs, Slots: slots})
	}
	return out, nil
}

// wallRange writes [from, to) (Unix ns) for an error message.
func wallRange(from, to int64) string {
	f := func(t int64) string { return time.Unix(0, t).UTC().Format(time.RFC3339) }
	return f(from) + " to " + f(to)
}

// checkKind fails unless k is one of the indexed name kinds.
func checkKind(k subsecond.NameKind) error {
	if k < subsecond.NameComm || k > subsecond.NameEdge {
		return query.Invalidf("kind", "%s is not comm, function or stack", k)
	}
	return nil
}

// NameCounts: see fleet.Source. The dictionary of kind is read and
// matched whole, then only the matching names' rows; the counts come by
// name, then capture.
func (s *Store) NameCounts(ctx context.Context, kind subsecond.NameKind, match *regexp.Regexp, from, to int64) ([]subsecond.NameCount, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	if err := s.Indexed(ctx); err != nil {
		return nil, fmt.Errorf("name counts: %w", err)
	}
	names, err := s.b.IndexNames(ctx, kind)
	if err != nil {
		return nil, fmt.Errorf("name counts: %w", err)
	}
	byID := map[int64]string{}
	var ids []int64
	for _, n := range names {
		if !match.MatchString(n.Name) {
			continue
		}
		if len(ids) == subsecond.MaxIndexNames {
			return nil, fmt.Errorf("more than %d %s names match %q: narrow the expression: %w",
				subsecond.MaxIndexNames, kind, match.String(), subsecond.ErrTooLarge)
		}
		byID[n.ID] = n.Name
		ids = append(ids, n.ID)
	}
	out := []subsecond.NameCount{}
	if len(ids) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	rows, err := s.indexCounts(ctx, kind, ids, from, to)
	if err != nil {
		return nil, fmt.Errorf("name counts: %w", err)
	}
	for _, r := range rows {
		slots, err := decodeSlotCounts(r.Slots)
		if err != nil {
			return nil, fmt.Errorf("name counts of capture %s: %w", r.Capture, err)
		}
		out = append(out, subsecond.NameCount{Capture: r.Capture, Kind: kind, Name: byID[r.NameID], Slots: slots})
	}
	slices.SortFunc(out, func(a, b subsecond.NameCount) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Capture, b.Capture))
	})
	return out, nil
}

// indexCounts returns the rows of the names of kind with the given IDs
// (sorted) in the captures with a slot in [from, to): from fleet_counts,
// which holds commands and functions, or for call edges from the
// captures' names blobs, one capture at a time.
func (s *Store) indexCounts(ctx context.Context, kind subsecond.NameKind, ids []int64, from, to int64) ([]CountRow, error) {
	if kind != subsecond.NameEdge {
		return s.b.IndexCounts(ctx, ids, from, to)
	}
	var rows []CountRow
	err := s.b.IndexNameBlobs(ctx, from, to, func(capture string, _, _ int64, names []byte) error {
		return EachName(names, func(id, _ int64, slots []byte) error {
			if _, ok := slices.BinarySearch(ids, id); ok {
				rows = append(rows, CountRow{Capture: capture, NameID: id, Slots: slices.Clone(slots)})
			}
			return nil
		})
	})
	return rows, err
}

// NameTotals: see fleet.Source. It reads the captures' names blobs twice,
// one capture at a time: first summing each name's samples, then, for the
// names kept, their counts per capture; memory grows with the names, not
// with the captures.
func (s *Store) NameTotals(ctx context.Context, q subsecond.TotalsQuery) ([]subsecond.NameCount, error) {
	// each calls fn with every name of the captures q counts and its
	// samples in the slots starting in [q.From, q.To).
	each := func(fn func(capture string, id, n int64)) error {
		return s.b.IndexNameBlobs(ctx, q.From, q.To, func(capture string, start, end int64, names []byte) error {
			if q.Captures != nil && !q.Captures[capture] {
				return nil
			}
			// Every slot of a capture wholly inside the range counts: its
			// names' totals, without their slot counts.
			inside := start >= q.From && end-subsecond.IndexSlot < q.To
			return EachName(names, func(id, total int64, slots []byte) error {
				n := total
				if !inside {
					var err error
					if n, err = slotSum(slots, start, q.From, q.To); err != nil {
						return err
					}
				}
				if n > 0 {
					fn(capture, id, n)
				}
				return nil
			})
		})
	}
	if err := s.Indexed(ctx); err != nil {
		return nil, fmt.Errorf("name totals: %w", err)
	}
	sums := map[int64]int64{}
	if err := each(func(_ string, id, n int64) { sums[id] += n }); err != nil {
		return nil, fmt.Errorf("name totals: %w", err)
	}
	// The names of the kinds asked, kept by q's rules.
	type named struct {
		id   int64
		kind subsecond.NameKind
		name string
	}
	var keys []named
	for _, kind := range []subsecond.NameKind{subsecond.NameComm, subsecond.NameFunction, subsecond.NameEdge} {
		if q.Kind != 0 && kind != q.Kind {
			continue
		}
		names, err := s.b.IndexNames(ctx, kind)
		if err != nil {
			return nil, fmt.Errorf("name totals: %w", err)
		}
		for _, n := range names {
			if sums[n.ID] >= max(q.Min, 1) && (q.Match == nil || q.Match.MatchString(n.Name)) {
				keys = append(keys, named{n.ID, kind, n.Name})
			}
		}
	}
	slices.SortFunc(keys, func(a, b named) int {
		return cmp.Or(cmp.Compare(sums[b.id], sums[a.id]), cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
	if q.Limit > 0 && len(keys) > q.Limit {
		keys = keys[:q.Limit]
	}
	kept := make(map[int64]*named, len(keys))
	for i := range keys {
		kept[keys[i].id] = &keys[i]
	}
	var out []subsecond.NameCount
	err := each(func(capture string, id, n int64) {
		if k := kept[id]; k != nil {
			out = append(out, subsecond.NameCount{Capture: capture, Kind: k.kind, Name: k.name, Slots: []int64{n}})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("name totals: %w", err)
	}
	slices.SortFunc(out, func(a, b subsecond.NameCount) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Capture, b.Capture))
	})
	return out, nil
}

// PruneIndex drops the fleet index of whole days before before (Unix ns)
// whose captures all ended before it, where the database keeps the index
// by day (PostgreSQL), and returns how many days it dropped; the
// profiles' own deletes remove the rest. Pruning calls it before deleting
// the expired profiles, so that those deletes find their index gone.
func (s *Store) PruneIndex(ctx context.Context, before int64) (int, error) {
	if err := s.Indexed(ctx); err != nil {
		return 0, fmt.Errorf("prune fleet index: %w", err)
	}
	n, err := s.b.DropIndexDays(ctx, before)
	s.changes.Add(1)
	if err != nil {
		return 0, fmt.Errorf("prune fleet index: %w", err)
	}
	return n, nil
}

// importIndex returns the fleet index of profile p, which the pipeline
// counted into res as it encoded the chunks: nil when p has no wall
// clock. When the pipeline's slots did not start at T0 it counts the
// encoded chunks again.
func (s *Store) importIndex(ctx context.Context, res *parsed, p *subsecond.Profile, boot int64) (*Index, error) {
	t := indexTables{strings: res.tables.Strings, frames: res.tables.Frames, nodes: res.tables.Nodes}
	m := indexMeta{p: p, boot: boot}
	if ix, ok := buildIndex(res.index, res.base, t, m); ok {
		return ix, nil
	}
	k := newClassifier()
	k.update(res.tables)
	v := k.view()
	lim := limits{strings: len(t.strings), nodes: len(t.nodes), events: len(p.Events), tree: t.nodes}
	acc, base := newIndexAcc(), p.T0()/int64(time.Second)
	cols := subsecond.MakeColumns(0)
	var buf []byte
	err := res.chunks.each(func(batch []Chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		buf, err = indexChunks(acc, batch, base, &v, lim, &cols, buf)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fleet index: %w", err)
	}
	ix, _ := buildIndex([]*indexAcc{acc}, base, t, m)
	return ix, nil
}

// reindexBatch is how many chunks Reindex decodes at a time.
const reindexBatch = 32

// Reindex writes the fleet index of the stored profiles that have none
// (imported before the index existed) and a wall-clock anchor, one
// profile at a time, decoding their chunks a few at a time, and returns
// how many it indexed. A profile deleted meanwhile, or indexed by another
// process, is passed over.
func (s *Store) Reindex(ctx context.Context) (int, error) {
	ids, err := s.b.Unindexed(ctx)
	if err != nil {
		return 0, fmt.Errorf("reindex: %w", err)
	}
	n := 0
	for _, id := range ids {
		ok, err := s.reindex(ctx, id)
		if errors.Is(err, subsecond.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("reindex profile %s: %w", id, err)
		}
		if ok {
			n++
			s.changes.Add(1)
		}
	}
	return n, nil
}

// reindex builds and stores profile id's fleet index from its chunks.
func (s *Store) reindex(ctx context.Context, id string) (bool, error) {
	st, err := s.b.LoadWindow(ctx, id, 1, 0) // the profile and its tables, no chunks
	if err != nil {
		return false, err
	}
	p := &st.Profile
	if !Indexable(p) {
		return false, nil
	}
	c := &subsecond.Capture{Profile: *p}
	if err := decodeSegments(st.Segments, c); err != nil {
		return false, err
	}
	for n := 1; n < len(c.Nodes); n++ {
		if c.Nodes[n].Parent >= int32(n) || c.Nodes[n].Parent < 0 || c.Nodes[n].Frame < 0 || int(c.Nodes[n].Frame) >= len(c.Frames) {
			return false, fmt.Errorf("%w: stack node %d out of order", errCorrupt, n)
		}
	}
	k := newClassifier()
	k.update(&subsecond.Interner{Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes})
	v := k.view()
	sums, err := s.b.Chunks(ctx, id, math.MinInt64, math.MaxInt64, false)
	if err != nil {
		return false, err
	}
	var secs []int64
	for _, ch := range sums.Chunks {
		if len(secs) == 0 || secs[len(secs)-1] != ch.Second {
			secs = append(secs, ch.Second)
		}
	}
	lim := tableLimits(c)
	acc, base := newIndexAcc(), p.T0()/int64(time.Second)
	cols := subsecond.MakeColumns(0)
	var buf []byte
	for i := 0; i < len(secs); i += reindexBatch {
		last := secs[min(i+reindexBatch, len(secs))-1]
		batch, err := s.b.Chunks(ctx, id, secs[i], last, true)
		if err != nil {
			return false, err
		}
		if buf, err = indexChunks(acc, batch.Chunks, base, &v, lim, &cols, buf); err != nil {
			return false, err
		}
	}
	ix, _ := buildIndex([]*indexAcc{acc}, base, indexTables{strings: c.Strings, frames: c.Frames, nodes: c.Nodes}, indexMeta{p: p})
	if ix == nil {
		return false, nil
	}
	return s.b.WriteIndex(ctx, id, ix)
}
