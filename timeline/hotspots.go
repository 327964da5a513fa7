package timeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
)

// HotOptions tune Hotspots. Zero fields take the defaults.
type HotOptions struct {
	// System measures episodes by system time (the busy samples in the
	// kernel) instead of busy time: a core pegged mostly in the kernel.
	System    bool
	Threshold float64 // fraction of a second's samples that counts as hot, (0, 1]; default subsecond.DefaultThreshold
	Min       int64   // shortest episode, ns; default subsecond.DefaultMin, at least 1 s
	Limit     int     // episodes to return, best first; default 20
	// Markers, when given, rank first the episodes that end within Near
	// before a marker (default 60 s).
	Markers []subsecond.Marker
	Near    time.Duration
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
}

// Report is the night's hot spots, best first; Found counts them all.
type Report struct {
	Host    string `json:"host"`
	Measure string `json:"measure"`
	Found   int    `json:"found"`
	Spots   []Spot `json:"hotspots"`
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
	if opt.Threshold == 0 {
		opt.Threshold = subsecond.DefaultThreshold
	}
	if opt.Min == 0 {
		opt.Min = subsecond.DefaultMin
	}
	if opt.Limit == 0 {
		opt.Limit = 20
	}
	if opt.Near == 0 {
		opt.Near = time.Minute
	}
	if !(opt.Threshold > 0 && opt.Threshold <= 1) {
		return nil, fmt.Errorf("threshold: %v is not a fraction in (0, 1]: %w", opt.Threshold, subsecond.ErrInvalid)
	}
	if opt.Min < 0 {
		return nil, fmt.Errorf("min: negative: %w", subsecond.ErrInvalid)
	}
	caps, _, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	rep := &Report{Host: host, Measure: "busy", Spots: []Spot{}}
	if opt.System {
		rep.Measure = "system"
	}
	type sec struct {
		wall        int64
		n, busy, sy int64
	}
	// Per capture, per CPU: its seconds in order.
	type run struct {
		c    *Capture
		cpu  int32
		secs []sec
	}
	var runs []run
	fracs := map[int32][]float64{}
	for ci := range caps {
		c := &caps[ci]
		sums, err := src.Summaries(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		per := map[int32][]sec{}
		for _, s := range sums {
			for _, cc := range s.CPUs {
				if cc.Samples == 0 {
					continue
				}
				per[cc.CPU] = append(per[cc.CPU], sec{s.Start + c.Offset, cc.Samples, cc.Busy, cc.System})
				v := cc.Busy
				if opt.System {
					v = cc.System
				}
				fracs[cc.CPU] = append(fracs[cc.CPU], float64(v)/float64(cc.Samples))
			}
		}
		for cpu, secs := range per {
			runs = append(runs, run{c, cpu, secs})
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	usual := map[int32]float64{}
	for cpu, f := range fracs {
		slices.Sort(f)
		usual[cpu] = f[len(f)/2]
	}
	second := int64(time.Second)
	minSecs := max(1, (opt.Min+second-1)/second)
	for _, r := range runs {
		// A second at the capture's edge holds fewer samples: it is judged by
		// the samples it has, if it has at least half a second's worth.
		enough := int64(r.c.Hz / 2)
		hot := func(s sec) bool {
			v := s.busy
			if opt.System {
				v = s.sy
			}
			return s.n >= enough && float64(v) >= opt.Threshold*float64(s.n)
		}
		for i := 0; i < len(r.secs); {
			if !hot(r.secs[i]) {
				i++
				continue
			}
			j := i
			var n, busy, sy int64
			for j < len(r.secs) && hot(r.secs[j]) && (j == i || r.secs[j].wall-r.secs[j-1].wall == second) {
				n, busy, sy = n+r.secs[j].n, busy+r.secs[j].busy, sy+r.secs[j].sy
				j++
			}
			if int64(j-i) >= minSecs {
				v := busy
				if opt.System {
					v = sy
				}
				u := usual[r.cpu]
				rep.Spots = append(rep.Spots, Spot{CPU: r.cpu, Start: r.secs[i].wall, End: r.secs[j-1].wall + second,
					Capture: r.c.ID, CaptureName: r.c.Name, Offset: r.c.Offset, T0: r.c.T0, Approximate: r.c.Approximate,
					Busy: float64(busy) / float64(n), System: float64(sy) / float64(n), Samples: v, Usual: u,
					Score: float64(v) * (1 - u)})
			}
			i = j
		}
	}
	for i := range rep.Spots {
		s := &rep.Spots[i]
		for k := range opt.Markers {
			m := &opt.Markers[k]
			if before := m.Time - s.End; before >= 0 && before <= int64(opt.Near) && (s.Marker == nil || before < s.Before) {
				s.Marker, s.Before = m, before
			}
		}
	}
	slices.SortStableFunc(rep.Spots, func(a, b Spot) int {
		if (a.Marker != nil) != (b.Marker != nil) {
			if a.Marker != nil {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Start, b.Start), cmp.Compare(a.CPU, b.CPU))
	})
	rep.Found = len(rep.Spots)
	if opt.Limit > 0 && len(rep.Spots) > opt.Limit {
		rep.Spots = rep.Spots[:opt.Limit]
	}
	for i := range rep.Spots[:min(len(rep.Spots), described)] {
		if err := describe(ctx, src, &rep.Spots[i], opt); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// describe names what ran in s from its capture's samples: the capture's
// own hot spot on that CPU that overlaps s most gives its comm, function,
// stack and finer edges.
func describe(ctx context.Context, src Source, s *Spot, opt HotOptions) error {
	c, err := src.Capture(ctx, s.Capture)
	if err != nil {
		return err
	}
	rep, err := heatmap.Hotspots(c, subsecond.Filter{CPUs: []int32{s.CPU}}, heatmap.HotOptions{
		Threshold: min(opt.Threshold, subsecond.DefaultThreshold), Min: int64(time.Second), Limit: -1, Cells: 1})
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
