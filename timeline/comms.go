package timeline

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/subsecond/subsecond"
)

// CommReport is the host's CPU share by command over [From, To) in buckets
// of Bucket ns: Series is Comm's share of each bucket's samples (its busy
// samples over all samples of every CPU; null in gaps between captures),
// Baseline its median over the buckets with samples. Jumps lists the
// commands whose share rose furthest above their own baseline, furthest
// first.
type CommReport struct {
	Host     string     `json:"host"`
	From     int64      `json:"from_ns"`
	To       int64      `json:"to_ns"`
	Bucket   int64      `json:"bucket_ns"`
	Buckets  int        `json:"buckets"`
	Comm     string     `json:"comm,omitempty"`
	Series   []*float64 `json:"series,omitempty"`
	Baseline float64    `json:"baseline"`
	Jumps    []Jump     `json:"jumps"`
	// Unfollowed counts the commands seen after Comms followed as many as
	// it may; they are neither ranked nor drawn.
	Unfollowed int `json:"unfollowed,omitempty"`
}

// Jump is one command's peak against its baseline: Baseline is its median
// share over the buckets with samples, Peak its highest and PeakAt that
// bucket's start (Unix ns). Score = (Peak − Baseline) / (spread + 0.1%),
// where spread is the median absolute deviation of its share: a command
// that usually takes 0.5% ± 0.2% and once takes 6.5% scores about 20; a
// job that swings between 50% and 70% scores about 2.
type Jump struct {
	Comm     string  `json:"comm"`
	Baseline float64 `json:"baseline"`
	Peak     float64 `json:"peak"`
	PeakAt   int64   `json:"peak_at_ns"`
	Score    float64 `json:"score"`
}

// Comms returns host's command shares over the span asked for (see
// Span): comm's series (when comm is empty, that of the command that jumps
// furthest) and the limit commands that jump furthest (0: all). It follows
// at most maxComms commands, and no more than maxCommCells over all
// buckets; Unfollowed counts those seen after that.
func Comms(ctx context.Context, src Source, host string, span Span, comm string, limit int) (*CommReport, error) {
	sp, err := plan(ctx, src, host, span)
	if err != nil {
		return nil, err
	}
	from, to, bucket, nb := sp.from, sp.to, sp.bucket, sp.buckets
	follow := max(1, min(maxComms, maxCommCells/nb))
	total := make([]int64, nb)
	busy := map[string][]int64{}
	unfollowed := map[string]bool{}
	err = eachSecond(ctx, src, sp, perComm, nil, func(s *subsecond.ChunkSummary, b int64) error {
		for _, cc := range s.Comms {
			total[b] += cc.Samples
			if cc.Busy == 0 {
				continue
			}
			row := busy[cc.Comm]
			if row == nil {
				if int64(len(busy)) >= follow {
					if len(unfollowed) < maxComms {
						unfollowed[cc.Comm] = true
					}
					continue
				}
				row = make([]int64, nb)
				busy[cc.Comm] = row
			}
			row[b] += cc.Busy
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &CommReport{Host: host, From: from, To: to, Bucket: bucket, Buckets: int(nb), Comm: comm, Jumps: []Jump{}, Unfollowed: len(unfollowed)}
	shares := func(row []int64) []float64 {
		var out []float64
		for b, n := range total {
			if n > 0 {
				out = append(out, float64(row[b])/float64(n))
			}
		}
		return out
	}
	for name, row := range busy {
		sh := shares(row)
		base := median(sh)
		dev := make([]float64, len(sh))
		for i, v := range sh {
			dev[i] = math.Abs(v - base)
		}
		spread := median(dev)
		j := Jump{Comm: name, Baseline: base, Peak: -1}
		for b, n := range total {
			if n > 0 {
				if v := float64(row[b]) / float64(n); v > j.Peak {
					j.Peak, j.PeakAt = v, from+int64(b)*bucket
				}
			}
		}
		j.Score = (j.Peak - base) / (spread + 0.001)
		rep.Jumps = append(rep.Jumps, j)
	}
	slices.SortFunc(rep.Jumps, func(a, b Jump) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Comm, b.Comm)) })
	if comm == "" && len(rep.Jumps) > 0 {
		comm = rep.Jumps[0].Comm
	}
	if comm != "" {
		rep.Comm = comm
		row := busy[comm]
		if row == nil {
			row = make([]int64, nb)
		}
		rep.Series = make([]*float64, nb)
		for b, n := range total {
			if n > 0 {
				v := float64(row[b]) / float64(n)
				rep.Series[b] = &v
			}
		}
		rep.Baseline = median(shares(row))
	}
	if limit > 0 && len(rep.Jumps) > limit {
		rep.Jumps = rep.Jumps[:limit]
	}
	return rep, nil
}

// Bounds of Comms: the most commands it follows, and the most command ×
// bucket counts it keeps (32 MB).
const (
	maxComms     = 10000
	maxCommCells = 4 << 20
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
