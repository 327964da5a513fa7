package timeline

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
)

// HotOptions tune Hotspots, as the query parameters of the same names do
// (HotOptionsOf). Zero fields take the defaults.
type HotOptions struct {
	// Measure is what must stay at or above Threshold: busy time
	// (heatmap.MeasureBusy, the default) or system time, the busy samples
	// in the kernel (heatmap.MeasureSystem): a core pegged mostly in the
	// kernel. Busy time measures system time on a core that is busy most
	// of the night (its usual busy share at or above Threshold), where
	// every second would be hot: a training worker's core, which a kernel
	// burst leaves as busy as it was.
	Measure   heatmap.Measure
	Threshold float64 // fraction of a second's samples that counts as hot, (0, 1]; default query.DefaultThreshold
	Min       int64   // shortest episode, ns, at least 1 s; default query.DefaultMin
	// Limit is how many episodes to return, best first; 0 for all (at
	// most maxSpots, the table's largest limit).
	Limit int
	// Markers, when given, mark the episodes that end within Near ns
	// before a marker (default query.DefaultNear), and rank them first.
	Markers []subsecond.Marker
	Near    int64
	// Session is the recording session searched (see SessionGap), 1 for
	// the host's first; 0 for the latest, the one a host's views show by
	// default.
	Session int
}

// HotOptionsOf returns the options q asks for (measure, threshold, min,
// limit, near and session), with the host's markers ms.
func HotOptionsOf(q *query.Query, ms []subsecond.Marker) HotOptions {
	return HotOptions{Measure: heatmap.Measure(q.Measure), Threshold: q.Threshold, Min: q.Min, Limit: q.Limit, Near: q.Near, Markers: ms, Session: q.Session}
}

// Spot is one episode of one CPU in a host's recording session: [Start, End) in
// wall-clock Unix nanoseconds, within one recording (see Recording), so
// that an episode crossing a rotation point is one. Capture is the capture
// that holds most of it.
//
// Measure is what it was found on (see HotOptions.Measure); Usual is the
// CPU's median share of it over every second of the session, and
// Score = Samples × (1 − Usual), where Samples are the episode's busy (or
// system) samples: the scale is the whole session's, so the first spot is
// its most unusual. Comm, Function and Stack describe the episode
// as the capture's own hot spots do (heatmap.Spot). The spots returned (the
// first hundred, see described) are described from the samples of every
// capture they cross, which also give
// their edges to the cores map's 0.1 s, and every figure (Samples, Busy,
// System, Score, Before) is then that of exactly [Start, End) on the CPU,
// the range FlameURL shows; Busy and System are fractions of all its
// samples.
type Spot struct {
	CPU         int32   `json:"cpu"`
	Start       int64   `json:"start_ns"`
	End         int64   `json:"end_ns"`
	Capture     string  `json:"capture"`
	CaptureName string  `json:"capture_name"`
	Offset      int64   `json:"offset_ns"` // wall clock minus the capture's clock
	T0          int64   `json:"t0_ns"`     // the capture's T0 on its clock
	Approximate bool    `json:"approximate"`
	Measure     string  `json:"measure"`
	Busy        float64 `json:"busy"`
	System      float64 `json:"system"`
	Samples     int64   `json:"samples"`
	Usual       float64 `json:"usual"`
	Score       float64 `json:"score"`
	Comm        string  `json:"comm,omitempty"`
	CommShare   float64 `json:"comm_share,omitempty"`
	Function    string  `json:"top_function,omitempty"`
	Stack       string  `json:"top_stack,omitempty"`
	// Marker is the marker the episode ends within Near before, if any,
	// and Before how long before it (ns).
	Marker *subsecond.Marker `json:"marker,omitempty"`
	Before int64             `json:"before_marker_ns,omitempty"`
	// URL is Capture's page zoomed to its part of the episode on its CPU,
	// FlameURL the flame graph of the host's range [Start, End) on the CPU,
	// across captures, and CompareURL the differential flame graph of the
	// host's ranges from a baseline to [Start, End) on the CPU (see
	// CompareBase; "" when there is none).
	URL        string `json:"url"`
	FlameURL   string `json:"flame_url"`
	CompareURL string `json:"compare_url,omitempty"`
}

