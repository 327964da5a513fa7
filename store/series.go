package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// MaxSeriesPoints bounds the points of one AddSeries call: 10 M, 12 hours
// of 96 CPUs' eight cpu.* kinds at one a second is 33 M, sent in batches.
const MaxSeriesPoints = 10_000_000

// MaxLaneBuckets bounds the buckets of a Lane.
const MaxLaneBuckets = 100_000

// AddSeries stores series of host and returns how many of their points
// were new: a point at the time of a stored point of the same series is
// not stored again (the stored value stays), so sending a batch twice
// stores it once, and batches may come in any order. Values are kept to
// their kind's precision (see SeriesBlockSpan's file): a percentage to
// 0.01, a rate to 0.001, counts and bytes to whole numbers (load1 to
// 0.01).
//
// A host CheckHost refuses is refused with an error wrapping
// subsecond.ErrInvalid, as is a series of an unknown kind, of a CPU below
// -1 (Unknown) or of a CPU other than Unknown for a kind that is not per
// CPU, with a label longer than subsecond.MaxSeriesLabel bytes, not UTF-8
// or holding a control character, or with a point whose time is not
// positive or not after the previous point's, or whose value is not finite
// or too large for its kind's precision (beyond 2^53 steps); the error
// names the series and the point, counted from 1. More than
// MaxSeriesPoints points in one call are refused with an error wrapping
// subsecond.ErrTooLarge. Nothing is stored unless AddSeries returns a nil
// error: it is one transaction.
//
// A host keeps at most subsecond.MaxHostSeries distinct series: of a call
// that would take it past them, the points of the series it has are
// stored and the new series beyond the bound are not (see
// subsecond.SeriesAdded).
func (s *Store) AddSeries(ctx context.Context, host string, ss []subsecond.Series) (subsecond.SeriesAdded, error) {
	return s.addSeries(ctx, host, ss, subsecond.MaxHostSeries)
}

func (s *Store) addSeries(ctx context.Context, host string, ss []subsecond.Series, keep int) (subsecond.SeriesAdded, error) {
	blocks, err := seriesBlocks(host, ss)
	if err != nil {
		return subsecond.SeriesAdded{}, fmt.Errorf("add series: %w", err)
	}
	if len(blocks) == 0 {
		return subsecond.SeriesAdded{}, nil
	}
	n, err := s.b.AddSeries(ctx, host, blocks, keep)
	if err != nil {
		return subsecond.SeriesAdded{}, fmt.Errorf("add series: %w", err)
	}
	return n, nil
}

// seriesBlocks checks ss (see AddSeries) and returns its points as blocks,
// in the order of (Name, CPU, Label, Start). Points of series with the
// same key are merged, the first one's value kept at an equal time.
func seriesBlocks(host string, ss []subsecond.Series) ([]SeriesBlock, error) {
	if err := query.CheckHost(host); err != nil {
		return nil, err
	}
	total := 0
	for _, sr := range ss {
		total += len(sr.Points)
	}
	if total > MaxSeriesPoints {
		return nil, fmt.Errorf("%d points is more than the %d one call may store: %w", total, MaxSeriesPoints, subsecond.ErrTooLarge)
	}
	type blockKey struct {
		key   subsecond.SeriesKey
		start int64
	}
	type pending struct {
		ts, qs []int64
		dec    int
		sorted bool
	}
	byBlock := map[blockKey]*pending{}
	for i := range ss {
		sr := &ss[i]
		if err := checkSeries(sr); err != nil {
			return nil, fmt.Errorf("series %d (%s): %w", i+1, sr.Key(), err)
		}
		kind, _ := subsecond.Kind(sr.Name)
		dec := seriesDecimals(kind)
		var p *pending
		var prev int64
		for j, pt := range sr.Points {
			if pt.Time <= prev {
				what := "not positive"
				if j > 0 {
					what = "not after the previous point's"
				}
				return nil, fmt.Errorf("series %d (%s): point %d: time %d is %s: %w", i+1, sr.Key(), j+1, pt.Time, what, subsecond.ErrInvalid)
			}
			prev = pt.Time
			q, ok := quantize(pt.Value, dec)
			if !ok {
				return nil, fmt.Errorf("series %d (%s): point %d: value %v is not a finite number within ±%.0f: %w", i+1, sr.Key(), j+1, pt.Value, maxQuantized/pow10[dec], subsecond.ErrInvalid)
			}
			bk := blockKey{sr.Key(), seriesBlockStart(pt.Time)}
			if p == nil || seriesBlockStart(pt.Time) != seriesBlockStart(sr.Points[j-1].Time) {
				if p = byBlock[bk]; p == nil {
					p = &pending{dec: dec, sorted: true}
					byBlock[bk] = p
				} else {
					p.sorted = false // a second series of the same key
				}
			}
			p.ts, p.qs = append(p.ts, pt.Time), append(p.qs, q)
		}
	}
	keys := make([]blockKey, 0, len(byBlock))
	for k := range byBlock {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b blockKey) int {
		return cmp.Or(cmp.Compare(a.key.Name, b.key.Name), cmp.Compare(a.key.CPU, b.key.CPU),
			cmp.Compare(a.key.Label, b.key.Label), cmp.Compare(a.start, b.start))
	})
	blocks := make([]SeriesBlock, 0, len(keys))
	for _, k := range keys {
		p := byBlock[k]
		if !p.sorted {
			p.ts, p.qs = sortPoints(p.ts, p.qs)
		}
		if len(p.ts) > maxBlockPoints {
			return nil, fmt.Errorf("series %s: more than %d points in the %d s from %d: %w", k.key, maxBlockPoints, SeriesBlockSpan/1e9, k.start, subsecond.ErrTooLarge)
		}
		blocks = append(blocks, seriesBlock(k.key, k.start, p.ts, p.qs, p.dec))
	}
	return blocks, nil
}

