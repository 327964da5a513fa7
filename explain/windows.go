package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
)

// input is what Explain reads before any sample: the host's captures
// placed on its timeline and all of its markers, in time order.
type input struct {
	host    string
	caps    []timeline.Capture
	markers []subsecond.Marker
}

// gather reads the host's captures and markers.
func gather(ctx context.Context, src Source, host string, opt *Options) (*input, error) {
	caps, un, err := timeline.HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("host %q: none of its %d captures has a wall-clock time: %w", host, un, subsecond.ErrEmptyRange)
	}
	ms, err := src.Markers(ctx, host, 0, timeline.EndOfTime)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ms, func(a, b subsecond.Marker) int { return cmp.Compare(a.Time, b.Time) })
	return &input{host: host, caps: caps, markers: ms}, nil
}

// plan is the windows Explain reads: the before-windows of the matching
// markers, merged where they overlap, and the control windows; available
// control windows were there before sampling, and dropped before-windows
// were mostly unrecorded.
type plan struct {
	matching  []subsecond.Marker
	before    []Window
	controls  []Window
	available int
	dropped   int
	// series are the host series' means in windows(), when the source
	// keeps series (readSeries).
	series []seriesValues
}

// windows returns the plan's windows, the before-windows first.
func (pl *plan) windows() []Window {
	return append(append([]Window{}, pl.before...), pl.controls...)
}

// planWindows chooses the windows (see docs/explain.md, "Windows").
func planWindows(in *input, opt *Options) (*plan, error) {
	caps := in.caps
	if opt.Session > 0 {
		n := caps[len(caps)-1].Session
		if opt.Session > n {
			return nil, query.Invalidf("session", "the host has %d sessions, not %d", n, opt.Session)
		}
		caps = slices.DeleteFunc(slices.Clone(caps), func(c timeline.Capture) bool { return c.Session != opt.Session })
	}
	from, to := opt.From, opt.To
	if to == 0 {
		to = timeline.EndOfTime
	}
	pl := &plan{}
	for _, m := range in.markers {
		if m.Time >= from && m.Time < to && (opt.Match == nil || opt.Match.MatchString(m.Text)) {
			pl.matching = append(pl.matching, m)
		}
	}
	match := "any text"
	if opt.Match != nil {
		match = fmt.Sprintf("%q", opt.Match.String())
	}
	if len(pl.matching) == 0 {
		return nil, fmt.Errorf("host %q has no marker matching %s in the range asked (%d markers in all); post the markers (subsecond markers add) or change match: %w",
			in.host, match, len(in.markers), subsecond.ErrEmptyRange)
	}
	recs := timeline.Recordings(caps)
	first, last := recs[0].Start, recs[len(recs)-1].End
	B := int64(opt.Before)

	// Before-windows, merged where they overlap.
	var merged []Window
	for _, m := range pl.matching {
		a := m.Time - B
		if n := len(merged); n > 0 && a < merged[n-1].To {
			merged[n-1].To = m.Time
			merged[n-1].Markers = append(merged[n-1].Markers, m)
			continue
		}
		merged = append(merged, Window{From: a, To: m.Time, Markers: []subsecond.Marker{m}})
	}
	for _, w := range merged {
		if w.To <= first || w.From >= last {
			if opt.Session == 0 {
				pl.dropped++ // no recording near it
			}
			continue // outside the session asked for
		}
		w.Missing = timeline.Missing(recs, w.From, w.To)
		if 2*w.Missing > w.To-w.From {
			pl.dropped++
			continue
		}
		w.Session = sessionOf(caps, w.From, w.To)
		pl.before = append(pl.before, w)
	}
	if len(pl.before) == 0 {
		return nil, fmt.Errorf("host %q: the host's captures recorded at most half of the %s before each of the %d markers matching %s; record while the markers happen, or choose another session: %w",
			in.host, opt.Before, len(pl.matching), match, subsecond.ErrEmptyRange)
	}
	if len(pl.before) > MaxWindows {
		return nil, query.Invalidf("match", "the %d windows before the markers matching %s exceed %d; narrow match, from and to", len(pl.before), match, MaxWindows)
	}

	// Control windows: the recordings of the same sessions cut into
	// windows of the same length, none within Guard of any marker.
	sessions := map[int]bool{}
	for _, w := range pl.before {
		sessions[w.Session] = true
	}
	G := int64(opt.Guard)
	var all []Window
	for _, r := range recs {
		s := r.Captures[0].Session
		if !sessions[s] {
			continue
		}
		for a := r.Start; a+B <= r.End; a += B {
			b := a + B
			if near(in.markers, a-G, b+G) || overlaps(pl.before, a, b) {
				continue
			}
			all = append(all, Window{From: a, To: b, Session: s})
		}
	}
	pl.available = len(all)
	if len(all) > opt.Controls {
		// A seeded sample: the windows whose keys, a hash of the seed
		// and the window's start, are the smallest. Each window is as
		// likely to be kept, and keeps its key as the host records on,
		// so that a host recording live, asked again after each
		// capture, keeps most of its sample (whose counts the cache
		// keeps) where a shuffle drew it anew.
		seed := mix(opt.Seed)
		key := func(w Window) uint64 { return mix(seed ^ uint64(w.From)) }
		slices.SortFunc(all, func(a, b Window) int { return cmp.Compare(key(a), key(b)) })
		all = all[:opt.Controls]
		slices.SortFunc(all, func(a, b Window) int { return cmp.Compare(a.From, b.From) })
	}
	pl.controls = all
	if len(all) < MinControls {
		return nil, fmt.Errorf("host %q: %d control windows of %s (none within %s of a marker) in the sessions of the markers, fewer than %d: %s: %w",
			in.host, len(all), opt.Before, opt.Guard, MinControls, fewControls, subsecond.ErrEmptyRange)
	}
	return pl, nil
}

// mix is SplitMix64's output function (Steele, Lea and Flood, OOPSLA
// 2014): a bijection of 64 bits whose outputs for nearby inputs look
// independent.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// near reports whether some marker of ms (in time order) lies in [a, b).
func near(ms []subsecond.Marker, a, b int64) bool {
	i, _ := slices.BinarySearchFunc(ms, a, func(m subsecond.Marker, t int64) int { return cmp.Compare(m.Time, t) })
	return i < len(ms) && ms[i].Time < b
}

// overlaps reports whether some window of ws (in time order, disjoint)
// overlaps [a, b).
func overlaps(ws []Window, a, b int64) bool {
	i, _ := slices.BinarySearchFunc(ws, a, func(w Window, t int64) int {
		if w.To <= t {
			return -1
		}
		return 1
	})
	return i < len(ws) && ws[i].From < b
}

// sessionOf returns the session of the capture among caps that overlaps
// [a, b) most.
func sessionOf(caps []timeline.Capture, a, b int64) int {
	best, s := int64(0), 0
	for _, c := range caps {
		if ov := min(b, c.End) - max(a, c.Start); ov > best {
			best, s = ov, c.Session
		}
	}
	return s
}