// Report is the hot spots of a host's recording session, best first;
// Found counts them all. Session is the session's number, and Measure,
// Threshold, Min and Near (ns) are what they were found and ranked with. The API's /api/hosts/{host}/hotspots and the CLI's
// `hotspots --host H --format json` write it alike.
type Report struct {
	Host      string  `json:"host"`
	Session   int     `json:"session"`
	Measure   string  `json:"measure"`
	Threshold float64 `json:"threshold"`
	Min       int64   `json:"min_ns"`
	Near      int64   `json:"near_ns"`
	Found     int     `json:"found"`
	Spots     []Spot  `json:"hotspots"`
}

// maxSpots bounds the episodes Hotspots keeps while it ranks them (the
// best ones; Found still counts all), so that its memory is bounded
// whatever the night holds.
const maxSpots = 100000

// usualBins is the resolution of a CPU's usual share: per mille.
const usualBins = 1001

// cpuRows numbers CPU ids densely, in order of first sight.
type cpuRows struct {
	index []int32 // by CPU id: row + 1, 0 for unseen
	ids   []int32 // by row: CPU id
}

// row returns cpu's row, numbering it if new. CPU ids must be in
// [0, MaxCPUs).
func (c *cpuRows) row(cpu int32) (int, error) {
	if cpu < 0 || cpu >= MaxCPUs {
		return 0, fmt.Errorf("CPU %d is outside 0 to %d, the CPUs a host's night can hold: %w", cpu, MaxCPUs-1, subsecond.ErrTooLarge)
	}
	for int(cpu) >= len(c.index) {
		c.index = append(c.index, make([]int32, len(c.index)+64)...)
	}
	if c.index[cpu] == 0 {
		c.ids = append(c.ids, cpu)
		c.index[cpu] = int32(len(c.ids))
	}
	return int(c.index[cpu]) - 1, nil
}

// described bounds how many episodes Hotspots describes from their
// captures' samples: each may load a capture, which across a 96-CPU night
// costs tens of milliseconds apiece.
const described = 100

