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

// Source is what the host views read: one host's stored profiles (never
// the whole archive's: a host view costs what its host holds), and one
// capture's rollup of per-second counts. Timeline and Comms read nothing
// else; Hotspots also loads the captures of the episodes it describes.
type Source interface {
	// HostProfiles returns host's profiles, in any order; none for an
	// unknown host.
	HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error)
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
	ps, err := src.HostProfiles(ctx, host)
	if err != nil {
		return nil, 0, err
	}
	if len(ps) == 0 {
		return nil, 0, fmt.Errorf("host %q: %w", host, subsecond.ErrNotFound)
	}
	caps, un := place(ps)
	return caps, un, nil
}

// CaptureList is a page of a host's captures placed on its night, in time
// order, as the API's /api/hosts/{host}/captures and `subsecond hosts HOST
// --format json` write it; Unanchored counts those without a wall clock,
// which are not listed.
type CaptureList struct {
	Host       string    `json:"host"`
	Captures   []Capture `json:"captures"`
	Unanchored int       `json:"unanchored"`
	// NextCursor is the cursor of the next page, the ID of this page's
	// last capture, and Next that page's URL; both absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	Next       string `json:"next,omitempty"`
}

// Captures returns a page of host's CaptureList (see HostCaptures): at most
// limit captures (all when limit is 0) after the capture whose ID is after
// ("" for the first page), with the cursor of the next page while there is
// one. An after that is not one of the host's placed captures is a
// query.Invalid for "cursor".
func Captures(ctx context.Context, src Source, host string, limit int, after string) (*CaptureList, error) {
	caps, un, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if after != "" {
		i := slices.IndexFunc(caps, func(c Capture) bool { return c.ID == after })
		if i < 0 {
			return nil, query.Invalidf("cursor", "host %q has no capture %q on its night to list after (deleted meanwhile?); start again from the first page", host, after)
		}
		caps = caps[i+1:]
	}
	list := &CaptureList{Host: host, Captures: caps, Unanchored: un}
	if limit > 0 && len(caps) > limit {
		list.Captures = caps[:limit:limit]
		list.NextCursor = caps[limit-1].ID
	}
	if list.Captures == nil {
		list.Captures = []Capture{}
	}
	return list, nil
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
// per-second rollups. Each second's counts go to the bucket holding its
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
	sums := cpuColumns{columns: int(nb)}
	for i := range sp.caps {
		c := &sp.caps[i]
		if c.End <= from || c.Start >= to {
			continue
		}
		g.Captures = append(g.Captures, *c)
		// Coverage: the part of each bucket inside [c.Start, c.End).
		for b := max(0, (c.Start-from)/bucket); b < nb; b++ {
			lo, hi := from+b*bucket, from+(b+1)*bucket
			if lo >= c.End {
				break
			}
			g.Covered[b] += float64(min(hi, c.End)-max(lo, c.Start)) / float64(bucket)
		}
		r, err := src.Rollup(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		if err := sums.add(r, c.Offset, sp); err != nil {
			return nil, fmt.Errorf("host %q: %w", host, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for b := range g.Covered {
		g.Covered[b] = min(g.Covered[b], 1)
	}
	// Rows in CPU order.
	ids := sums.rows.ids
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	g.CPUs, g.Samples = make([]int32, len(order)), make([][]int64, len(order))
	g.Busy, g.System = make([][]float64, len(order)), make([][]float64, len(order))
	shares := make([]float64, 2*len(order)*int(nb))
	for i, r := range order {
		row := sums.cells[r]
		samples, busy, sys := row[:nb:nb], row[nb:2*nb], row[2*nb:]
		g.CPUs[i], g.Samples[i] = ids[r], samples
		g.Busy[i], g.System[i] = shares[:nb:nb], shares[nb:2*nb:2*nb]
		shares = shares[2*nb:]
		for b, n := range samples {
			if n > 0 {
				// Four decimals are more than a pixel's colour can show and
				// keep the night's JSON a third of its size.
				g.Busy[i][b] = math.Round(float64(busy[b])/float64(n)*1e4) / 1e4
				g.System[i][b] = math.Round(float64(sys[b])/float64(n)*1e4) / 1e4
			}
		}
	}
	if g.Captures == nil {
		g.Captures = []Capture{}
	}
	return g, nil
}

// cpuColumns sums captures' per-second counts by CPU into a host view's
// columns. A row per CPU, numbered in order of first sight (rows), holds
// its columns' samples, then their busy, then their system samples; rows
// are cut from blocks of rowBlock rows.
type cpuColumns struct {
	columns int
	rows    cpuRows
	cells   [][]int64 // by row
	block   []int64   // what is left of the current block
	// sums and seen hold the counts of the column being summed, by index
	// into the current rollup's CPUs (see subsecond.Rollup.SumCPUs).
	sums []subsecond.Counts
	seen []bool
}

// rowBlock is how many rows' cells cpuColumns allocates at once.
const rowBlock = 16

// add adds the seconds of r whose wall-clock start (start + offset) is in
// sp's range to the columns holding it: each run of seconds falling in
// one column summed by CPU in one pass over their entries, then added to
// the column's cells. A CPU outside [0, MaxCPUs) is an error wrapping
// subsecond.ErrTooLarge.
func (cc *cpuColumns) add(r *subsecond.Rollup, offset int64, sp *span) error {
	n := len(r.CPUs)
	if cap(cc.sums) < n {
		cc.sums, cc.seen = make([]subsecond.Counts, n), make([]bool, n)
	}
	cc.sums, cc.seen = cc.sums[:n], cc.seen[:n]
	// [lo, hi) is the run of seconds falling in column col.
	lo, hi, col := 0, 0, int64(-1)
	for k, start := range r.Starts {
		w := start + offset
		if w < sp.from || w >= sp.to {
			continue
		}
		if b := (w - sp.from) / sp.bucket; b != col || k != hi {
			if err := cc.flush(r, lo, hi, col); err != nil {
				return err
			}
			lo, col = k, b
		}
		hi = k + 1
	}
	return cc.flush(r, lo, hi, col)
}

// flush adds the counts of r's seconds [lo, hi) to column col.
func (cc *cpuColumns) flush(r *subsecond.Rollup, lo, hi int, col int64) error {
	if lo >= hi {
		return nil
	}
	r.SumCPUs(lo, hi, cc.sums, cc.seen)
	for i, seen := range cc.seen {
		if !seen {
			continue
		}
		row, err := cc.rows.row(r.CPUs[i])
		if err != nil {
			return err
		}
		if row == len(cc.cells) {
			if len(cc.block) == 0 {
				cc.block = make([]int64, rowBlock*3*cc.columns)
			}
			cc.cells = append(cc.cells, cc.block[:3*cc.columns:3*cc.columns])
			cc.block = cc.block[3*cc.columns:]
		}
		cells, s := cc.cells[row], &cc.sums[i]
		cells[col] += s.Samples
		cells[cc.columns+int(col)] += s.Busy
		cells[2*cc.columns+int(col)] += s.System
		*s, cc.seen[i] = subsecond.Counts{}, false
	}
	return nil
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