// sortPoints sorts points by time, stably, keeping the first of those at
// an equal time.
func sortPoints(ts, qs []int64) ([]int64, []int64) {
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ts[a], ts[b]) })
	nts, nqs := make([]int64, 0, len(ts)), make([]int64, 0, len(ts))
	for _, i := range idx {
		if len(nts) > 0 && nts[len(nts)-1] == ts[i] {
			continue
		}
		nts, nqs = append(nts, ts[i]), append(nqs, qs[i])
	}
	return nts, nqs
}

// checkSeries checks s's kind, CPU and label.
func checkSeries(s *subsecond.Series) error {
	kind, ok := subsecond.Kind(s.Name)
	if !ok {
		return fmt.Errorf("no kind of series is named %q: %w", s.Name, subsecond.ErrInvalid)
	}
	if s.CPU < subsecond.Unknown {
		return fmt.Errorf("CPU %d is below %d, the host as a whole: %w", s.CPU, subsecond.Unknown, subsecond.ErrInvalid)
	}
	if !kind.PerCPU && s.CPU != subsecond.Unknown {
		return fmt.Errorf("%s is measured for the host as a whole, not CPU %d: %w", s.Name, s.CPU, subsecond.ErrInvalid)
	}
	if len(s.Label) > subsecond.MaxSeriesLabel || !utf8.ValidString(s.Label) {
		return fmt.Errorf("the label must be at most %d bytes of UTF-8: %w", subsecond.MaxSeriesLabel, subsecond.ErrInvalid)
	}
	for _, r := range s.Label {
		if unicode.IsControl(r) {
			return fmt.Errorf("the label holds a control character (%U): %w", r, subsecond.ErrInvalid)
		}
	}
	return nil
}