// Hotspots finds the episodes of one of host's recording sessions
// (HotOptions.Session, by default the latest) in which a CPU's busy (or
// system) share stays at or above the threshold, second by second from the
// summaries, for at least Min, within one recording (a second that two of
// its captures share at a rotation point counted once, with both
// captures' samples); scores them on the night's scale (see Spot) and
// describes the ones it returns from the samples of the captures they
// cross (see Spot).
func Hotspots(ctx context.Context, src Source, host string, opt HotOptions) (*Report, error) {
	d := query.Default()
	opt.Measure = cmp.Or(opt.Measure, heatmap.Measure(d.Measure))
	opt.Threshold = cmp.Or(opt.Threshold, d.Threshold)
	opt.Min = cmp.Or(opt.Min, d.Min)
	opt.Near = cmp.Or(opt.Near, d.Near)
	if err := query.CheckEach("measure", string(opt.Measure), "threshold", opt.Threshold, "min", opt.Min, "limit", opt.Limit, "near", opt.Near); err != nil {
		return nil, err
	}
	if opt.Min < int64(time.Second) {
		return nil, query.Invalidf("min", "%s s is less than 1 s, the resolution of a host's night", query.FormatSeconds(opt.Min))
	}
	keep := opt.Limit
	if keep == 0 || keep > maxSpots {
		keep = maxSpots
	}
	all, _, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	rep := &Report{Host: host, Measure: string(opt.Measure), Threshold: opt.Threshold, Min: opt.Min, Near: opt.Near, Spots: []Spot{}}
	if len(all) == 0 {
		return rep, nil // no capture has a wall clock: nothing to search
	}
	// The session's captures, chosen as the host's views choose their span.
	from, to, err := defaultRange(all, Span{Session: opt.Session})
	if err != nil {
		return nil, err
	}
	var caps []Capture
	for _, c := range all {
		if c.End > from && c.Start < to {
			caps = append(caps, c)
		}
	}
	recs := Recordings(caps)
	rep.Session = caps[0].Session
	// Markers in time order: an episode's is the first at or after its end.
	marks := slices.Clone(opt.Markers)
	slices.SortStableFunc(marks, func(a, b subsecond.Marker) int { return cmp.Compare(a.Time, b.Time) })
	n := &night{src: src, recs: recs, marks: marks, opt: opt}

	// Pass 1: each CPU's usual busy and system shares, the medians over
	// the session's seconds, from histograms of per-mille shares (the
	// summaries are in memory or cheap to read twice; sorting 43,200
	// seconds × 96 CPUs is not).
	var hist [2][][usualBins]int32 // busy, system
	for ri := range recs {
		err := n.seconds(ctx, &recs[ri], func(r int, _ int64, c subsecond.Counts, _ float64) {
			if c.Samples == 0 {
				return
			}
			for m, v := range []int64{c.Busy, c.System} {
				for len(hist[m]) <= r {
					hist[m] = append(hist[m], [usualBins]int32{})
				}
				hist[m][r][v*(usualBins-1)/c.Samples]++
			}
		})
		if err != nil {
			return nil, fmt.Errorf("host %q: %w", host, err)
		}
	}
	for m := range hist {
		for len(hist[m]) < len(n.rows.ids) {
			hist[m] = append(hist[m], [usualBins]int32{})
		}
	}
	n.usual = [2][]float64{medians(hist[0]), medians(hist[1])}
	n.system = make([]bool, len(n.rows.ids))
	for r := range n.system {
		// A core busy most of the night is busy in every episode: its
		// system time is what can stand out.
		n.system[r] = opt.Measure == heatmap.MeasureSystem || n.usual[0][r] >= opt.Threshold
	}

	// Pass 2: per recording and CPU, the runs of hot seconds.
	second := int64(time.Second)
	minSecs := max(1, (opt.Min+second-1)/second)
	type run struct {
		open        bool
		start, last int64 // wall-clock starts of the first and last second
		secs        int64
		c           subsecond.Counts
	}
	best := spotHeap{}
	for ri := range recs {
		rec := &recs[ri]
		runs := make([]run, len(n.system))
		emit := func(r int) {
			ru := &runs[r]
			if ru.open && ru.secs >= minSecs {
				sp := Spot{CPU: n.rows.ids[r], Start: ru.start, End: ru.last + second}
				n.figures(&sp, rec, r, ru.c)
				rep.Found++
				best.offer(sp, keep)
			}
			ru.open = false
		}
		err := n.seconds(ctx, rec, func(r int, wall int64, c subsecond.Counts, hz float64) {
			ru := &runs[r]
			// A second at the recording's edge holds fewer samples: it is
			// judged by the samples it has, if it has at least half a
			// second's worth.
			hot := c.Samples >= int64(hz/2) && c.Samples > 0 && float64(n.measured(r, c)) >= opt.Threshold*float64(c.Samples)
			if ru.open && (!hot || wall != ru.last+second) {
				emit(r)
			}
			if !hot {
				return
			}
			if !ru.open {
				*ru = run{open: true, start: wall}
			}
			ru.last, ru.secs = wall, ru.secs+1
			ru.c.Samples, ru.c.Busy, ru.c.System = ru.c.Samples+c.Samples, ru.c.Busy+c.Busy, ru.c.System+c.System
		})
		if err != nil {
			return nil, fmt.Errorf("host %q: %w", host, err)
		}
		for r := range runs {
			emit(r)
		}
	}
	rep.Spots = best.sorted()
	if err := n.describe(ctx, rep.Spots[:min(len(rep.Spots), described)]); err != nil {
		return nil, err
	}
	slices.SortStableFunc(rep.Spots, func(a, b Spot) int { return rank(&a, &b) })
	linkSpots(host, rep.Spots, all)
	return rep, nil
}

// WindowSource is a Source that can read a capture's samples of one range
// alone, with the capture's tables (store.Store.CaptureWindow): the night's
// hot spots describe a few seconds of one CPU in each of many captures,
// where loading every capture whole would cost a hundred times more.
type WindowSource interface {
	CaptureWindow(ctx context.Context, id string, r subsecond.Range) (*subsecond.Capture, error)
}

