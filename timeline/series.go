package timeline

import (
	"context"
	"fmt"
	"math"

	"github.com/subsecond/subsecond"
)

// LaneSource reads a host's series (the recorder's state sampler,
// sysstat's imports) in buckets: every series of kind name with points in
// [from, to), Unix ns, the mean of its points in each bucket of [from +
// k·bucket, from + (k+1)·bucket), NaN where it has none (store.Store.Lane).
type LaneSource interface {
	Lane(ctx context.Context, host, name string, from, to, bucket int64) (*subsecond.Lane, error)
}

// SeriesLane is the answer of GET /api/hosts/{host}/series and what
// `subsecond state --format json` prints: one kind of a host's series
// (subsecond.SeriesKinds) over the wall-clock range [From, To), Unix ns, in
// buckets of Bucket ns: the host page's lane under its cores map, on the
// same columns as the map (Timeline) for the same span.
type SeriesLane struct {
	Host   string `json:"host"`
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	PerCPU bool   `json:"per_cpu"`
	Help   string `json:"help"`
	From   int64  `json:"from_ns"`
	To     int64  `json:"to_ns"`
	Bucket int64  `json:"bucket_ns"`
	// Series holds one entry per series of the kind with a point in the
	// range: by CPU (the host's, -1, first) and then label.
	Series []LaneSeries `json:"series"`
}

// LaneSeries is one series of a SeriesLane.
type LaneSeries struct {
	CPU   int32  `json:"cpu"`
	Label string `json:"label,omitempty"`
	// Values holds one value per bucket of the lane: the mean of the
	// series' points in the bucket; null where none fell in it (nothing
	// was recorded then). A rate omits its zero points, so between its
	// first and last points a bucket without one is 0.
	Values []*float64 `json:"values"`
	// Max is the largest of Values, 0 when all are null.
	Max float64 `json:"max"`
}

// Lane returns host's series of kind name over span, a point at time t
// counted in the column holding t − 1 ns (a point's value covers the
// interval that ends at its time, see subsecond.Series), so that a lane
// and the cores map of the same span put a second's samples and its state
// in one column. The span's default range and bucket are the cores map's
// (Timeline): its session, about 1,000 columns.
func Lane(ctx context.Context, src Source, ls LaneSource, host, name string, span Span) (*SeriesLane, error) {
	kind, ok := subsecond.Kind(name)
	if !ok {
		return nil, fmt.Errorf("%q is not a kind of host series: %w", name, subsecond.ErrInvalid)
	}
	sp, err := plan(ctx, src, host, span)
	if err != nil {
		return nil, err
	}
	l := &SeriesLane{Host: host, Name: name, Unit: kind.Unit, PerCPU: kind.PerCPU, Help: kind.Help,
		From: sp.from, To: sp.to, Bucket: sp.bucket, Series: []LaneSeries{}}
	// Shifted by 1 ns: a point at the end of a column is the column's.
	got, err := ls.Lane(ctx, host, name, sp.from+1, sp.from+1+sp.buckets*sp.bucket, sp.bucket)
	if err != nil {
		return nil, err
	}
	for _, s := range got.Series {
		ls := LaneSeries{CPU: s.CPU, Label: s.Label, Values: make([]*float64, sp.buckets)}
		vals := make([]float64, sp.buckets)
		first, last := -1, -1
		for b := range min(len(s.Values), int(sp.buckets)) {
			v := s.Values[b]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			vals[b] = v
			ls.Values[b] = &vals[b]
			ls.Max = max(ls.Max, v)
			if first < 0 {
				first = b
			}
			last = b
		}
		if first < 0 {
			continue
		}
		if kind.Unit == "/s" {
			// A rate omits its zeros: between its first and last
			// points, a column without one is a zero.
			for b := first; b <= last; b++ {
				if ls.Values[b] == nil {
					ls.Values[b] = &vals[b]
				}
			}
		}
		l.Series = append(l.Series, ls)
	}
	return l, nil
}