// Series returns the points in [from, to) (Unix ns) of host's series of
// kind name, one Series per CPU and label that has any, ordered by CPU
// (Unknown first) and label, each one's points in time order; an empty,
// non-nil slice when there are none. An unknown kind is refused with an
// error wrapping subsecond.ErrInvalid; a range whose blocks hold more than
// Options.MaxSeriesRead points, counted before any is read, with one
// wrapping subsecond.ErrTooLarge.
func (s *Store) Series(ctx context.Context, host, name string, from, to int64) ([]subsecond.Series, error) {
	if _, ok := subsecond.Kind(name); !ok {
		return nil, fmt.Errorf("series: no kind of series is named %q: %w", name, subsecond.ErrInvalid)
	}
	n, err := s.b.SeriesPoints(ctx, host, name, from, to)
	if err != nil {
		return nil, fmt.Errorf("series %s of %s: %w", name, host, err)
	}
	if n > s.opt.MaxSeriesRead {
		return nil, fmt.Errorf("host %q's %s series hold %d points from %s to %s, more than the %d one request may read: narrow the range (from, to; for explain, match fewer markers): %w",
			host, name, n, query.FormatWallTime(from), query.FormatWallTime(to), s.opt.MaxSeriesRead, subsecond.ErrTooLarge)
	}
	blocks, err := s.b.SeriesBlocks(ctx, host, name, from, to)
	if err != nil {
		return nil, fmt.Errorf("series %s of %s: %w", name, host, err)
	}
	sortBlocks(blocks)
	out := []subsecond.Series{}
	var p seriesPoints
	var buf []byte
	for i := range blocks {
		b := &blocks[i]
		if buf, err = decodeSeries(b.Data, &p, buf); err != nil {
			return nil, fmt.Errorf("series %s of %s: block %d: %w", subsecond.SeriesKey{Name: name, CPU: b.CPU, Label: b.Label}, host, b.Start, err)
		}
		if n := len(out); n == 0 || out[n-1].CPU != b.CPU || out[n-1].Label != b.Label {
			out = append(out, subsecond.Series{Name: name, CPU: b.CPU, Label: b.Label})
		}
		sr := &out[len(out)-1]
		for j, t := range p.ts {
			if t >= from && t < to {
				sr.Points = append(sr.Points, subsecond.Point{Time: t, Value: p.value(j)})
			}
		}
	}
	// A series whose blocks overlap [from, to) holds a point in it.
	return out, nil
}

// sortBlocks sorts blocks of one kind by CPU, label and start.
func sortBlocks(blocks []SeriesBlock) {
	slices.SortFunc(blocks, func(a, b SeriesBlock) int {
		return cmp.Or(cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Label, b.Label), cmp.Compare(a.Start, b.Start))
	})
}

// Lane returns host's series of kind name over [from, to) (Unix ns) in
// buckets of bucket ns (see subsecond.Lane): for each series that has
// points in the range, ordered by CPU (Unknown first) and label, the mean
// of its points in each bucket, NaN where it has none. A rate's omitted
// zero points are not counted: its mean is of the points present. A block
// whose points all lie in one bucket is counted by its stored sum without
// decoding it; the others are decoded on every core. An unknown kind, an
// empty range or a bucket that is not positive or makes more than
// MaxLaneBuckets buckets is refused with an error wrapping
// subsecond.ErrInvalid.
func (s *Store) Lane(ctx context.Context, host, name string, from, to, bucket int64) (*subsecond.Lane, error) {
	kind, ok := subsecond.Kind(name)
	if !ok {
		return nil, fmt.Errorf("lane: no kind of series is named %q: %w", name, subsecond.ErrInvalid)
	}
	if to <= from || bucket <= 0 {
		return nil, fmt.Errorf("lane: the range [%d, %d) in buckets of %d ns: %w", from, to, bucket, subsecond.ErrInvalid)
	}
	n := subsecond.Buckets(from, to, bucket)
	if n > MaxLaneBuckets {
		return nil, fmt.Errorf("lane: %d buckets is more than the %d a lane may have: %w", n, MaxLaneBuckets, subsecond.ErrInvalid)
	}
	blocks, err := s.b.SeriesBlocks(ctx, host, name, from, to)
	if err != nil {
		return nil, fmt.Errorf("lane %s of %s: %w", name, host, err)
	}
	sortBlocks(blocks)
	// One run of blocks per series.
	var runs [][]SeriesBlock
	for i := 0; i < len(blocks); {
		j := i + 1
		for j < len(blocks) && blocks[j].CPU == blocks[i].CPU && blocks[j].Label == blocks[i].Label {
			j++
		}
		runs = append(runs, blocks[i:j])
		i = j
	}
	lane := &subsecond.Lane{Name: name, Unit: kind.Unit, From: from, To: to, Bucket: bucket,
		Series: make([]subsecond.LaneSeries, len(runs))}
	errs := make([]error, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(s.opt.Workers, len(runs)) {
		wg.Go(func() {
			var p seriesPoints
			var buf []byte
			sum, cnt := make([]float64, n), make([]int64, n)
			for k := range next {
				clear(sum)
				clear(cnt)
				if buf, errs[k] = laneSeries(runs[k], from, to, bucket, sum, cnt, &p, buf); errs[k] != nil {
					continue
				}
				vs := make(subsecond.LaneValues, n)
				for i := range vs {
					vs[i] = math.NaN()
					if cnt[i] > 0 {
						vs[i] = sum[i] / float64(cnt[i])
					}
				}
				lane.Series[k] = subsecond.LaneSeries{CPU: runs[k][0].CPU, Label: runs[k][0].Label, Values: vs}
			}
		})
	}
	for k := range runs {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lane %s of %s: %w", name, host, err)
	}
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("lane %s of %s: %s block: %w", name, host, subsecond.SeriesKey{Name: name, CPU: runs[k][0].CPU, Label: runs[k][0].Label}, err)
		}
	}
	return lane, nil
}