// load returns capture id with at least its samples of r (in the
// capture's own clock): a window of it when the source can read one, else
// the whole capture.
func (n *night) load(ctx context.Context, id string, r subsecond.Range) (*subsecond.Capture, error) {
	if ws, ok := n.src.(WindowSource); ok {
		return ws.CaptureWindow(ctx, id, r)
	}
	return n.src.Capture(ctx, id)
}

// night is the state of one Hotspots run.
type night struct {
	src   Source
	recs  []Recording
	marks []subsecond.Marker
	opt   HotOptions
	rows  cpuRows
	usual [2][]float64 // by row: the median busy and system shares
	// system, by row, is set when the CPU's episodes are measured on
	// system time (see HotOptions.Measure).
	system []bool
}

// measured returns the samples of c that row r's measure counts.
func (n *night) measured(r int, c subsecond.Counts) int64 {
	if n.system[r] {
		return c.System
	}
	return c.Busy
}

// figures sets sp's place, shares, score and marker from c, the counts of
// [sp.Start, sp.End) on its CPU, row r, within rec.
func (n *night) figures(sp *Spot, rec *Recording, r int, c subsecond.Counts) {
	w, _ := Locate(rec.Captures, sp.Start, sp.End)
	sp.Approximate = false
	for i := range rec.Captures {
		k := &rec.Captures[i]
		if k.ID == w.Capture {
			sp.Capture, sp.CaptureName, sp.Offset, sp.T0 = k.ID, k.Name, k.Offset, k.T0
		}
		if k.End > sp.Start && k.Start < sp.End {
			sp.Approximate = sp.Approximate || k.Approximate
		}
	}
	m := 0
	sp.Measure = string(heatmap.MeasureBusy)
	if n.system[r] {
		m, sp.Measure = 1, string(heatmap.MeasureSystem)
	}
	sp.Samples, sp.Usual = n.measured(r, c), n.usual[m][r]
	sp.Busy, sp.System = 0, 0
	if c.Samples > 0 {
		sp.Busy, sp.System = float64(c.Busy)/float64(c.Samples), float64(c.System)/float64(c.Samples)
	}
	sp.Score = float64(sp.Samples) * (1 - sp.Usual)
	sp.Marker, sp.Before = nil, 0
	if k, _ := slices.BinarySearchFunc(n.marks, sp.End, func(m subsecond.Marker, t int64) int { return cmp.Compare(m.Time, t) }); k < len(n.marks) && n.marks[k].Time-sp.End <= n.opt.Near {
		sp.Marker, sp.Before = &n.marks[k], n.marks[k].Time-sp.End
	}
}

