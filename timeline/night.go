package timeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/query"
)

// Source is what the host views read: the stored profiles, and one
// capture's rollup of per-second counts. Timeline and Comms read nothing
// else; Hotspots also loads the captures of the episodes it describes.
type Source interface {
	List(ctx context.Context) ([]subsecond.Profile, error)
	Rollup(ctx context.Context, id string) (*subsecond.Rollup, error)
	Capture(ctx context.Context, id string) (*subsecond.Capture, error)
}

// Host is one host and the span of its captures.
type Host struct {
	Host     string `json:"host"`
	Captures int    `json:"captures"`
	Samples  int64  `json:"samples"`
	Start    int64  `json:"start_ns"` // wall-clock Unix ns of the first sample; 0 when no capture has a wall clock
	End      int64  `json:"end_ns"`   // wall-clock Unix ns just after the last sample
	// Approximate is set when some capture's place in time is an estimate.
	Approximate bool `json:"approximate"`
	// Unanchored counts the captures without a wall clock, which the
	// timeline cannot place.
	Unanchored int `json:"unanchored"`
	// Labels are the host's labels, set and derived (see Labelled); none
	// when the server keeps none.
	Labels []subsecond.Label `json:"labels"`
}

// Labelled sets each host's Labels from labels, by host (an empty list
// for a host without any).
func Labelled(hs []Host, labels map[string][]subsecond.Label) {
	for i := range hs {
		hs[i].Labels = labels[hs[i].Host]
		if hs[i].Labels == nil {
			hs[i].Labels = []subsecond.Label{}
		}
	}
}

// Capture is one capture's place on its host's timeline: [Start, End) in
// wall-clock Unix nanoseconds, End one sampling period after its last
// sample.
type Capture struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Start       int64   `json:"start_ns"`
	End         int64   `json:"end_ns"`
	Offset      int64   `json:"offset_ns"` // wall clock minus the capture's own clock
	T0          int64   `json:"t0_ns"`     // the capture's own T0, on its clock
	Source      string  `json:"source"`
	Approximate bool    `json:"approximate"`
	Samples     int64   `json:"samples"`
	CPUs        int     `json:"cpus"`
	Hz          float64 `json:"frequency_hz"`
	Session     int     `json:"session"` // the host's recording session it belongs to, from 1 (see SessionGap)
}

// place returns the captures of ps that have a wall clock, anchored
// together (see Anchor), in time order and numbered by session, and how
// many have none.
func place(ps []subsecond.Profile) (caps []Capture, unanchored int) {
	walls := Anchor(ps)
	for i, p := range ps {
		w := walls[i]
		if !w.Known() || p.Samples == 0 {
			unanchored++
			continue
		}
		caps = append(caps, Capture{ID: p.ID, Name: p.Name, Start: w.Wall(p.Start), End: w.Wall(p.End) + p.Period(),
			Offset: w.Offset, T0: p.T0(), Source: w.Source, Approximate: w.Approximate, Samples: p.Samples, CPUs: p.CPUs, Hz: p.FrequencyHz})
	}
	slices.SortFunc(caps, func(a, b Capture) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID)) })
	numberSessions(caps)
	return caps, unanchored
}

// Hosts lists the hosts of ps, by name.
func Hosts(ps []subsecond.Profile) []Host {
	by := map[string][]subsecond.Profile{}
	for _, p := range ps {
		by[p.Host] = append(by[p.Host], p)
	}
	out := make([]Host, 0, len(by))
	for name, list := range by {
		h := Host{Host: name, Captures: len(list)}
		for _, p := range list {
			h.Samples += p.Samples
		}
		caps, un := place(list)
		h.Unanchored = un
		for i, c := range caps {
			if i == 0 || c.Start < h.Start {
				h.Start = c.Start
			}
			h.End = max(h.End, c.End)
			h.Approximate = h.Approximate || c.Approximate
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Host) int { return cmp.Compare(a.Host, b.Host) })
	return out
}

