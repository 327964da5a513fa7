package timeline

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"net/url"
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
	// kernel.
	Measure   heatmap.Measure
	Threshold float64 // fraction of a second's samples that counts as hot, (0, 1]; default query.DefaultThreshold
	Min       int64   // shortest episode, ns, at least 1 s; default query.DefaultMin
	// Limit is how many episodes to return, best first; 0 for all (at
	// most maxSpots, the table's largest limit).
	Limit int
	// Markers, when given, rank first the episodes that end within Near ns
	// before a marker (default query.DefaultNear).
	Markers []subsecond.Marker
	Near    int64
}

// HotOptionsOf returns the options q asks for (measure, threshold, min,
// limit and near), with the host's markers ms.
func HotOptionsOf(q *query.Query, ms []subsecond.Marker) HotOptions {
	return HotOptions{Measure: heatmap.Measure(q.Measure), Threshold: q.Threshold, Min: q.Min, Limit: q.Limit, Near: q.Near, Markers: ms}
}

// Spot is one episode of one CPU across a host's night: [Start, End) in
// wall-clock Unix nanoseconds, within capture Capture.
//
// Usual is the CPU's median share (busy or system, as measured) over every
// second of the host's night, and Score = Samples × (1 − Usual), where
// Samples are the episode's busy (or system) samples: the scale is the
// whole night's, so the first spot is the night's most unusual. Comm,
// Function and Stack describe the episode as the capture's own hot spots
// do (heatmap.Spot), found in the capture's samples on that CPU.
type Spot struct {
	CPU         int32   `json:"cpu"`
	Start       int64   `json:"start_ns"`
	End         int64   `json:"end_ns"`
	Capture     string  `json:"capture"`
	CaptureName string  `json:"capture_name"`
	Offset      int64   `json:"offset_ns"` // wall clock minus the capture's clock
	T0          int64   `json:"t0_ns"`     // the capture's T0 on its clock
	Approximate bool    `json:"approximate"`
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
	// URL is the capture's page zoomed to the episode on its CPU, FlameURL
	// the episode's flame graph, and CompareURL the differential flame
	// graph from the same CPU and place in the previous capture to the
	// episode ("" in the host's first capture).
	URL        string `json:"url"`
	FlameURL   string `json:"flame_url"`
	CompareURL string `json:"compare_url,omitempty"`
}