// seconds calls fn with each CPU's counts in each wall-clock second of
// rec, in time order for each CPU (row r, numbered in n.rows), with the
// sampling rate of the capture it was first seen in. A summary's second
// goes to the wall-clock second holding its start, and a second that two
// captures share at a rotation point is counted once with the samples of
// both.
func (n *night) seconds(ctx context.Context, rec *Recording, fn func(r int, wall int64, c subsecond.Counts, hz float64)) error {
	type pending struct {
		set  bool
		wall int64
		c    subsecond.Counts
		hz   float64
	}
	var open []pending
	var buf []subsecond.CPUCount
	for ci := range rec.Captures {
		c := &rec.Captures[ci]
		roll, err := n.src.Rollup(ctx, c.ID)
		if err != nil {
			return err
		}
		for k, start := range roll.Starts {
			wall := subsecond.FloorSecond(start + c.Offset)
			buf = roll.CPUCounts(k, buf[:0])
			for _, cc := range buf {
				r, err := n.rows.row(cc.CPU)
				if err != nil {
					return err
				}
				for len(open) <= r {
					open = append(open, pending{})
				}
				p := &open[r]
				if p.set && wall > p.wall {
					fn(r, p.wall, p.c, p.hz)
					p.set = false
				}
				if !p.set {
					*p = pending{set: true, wall: wall, hz: c.Hz}
				}
				p.c.Samples, p.c.Busy, p.c.System = p.c.Samples+cc.Samples, p.c.Busy+cc.Busy, p.c.System+cc.System
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for r := range open {
		if p := &open[r]; p.set {
			fn(r, p.wall, p.c, p.hz)
		}
	}
	return nil
}

// medians returns, for each histogram of per-mille shares, its median
// share.
func medians(hist [][usualBins]int32) []float64 {
	out := make([]float64, len(hist))
	for r := range hist {
		var total, seen int64
		for _, n := range hist[r] {
			total += int64(n)
		}
		for bin, n := range hist[r] {
			if seen += int64(n); seen > total/2 {
				out[r] = float64(bin) / (usualBins - 1)
				break
			}
		}
	}
	return out
}

// linkSpots sets each spot's links (see Spot), caps being all of the
// host's captures.
func linkSpots(host string, spots []Spot, caps []Capture) {
	at := map[string]*Capture{}
	for i := range caps {
		at[caps[i].ID] = &caps[i]
	}
	recs := Recordings(caps)
	for i := range spots {
		sp := &spots[i]
		sp.FlameURL = HostFlameURL(host, sp.Start, sp.End, sp.CPU)
		if from, to, ok := CompareBase(caps, recs, sp); ok {
			sp.CompareURL = HostDiffURL(host, sp.Start, sp.End, from, to, sp.CPU)
		}
		c := at[sp.Capture]
		if c == nil {
			continue
		}
		on := func(t int64) string { return query.FormatSeconds(min(max(t, c.Start), c.End) - sp.Offset - sp.T0) }
		sp.URL = link.ProfilePage.Path(sp.Capture) + fmt.Sprintf("?cpu=%d&start=%s&end=%s", sp.CPU, on(sp.Start), on(sp.End))
	}
}

// CompareBase returns the baseline a hot spot is compared with, a
// wall-clock range [from, to) as long as the spot's, before it: the same
// range an hour earlier when the host's recordings recs hold all of it (a
// night's steady state at the same place in its cycle), else the same
// place in the capture before the spot's Capture among caps (the host's
// captures in time order; the shift rounded to 0.1 s), the baseline the host page's Compare panel
// takes by default, when a recording holds some of it and it ends before
// the spot starts. ok is false when neither is there: the spot is in the
// host's first capture, or the capture before it is too short.
func CompareBase(caps []Capture, recs []Recording, sp *Spot) (from, to int64, ok bool) {
	hour := int64(time.Hour)
	if Missing(recs, sp.Start-hour, sp.End-hour) == 0 {
		return sp.Start - hour, sp.End - hour, true
	}
	i := slices.IndexFunc(caps, func(c Capture) bool { return c.ID == sp.Capture })
	if i <= 0 {
		return 0, 0, false
	}
	// The captures' starts differ by their length and rotation, to the
	// cores map's bucket, on which the spot's edges lie.
	d := int64(time.Duration(caps[i].Start - caps[i-1].Start).Round(time.Duration(query.DefaultBucket)))
	from, to = sp.Start-d, sp.End-d
	if _, rec := Recorded(recs, from, to); !rec || to > sp.Start {
		return 0, 0, false
	}
	return from, to, true
}

// rank orders a before b (-1) or after it (1): an episode just before a
// marker first, then by score, start and CPU.
func rank(a, b *Spot) int {
	if (a.Marker != nil) != (b.Marker != nil) {
		if a.Marker != nil {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Start, b.Start), cmp.Compare(a.CPU, b.CPU))
}

// better reports whether a ranks before b (see rank).
func better(a, b *Spot) bool { return rank(a, b) < 0 }

// spotHeap keeps the best episodes offered, the worst of them on top.
type spotHeap []Spot

func (h spotHeap) Len() int           { return len(h) }
func (h spotHeap) Less(i, j int) bool { return better(&h[j], &h[i]) }
func (h spotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *spotHeap) Push(x any)        { *h = append(*h, x.(Spot)) }
func (h *spotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps s if it is among the best n offered so far.
func (h *spotHeap) offer(s Spot, n int) {
	if h.Len() < n {
		heap.Push(h, s)
		return
	}
	if better(&s, &(*h)[0]) {
		(*h)[0] = s
		heap.Fix(h, 0)
	}
}

// sorted sorts the episodes kept in place, best first, and returns them.
func (h spotHeap) sorted() []Spot {
	slices.SortFunc(h, func(a, b Spot) int { return rank(&a, &b) })
	return h
}

// describe describes spots from the samples of the captures they cross:
// their edges to the cores map's buckets, by the capture's own detection
// (heatmap.Episodes) over the measured samples of the CPU from a second
// before to a second after the summaries' run; what ran in them; and
// every figure, of exactly their range (see Spot).
func (n *night) describe(ctx context.Context, spots []Spot) error {
	const bucket = query.DefaultBucket
	second := int64(time.Second)
	for i := range spots {
		sp := &spots[i]
		ri := recordingAt(n.recs, sp.Start)
		if ri < 0 {
			continue
		}
		rec := &n.recs[ri]
		r, err := n.rows.row(sp.CPU)
		if err != nil {
			return err
		}
		from, to := max(rec.Start, sp.Start-second), min(rec.End, sp.End+second)
		nb := (to - from + bucket - 1) / bucket
		all, measured := make([]int64, nb), map[string][]int64{} // measured samples, and by command
		loaded := map[string]*subsecond.Capture{}
		hz := 0.0
		for ci := range rec.Captures {
			c := &rec.Captures[ci]
			if c.End <= from || c.Start >= to {
				continue
			}
			k, err := n.load(ctx, c.ID, subsecond.Range{Start: from - c.Offset, End: to - c.Offset})
			if err != nil {
				return err
			}
			loaded[c.ID], hz = k, max(hz, c.Hz)
			cl := subsecond.ClassesOf(k)
			ev := uint16(k.Profile.DefaultEvent())
			s := &k.Samples
			lo, hi := k.Window(subsecond.Range{Start: from - c.Offset, End: to - c.Offset})
			for j := lo; j < hi; j++ {
				if s.CPU[j] != sp.CPU || s.Event[j] != ev || s.Time[j] == subsecond.NoTime {
					continue
				}
				if busy, sys := cl.Nodes[s.Stack[j]].Time(cl.Idle(j)); sys || busy && !n.system[r] {
					b, comm := (s.Time[j]+c.Offset-from)/bucket, k.Strings[s.Comm[j]]
					if measured[comm] == nil {
						measured[comm] = make([]int64, nb)
					}
					all[b]++
					measured[comm][b]++
				}
			}
		}
		// As in a capture's hot spots, a command that keeps the CPU hot on
		// its own gives the edges; else all that ran does. Of each, the
		// episode that overlaps the summaries' run most.
		thr := min(n.opt.Threshold, query.DefaultThreshold)
		var lo, hi, bestOv int64
		series := make([][]int64, 0, len(measured)+1)
		for _, comm := range slices.Sorted(maps.Keys(measured)) {
			series = append(series, measured[comm])
		}
		for i, counts := range append(series, all) {
			if i == len(series) && bestOv > 0 {
				break
			}
			for _, e := range heatmap.Episodes(counts, hz*float64(bucket)/float64(second), bucket, thr, second) {
				a, b := from+int64(e[0])*bucket, from+int64(e[1])*bucket
				if ov := min(b, sp.End) - max(a, sp.Start); ov > bestOv {
					lo, hi, bestOv = a, b, ov
				}
			}
		}
		if bestOv > 0 {
			sp.Start, sp.End = lo, hi
		}
		tl := heatmap.NewTally(sp.CPU)
		for ci := range rec.Captures {
			c := &rec.Captures[ci]
			if k := loaded[c.ID]; k != nil && c.End > sp.Start && c.Start < sp.End {
				if err := tl.Add(k, subsecond.Range{Start: sp.Start - c.Offset, End: sp.End - c.Offset}); err != nil {
					return err
				}
			}
		}
		n.figures(sp, rec, r, subsecond.Counts{Samples: tl.Samples, Busy: tl.Busy, System: tl.System})
		sp.Comm, sp.CommShare, sp.Function, _, sp.Stack, _ = tl.Describe()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