// laneSeries adds the points in [from, to) of one series' blocks to the
// sums and counts of their buckets.
func laneSeries(blocks []SeriesBlock, from, to, bucket int64, sum []float64, cnt []int64, p *seriesPoints, buf []byte) ([]byte, error) {
	for i := range blocks {
		b := &blocks[i]
		if b.First >= from && b.Last < to && b.Points > 0 {
			if k := bucketOf(b.First, from, bucket); k == bucketOf(b.Last, from, bucket) {
				sum[k] += b.Sum
				cnt[k] += int64(b.Points)
				continue
			}
		}
		var err error
		if buf, err = decodeSeries(b.Data, p, buf); err != nil {
			return buf, fmt.Errorf("%d: %w", b.Start, err)
		}
		// Points are in time order: a bucket's are a run, summed on the
		// block's grid and added when the run ends.
		scale := pow10[p.dec]
		k, end := int64(-1), uint64(0) // the run's bucket, its end after from
		var qsum float64               // of integers, exact below 2^53
		var qn int64
		flush := func() {
			if qn > 0 {
				sum[k] += qsum / scale
				cnt[k] += qn
			}
		}
		for j, t := range p.ts {
			if t < from {
				continue
			}
			if t >= to {
				break
			}
			if off := uint64(t - from); k < 0 || off >= end {
				flush()
				k, qsum, qn = int64(off/uint64(bucket)), 0, 0
				end = uint64(k+1) * uint64(bucket)
				if end/uint64(bucket) != uint64(k+1) { // past 2^64: the last bucket
					end = math.MaxUint64
				}
			}
			qsum += float64(p.qs[j])
			qn++
		}
		flush()
	}
	return buf, nil
}

// bucketOf returns the bucket of time t ≥ from; t − from may exceed
// MaxInt64.
func bucketOf(t, from, bucket int64) int64 { return int64(uint64(t-from) / uint64(bucket)) }

// SeriesNames returns the series stored for host with the times of their
// first and last points, in the order of subsecond.SeriesKinds, then by
// CPU (Unknown first) and label.
func (s *Store) SeriesNames(ctx context.Context, host string) ([]subsecond.SeriesExtent, error) {
	es, err := s.b.SeriesNames(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("series of %s: %w", host, err)
	}
	SortSeriesKeys(es, func(e subsecond.SeriesExtent) subsecond.SeriesKey { return e.Key() })
	return es, nil
}

// SortSeriesKeys sorts xs by their series' keys: in the order of
// subsecond.SeriesKinds, then by CPU (Unknown first) and label.
func SortSeriesKeys[T any](xs []T, key func(T) subsecond.SeriesKey) {
	order := func(name string) int {
		return slices.IndexFunc(subsecond.SeriesKinds, func(k subsecond.SeriesKind) bool { return k.Name == name })
	}
	slices.SortFunc(xs, func(x, y T) int {
		a, b := key(x), key(y)
		return cmp.Or(cmp.Compare(order(a.Name), order(b.Name)), cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Label, b.Label))
	})
}

// PruneSeries deletes the series of host, or of every host when host is
// "", that lie before before (Unix ns), as the host's captures are pruned:
// whole blocks, those whose points all lie before it, so that up to a
// block's span (SeriesBlockSpan) before it may stay.
func (s *Store) PruneSeries(ctx context.Context, host string, before int64) error {
	if host != "" {
		if err := query.CheckHost(host); err != nil {
			return fmt.Errorf("prune series: %w", err)
		}
	}
	if err := s.b.DeleteSeries(ctx, host, before); err != nil {
		return fmt.Errorf("prune series: %w", err)
	}
	return nil
}