// HostCaptures returns host's captures placed on its timeline, in time
// order, and how many it has without a wall clock. An unknown host yields
// an error wrapping subsecond.ErrNotFound.
func HostCaptures(ctx context.Context, src Source, host string) ([]Capture, int, error) {
	all, err := src.List(ctx)
	if err != nil {
		return nil, 0, err
	}
	var ps []subsecond.Profile
	for _, p := range all {
		if p.Host == host {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, 0, fmt.Errorf("host %q: %w", host, subsecond.ErrNotFound)
	}
	caps, un := place(ps)
	return caps, un, nil
}

// CaptureList is a host's captures placed on its night, in time order, as
// the API's /api/hosts/{host}/captures and `subsecond hosts HOST --format
// json` write it; Unanchored counts those without a wall clock, which are
// not listed.
type CaptureList struct {
	Host       string    `json:"host"`
	Captures   []Capture `json:"captures"`
	Unanchored int       `json:"unanchored"`
}

// Captures returns host's CaptureList (see HostCaptures).
func Captures(ctx context.Context, src Source, host string) (*CaptureList, error) {
	caps, un, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if caps == nil {
		caps = []Capture{}
	}
	return &CaptureList{Host: host, Captures: caps, Unanchored: un}, nil
}

// Grid is a host's cores × time map over [From, To) in wall-clock Unix
// nanoseconds: its Cells, Buckets columns of Bucket nanoseconds from From.
// Busy and System are fractions of the bucket's samples (0 where there are
// none). Covered is the fraction of each bucket that some capture covers: 0
// is a gap between captures, to be drawn as a gap, not as idle time.
type Grid struct {
	Host string `json:"host"`
	From int64  `json:"from_ns"`
	To   int64  `json:"to_ns"`
	heatmap.Cells
	Covered    []float64 `json:"covered"`
	Captures   []Capture `json:"captures"`      // those overlapping [From, To)
	Unplaced   int       `json:"unanchored"`    // captures of the host without a wall clock
	Resolution int64     `json:"resolution_ns"` // the summaries' span: a bucket finer than this is not meaningful
}

// MaxBuckets bounds a Grid's columns, and with MaxCPUs its cells.
const (
	MaxBuckets = 20000
	MaxCPUs    = 4096
)

// Span asks a host view for the wall-clock range [From, To) in Unix
// nanoseconds (a zero From or To: the start or end of recording session
// Session, or when 0 of the session holding the other bound, else of the
// latest session; see SessionGap) in columns of Bucket nanoseconds (0: the whole seconds that
// make at most 1,000 columns). MaxCells, when not 0, bounds the view's
// columns × CPUs (the server's --max-cells): a zero Bucket then picks
// columns that fit, and a Bucket making more is refused before any summary
// is read. Buckets finer than a second, the summaries' resolution, are
// refused too: the capture's own views are the place for them.
type Span struct {
	From, To, Bucket int64
	Session          int
	MaxCells         int64
}

// SpanOf returns the span a query asks for: its from, to, bucket and
// session.
func SpanOf(q *query.Query) Span {
	return Span{From: q.From.NS, To: q.To.NS, Bucket: q.Bucket, Session: q.Session}
}

// Timeline returns host's cores × time map over span, from the captures'
// per-second summaries. Each second's counts go to the bucket holding its
// wall-clock start.
func Timeline(ctx context.Context, src Source, host string, span Span) (*Grid, error) {
	sp, err := plan(ctx, src, host, span)
	if err != nil {
		return nil, err
	}
	from, to, bucket, nb := sp.from, sp.to, sp.bucket, sp.buckets
	const second = int64(time.Second)
	g := &Grid{Host: host, From: from, To: to, Cells: heatmap.Cells{Bucket: bucket, Buckets: int(nb)},
		Covered: make([]float64, nb), Unplaced: sp.unplaced, Resolution: second}
	var rows cpuRows
	var busy, sys [][]int64
	err = eachSecond(ctx, src, sp, perCPU, func(c *Capture) {
		g.Captures = append(g.Captures, *c)
		// Coverage: the part of each bucket inside [c.Start, c.End).
		for b := max(0, (c.Start-from)/bucket); b < nb; b++ {
			lo, hi := from+b*bucket, from+(b+1)*bucket
			if lo >= c.End {
				break
			}
			g.Covered[b] += float64(min(hi, c.End)-max(lo, c.Start)) / float64(bucket)
		}
	}, func(s *subsecond.ChunkSummary, b int64) error {
		for _, cc := range s.CPUs {
			r, err := rows.row(cc.CPU)
			if err != nil {
				return fmt.Errorf("host %q: %w", host, err)
			}
			if r == len(g.CPUs) {
				g.CPUs = append(g.CPUs, cc.CPU)
				g.Samples = append(g.Samples, make([]int64, nb))
				busy = append(busy, make([]int64, nb))
				sys = append(sys, make([]int64, nb))
			}
			g.Samples[r][b] += cc.Samples
			busy[r][b] += cc.Busy
			sys[r][b] += cc.System
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for b := range g.Covered {
		g.Covered[b] = min(g.Covered[b], 1)
	}
	// Rows in CPU order.
	order := make([]int, len(g.CPUs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(g.CPUs[a], g.CPUs[b]) })
	cpus, samples := make([]int32, len(order)), make([][]int64, len(order))
	g.Busy, g.System = make([][]float64, len(order)), make([][]float64, len(order))
	for i, r := range order {
		cpus[i], samples[i] = g.CPUs[r], g.Samples[r]
		g.Busy[i], g.System[i] = make([]float64, nb), make([]float64, nb)
		for b, n := range samples[i] {
			if n > 0 {
				// Four decimals are more than a pixel's colour can show and
				// keep the night's JSON a third of its size.
				g.Busy[i][b] = math.Round(float64(busy[r][b])/float64(n)*1e4) / 1e4
				g.System[i][b] = math.Round(float64(sys[r][b])/float64(n)*1e4) / 1e4
			}
		}
	}
	g.CPUs, g.Samples = cpus, samples
	if g.Captures == nil {
		g.Captures = []Capture{}
	}
	return g, nil
}

// Window is a range of one capture, as its own views take it: [Start, End)
// in nanoseconds from the capture's T0.
type Window struct {
	Capture string `json:"capture"`
	Start   int64  `json:"start_ns"`
	End     int64  `json:"end_ns"`
}

// Locate returns the part of the capture among caps that overlaps the
// wall-clock range [from, to) most, as a Window, and false when no capture
// overlaps it.
func Locate(caps []Capture, from, to int64) (Window, bool) {
	var best *Capture
	bestOv := int64(0)
	for i := range caps {
		c := &caps[i]
		if ov := min(to, c.End) - max(from, c.Start); ov > bestOv {
			best, bestOv = c, ov
		}
	}
	if best == nil {
		return Window{}, false
	}
	lo, hi := max(from, best.Start), min(to, best.End)
	return Window{Capture: best.ID, Start: lo - best.Offset - best.T0, End: hi - best.Offset - best.T0}, true
}

// The counts eachSecond gives a second: by CPU or by command.
const (
	perCPU = iota
	perComm
)

// eachSecond calls capture for each capture of sp overlapping its range
// and second for each second of its rollup whose wall-clock start is in
// that range, with the bucket it falls in: a summary holding the
// second's counts by CPU or by command (which), valid during the call.
func eachSecond(ctx context.Context, src Source, sp *span, which int,
	capture func(c *Capture), second func(s *subsecond.ChunkSummary, b int64) error) error {
	var s subsecond.ChunkSummary
	for i := range sp.caps {
		c := &sp.caps[i]
		if c.End <= sp.from || c.Start >= sp.to {
			continue
		}
		if capture != nil {
			capture(c)
		}
		r, err := src.Rollup(ctx, c.ID)
		if err != nil {
			return err
		}
		for k, start := range r.Starts {
			w := start + c.Offset
			if w < sp.from || w >= sp.to {
				continue
			}
			s.Start = start
			if which == perCPU {
				s.CPUs = r.CPUCounts(k, s.CPUs[:0])
			} else {
				s.Comms = r.CommCounts(k, s.Comms[:0])
			}
			if err := second(&s, (w-sp.from)/sp.bucket); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// span is a host view's range resolved: [from, to) in buckets columns of
// bucket ns, over the host's placed captures, unplaced more having no wall
// clock.
type span struct {
	caps                      []Capture
	unplaced                  int
	from, to, bucket, buckets int64
}

// plan resolves the span a host view asks for from the list of profiles
// alone (see Span). A host none of whose captures has a wall clock is an
// ErrEmptyRange; a bad range or bucket a *query.ParamError.
func plan(ctx context.Context, src Source, host string, want Span) (*span, error) {
	caps, un, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("host %q: none of its %d captures has a wall-clock time: %w", host, un, subsecond.ErrEmptyRange)
	}
	sp := &span{caps: caps, unplaced: un, bucket: want.Bucket}
	if sp.from, sp.to, err = defaultRange(caps, want); err != nil {
		return nil, err
	}
	if sp.to <= sp.from {
		name := "to"
		if want.To == 0 {
			name = "from" // the default end is before the given start
		}
		return nil, query.Invalidf(name, "the range %s to %s is empty; to must be after from",
			query.FormatWallTime(sp.from), query.FormatWallTime(sp.to))
	}
	// The most CPUs of a capture in the range: the grid's rows.
	cpus := 1
	for _, c := range caps {
		if c.End > sp.from && c.Start < sp.to {
			cpus = max(cpus, c.CPUs)
		}
	}
	const second = int64(time.Second)
	if sp.bucket == 0 {
		cols := int64(autoColumns)
		if want.MaxCells > 0 {
			// One column fewer than fit: CheckCells counts span/bucket + 1.
			cols = max(1, min(cols, want.MaxCells/int64(cpus)-1))
		}
		sp.bucket = max(second, ((sp.to-sp.from)/cols+second-1)/second*second)
	}
	if sp.bucket < second {
		return nil, query.Invalidf("bucket", "%s s is finer than the host timeline's one-second summaries; open the capture for finer views",
			query.FormatSeconds(sp.bucket))
	}
	sp.buckets = (sp.to - sp.from + sp.bucket - 1) / sp.bucket
	if sp.buckets > MaxBuckets {
		return nil, query.Invalidf("bucket", "%d buckets of %s s exceed %d; use wider buckets", sp.buckets, query.FormatSeconds(sp.bucket), MaxBuckets)
	}
	if want.MaxCells > 0 {
		if err := query.CheckCells("bucket", "CPUs", sp.bucket, sp.to-sp.from, cpus, want.MaxCells); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// autoColumns is how many columns a host view has at most when no bucket
// is given.
const autoColumns = 1000