// Report is the night's hot spots, best first; Found counts them all.
// Measure, Threshold, Min and Near (ns) are what they were found and
// ranked with. The API's /api/hosts/{host}/hotspots and the CLI's
// `hotspots --host H --format json` write it alike.
type Report struct {
	Host      string  `json:"host"`
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
const described = 10

// Hotspots finds the episodes of host's night in which a CPU's busy (or
// system) share stays at or above the threshold, second by second from the
// summaries, for at least Min, within one capture; scores them on the
// night's scale (see Spot) and describes the best from their captures'
// samples with the capture's own hot-spot detection on that CPU, whose
// finer (0.1 s) edges then replace the whole seconds.
func Hotspots(ctx context.Context, src Source, host string, opt HotOptions) (*Report, error) {
	d := query.Default()
	opt.Measure = cmp.Or(opt.Measure, heatmap.Measure(d.Measure))
	opt.Threshold = cmp.Or(opt.Threshold, d.Threshold)
	opt.Min = cmp.Or(opt.Min, d.Min)
	opt.Near = cmp.Or(opt.Near, d.Near)
	for _, c := range []struct {
		name string
		v    any
	}{{"measure", string(opt.Measure)}, {"threshold", opt.Threshold}, {"min", opt.Min}, {"limit", opt.Limit}, {"near", opt.Near}} {
		if err := query.Check(c.name, c.v); err != nil {
			return nil, err
		}
	}
	if opt.Min < int64(time.Second) {
		return nil, query.Invalidf("min", "%s s is less than 1 s, the resolution of a host's night", query.DisplaySeconds(opt.Min))
	}
	keep := opt.Limit
	if keep == 0 || keep > maxSpots {
		keep = maxSpots
	}
	caps, _, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	rep := &Report{Host: host, Measure: string(opt.Measure), Threshold: opt.Threshold, Min: opt.Min, Near: opt.Near, Spots: []Spot{}}
	system := opt.Measure == heatmap.MeasureSystem
	measure := func(c subsecond.Counts) int64 {
		if system {
			return c.System
		}
		return c.Busy
	}
	// Markers in time order: an episode's is the first at or after its end.
	marks := slices.Clone(opt.Markers)
	slices.SortStableFunc(marks, func(a, b subsecond.Marker) int { return cmp.Compare(a.Time, b.Time) })
	best := spotHeap{}
	// Pass 1: each CPU's usual share, the median over the night's seconds,
	// from a histogram of per-mille shares (the summaries are in memory or
	// cheap to read twice; sorting 43,200 seconds × 96 CPUs is not).
	var rows cpuRows
	var hist [][usualBins]int32
	for ci := range caps {
		sums, err := src.Summaries(ctx, caps[ci].ID)
		if err != nil {
			return nil, err
		}
		for k := range sums {
			for _, cc := range sums[k].CPUs {
				if cc.Samples == 0 {
					continue
				}
				r, err := rows.row(cc.CPU)
				if err != nil {
					return nil, fmt.Errorf("host %q: %w", host, err)
				}
				for len(hist) <= r {
					hist = append(hist, [usualBins]int32{})
				}
				hist[r][measure(cc.Counts)*(usualBins-1)/cc.Samples]++
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	usual := make([]float64, len(hist))
	for r := range hist {
		var total, seen int64
		for _, n := range hist[r] {
			total += int64(n)
		}
		for bin, n := range hist[r] {
			if seen += int64(n); seen > total/2 {
				usual[r] = float64(bin) / (usualBins - 1)
				break
			}
		}
	}
	// Pass 2: per capture and CPU, the runs of hot seconds.
	second := int64(time.Second)
	minSecs := max(1, (opt.Min+second-1)/second)
	type run struct {
		open        bool
		start, last int64 // wall-clock starts of the first and last second
		secs        int64
		n, busy, sy int64
	}
	runs := make([]run, len(hist))
	for ci := range caps {
		c := &caps[ci]
		sums, err := src.Summaries(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		// A second at the capture's edge holds fewer samples: it is judged by
		// the samples it has, if it has at least half a second's worth.
		enough := int64(c.Hz / 2)
		emit := func(r int, cpu int32) {
			ru := &runs[r]
			if ru.open && ru.secs >= minSecs {
				v := ru.busy
				if system {
					v = ru.sy
				}
				u := usual[r]
				sp := Spot{CPU: cpu, Start: ru.start, End: ru.last + second,
					Capture: c.ID, CaptureName: c.Name, Offset: c.Offset, T0: c.T0, Approximate: c.Approximate,
					Busy: float64(ru.busy) / float64(ru.n), System: float64(ru.sy) / float64(ru.n), Samples: v, Usual: u,
					Score: float64(v) * (1 - u)}
				if k, _ := slices.BinarySearchFunc(marks, sp.End, func(m subsecond.Marker, t int64) int { return cmp.Compare(m.Time, t) }); k < len(marks) && marks[k].Time-sp.End <= opt.Near {
					sp.Marker, sp.Before = &marks[k], marks[k].Time-sp.End
				}
				rep.Found++
				best.offer(sp, keep)
			}
			ru.open = false
		}
		for k := range sums {
			wall := sums[k].Start + c.Offset
			for _, cc := range sums[k].CPUs {
				r, _ := rows.row(cc.CPU)
				ru := &runs[r]
				hot := cc.Samples >= enough && cc.Samples > 0 && float64(measure(cc.Counts)) >= opt.Threshold*float64(cc.Samples)
				if ru.open && (!hot || wall != ru.last+second) {
					emit(r, cc.CPU)
				}
				if !hot {
					continue
				}
				if !ru.open {
					*ru = run{open: true, start: wall}
				}
				ru.last, ru.secs = wall, ru.secs+1
				ru.n, ru.busy, ru.sy = ru.n+cc.Samples, ru.busy+cc.Busy, ru.sy+cc.System
			}
		}
		for r := range runs {
			emit(r, rows.ids[r])
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	rep.Spots = best.sorted()
	for i := range rep.Spots[:min(len(rep.Spots), described)] {
		if err := describe(ctx, src, &rep.Spots[i], opt); err != nil {
			return nil, err
		}
	}
	linkSpots(rep.Spots, caps)
	return rep, nil
}

// linkSpots sets each spot's links to its capture's views (see Spot).
func linkSpots(spots []Spot, caps []Capture) {
	prev := map[string]string{} // capture → the one before it
	for i := 1; i < len(caps); i++ {
		prev[caps[i].ID] = caps[i-1].ID
	}
	for i := range spots {
		sp := &spots[i]
		lo, hi := query.FormatSeconds(sp.Start-sp.Offset-sp.T0), query.FormatSeconds(sp.End-sp.Offset-sp.T0)
		qs := fmt.Sprintf("?cpu=%d&start=%s&end=%s", sp.CPU, lo, hi)
		sp.URL = link.ProfilePage.Path(sp.Capture) + qs
		sp.FlameURL = link.FlamePage.Path(sp.Capture) + qs
		if base, ok := prev[sp.Capture]; ok {
			sp.CompareURL = link.DiffPage.Path(sp.Capture) + qs + "&base=" + url.QueryEscape(base) + "&start2=" + lo + "&end2=" + hi
		}
	}
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

// describe names what ran in s from its capture's samples: the capture's
// own hot spot on that CPU that overlaps s most gives its comm, function,
// stack and finer edges.
func describe(ctx context.Context, src Source, s *Spot, opt HotOptions) error {
	c, err := src.Capture(ctx, s.Capture)
	if err != nil {
		return err
	}
	rep, err := heatmap.Hotspots(c, query.Filter{CPUs: []int32{s.CPU}}, heatmap.HotOptions{Measure: opt.Measure,
		Threshold: min(opt.Threshold, query.DefaultThreshold), Min: int64(time.Second), Limit: -1, Cells: 1})
	if err != nil {
		return nil // nothing finer to say: keep the summaries' episode
	}
	var best *heatmap.Spot
	bestOv := int64(0)
	for i := range rep.Spots {
		h := &rep.Spots[i]
		ov := min(h.End+s.Offset, s.End) - max(h.Start+s.Offset, s.Start)
		if ov > bestOv {
			best, bestOv = h, ov
		}
	}
	if best == nil {
		return nil
	}
	s.Comm, s.CommShare, s.Function, s.Stack = best.Comm, best.CommShare, best.Function, best.Stack
	s.Start, s.End = best.Start+s.Offset, best.End+s.Offset
	return nil
}
