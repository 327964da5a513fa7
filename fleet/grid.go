package fleet

import (
	"context"
	"math"

	"github.com/subsecond/subsecond"
)

// series is one host's counts per bucket of a range.
type series struct {
	samples, busy, matched int64
	bSamples, bMatched     []int64
	bPeak                  []float64 // highest PeakCore
}

// seriesOf adds up h's slots in [opt.From, opt.To) by bucket (see Map);
// matched, when not nil, holds the matched samples per slot by capture ID.
func seriesOf(h *host, opt *Options, matched map[string][]int64) series {
	B, w := opt.Buckets, opt.bucketWidth()
	s := series{bSamples: make([]int64, B), bPeak: make([]float64, B)}
	if matched != nil {
		s.bMatched = make([]int64, B)
	}
	for ci := range h.caps {
		c := &h.caps[ci]
		m := matched[c.ID]
		lo, hi := slotsIn(c, opt.From, opt.To)
		for i := lo; i < hi; i++ {
			sl := &c.Slots[i]
			if sl.Samples <= 0 {
				continue
			}
			b := int((c.Start + int64(i)*subsecond.IndexSlot - opt.From) / w)
			s.samples += sl.Samples
			s.busy += sl.Busy
			s.bSamples[b] += sl.Samples
			s.bPeak[b] = max(s.bPeak[b], sl.PeakCore)
			if matched != nil {
				k := min(at(m, i), sl.Samples)
				s.matched += k
				s.bMatched[b] += k
			}
		}
	}
	return s
}

// values returns the measure per bucket, NaN without samples: the matched
// share when s counts matches, else the highest PeakCore.
func (s *series) values() []float64 {
	out := make([]float64, len(s.bSamples))
	for b, n := range s.bSamples {
		switch {
		case n == 0:
			out[b] = math.NaN()
		case s.bMatched != nil:
			out[b] = float64(s.bMatched[b]) / float64(n)
		default:
			out[b] = s.bPeak[b]
		}
	}
	return out
}

// peak returns the highest of vs and the start of its bucket, the earliest
// on ties; 0 and from when vs holds no number.
func peak(vs []float64, from, w int64) (float64, int64) {
	best, bi := math.Inf(-1), -1
	for b, v := range vs {
		if v > best {
			best, bi = v, b
		}
	}
	if bi < 0 {
		return 0, from
	}
	return best, from + int64(bi)*w
}

// Map returns the hosts × time grid of the hosts opt selects: the hosts
// with an indexed capture in [From, To) carrying every label of
// opt.Labels, by their value of opt.Group and then by name. Column b
// covers [From + b·Bucket, +Bucket), Bucket being (To−From)/Buckets
// rounded up (the last column ends at To); a slot of the index (see
// subsecond.IndexSlot) counts in the column holding its start, and only
// slots starting in [From, To) count. A cell is the highest PeakCore of the
// host's slots in its column, or with opt.Match the matched names' samples
// over all samples there (summed over the names, so a sample whose stack
// holds two matched functions counts twice, capped at the slot's samples).
// A row's Share is Busy/Samples over the range without a Match.
func Map(ctx context.Context, src Source, opt Options) (*Grid, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	hosts, err := selectHosts(ctx, src, &opt)
	if err != nil {
		return nil, err
	}
	var matched map[string][]int64
	measure := "peak_core"
	if opt.Match != nil {
		if matched, _, err = matchedSlots(ctx, src, &opt); err != nil {
			return nil, err
		}
		measure = opt.Kind.String() + "=" + opt.Match.String()
	}
	w := opt.bucketWidth()
	g := &Grid{From: opt.From, To: opt.To, Bucket: w, Measure: measure, Rows: make([]Row, 0, len(hosts))}
	for i := range hosts {
		h := &hosts[i]
		s := seriesOf(h, &opt, matched)
		r := Row{Host: h.name, Labels: h.labels, Group: h.group, Values: s.values(), Samples: s.samples, Markers: []int64{}}
		if s.samples > 0 {
			if matched != nil {
				r.Share = float64(s.matched) / float64(s.samples)
			} else {
				r.Share = float64(s.busy) / float64(s.samples)
			}
		}
		r.Peak, r.PeakAt = peak(r.Values, opt.From, w)
		ms, err := src.Markers(ctx, h.name, opt.From, opt.To)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.Time >= opt.From && m.Time < opt.To {
				r.Markers = append(r.Markers, m.Time)
			}
		}
		g.Rows = append(g.Rows, r)
	}
	return g, nil
}
