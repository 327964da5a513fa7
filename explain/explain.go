// Package explain ranks what is unusual in a host's samples before its
// markers (a NIC reset, an OOM kill), with a significance a reader can
// trust: each candidate feature's share of the host's samples in the
// windows just before the markers is compared with its share in control
// windows of the same recording sessions, by a permutation test over
// windows and Benjamini–Hochberg across the candidates. docs/explain.md
// states the method and its assumptions.
//
//	rep, err := explain.Explain(ctx, src, "node-1", explain.Options{
//		Match:  regexp.MustCompile(`mlx5.*reset`),
//		Before: 10 * time.Second,
//	})
//	for _, f := range rep.Findings[:3] {
//		fmt.Printf("%s %s: %.1f%% before, %.1f%% usually, %d of %d, q=%.3g\n",
//			f.Kind, f.Comm, 100*f.BeforeShare, 100*f.ControlShare, f.StoodOut, f.Of, f.Q)
//	}
package explain

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
)

// Source is what Explain reads: a host's captures (timeline.Source; a
// timeline.WindowSource is read a window at a time) and its markers in
// [from, to), Unix ns, in time order.
type Source interface {
	timeline.Source
	Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error)
}

// SeriesSource is a Source that also keeps the host's series (see
// subsecond.Series): the series of kind name with a point in [from, to).
// Explain tests the series it finds there too (see KindSeries).
type SeriesSource interface {
	Series(ctx context.Context, host, name string, from, to int64) ([]subsecond.Series, error)
}

// Options ask Explain for a set of markers and how to contrast them.
// Zero fields take the defaults.
type Options struct {
	// Match selects the markers by their text; nil for all of them.
	Match *regexp.Regexp
	// Before is the length of the window before each marker, [m −
	// Before, m); default DefaultBefore, from 1 s to MaxBefore.
	Before time.Duration
	// Guard keeps control windows away from every marker, matching or
	// not: no control window has a marker within Guard of it; default
	// DefaultGuard. Negative: none.
	Guard time.Duration
	// Controls is the most control windows kept, a seeded sample of all
	// there are; default DefaultControls, at most MaxControls.
	Controls int
	// Permutations is the most random relabelings of the windows, from
	// MinPermutations to MaxPermutations; default DefaultPermutations. A
	// feature's stop at the Exceedances-th as extreme as observed.
	Permutations int
	// Seed seeds the control sample and the relabelings: the same seed
	// gives the same report.
	Seed uint64
	// Session is the recording session (timeline.SessionGap) to read, 1
	// for the host's first; 0 for every session that holds a marker's
	// window.
	Session int
	// From and To bound the markers' times, [From, To) in Unix ns; 0 for
	// no bound. The control windows are still all of the sessions'.
	From, To int64
	// Limit is how many findings the report lists; default DefaultLimit.
	Limit int
}

// Defaults and bounds of Options; those of the query's parameters (before,
// controls) are the query table's.
const (
	DefaultBefore       = time.Duration(query.DefaultBefore)
	MaxBefore           = time.Duration(query.MaxBefore)
	DefaultGuard        = 60 * time.Second
	DefaultControls     = query.DefaultControls
	MaxControls         = query.MaxControls
	DefaultPermutations = 9999
	MinPermutations     = 1000
	MaxPermutations     = 100000
	DefaultLimit        = 50
	// MaxWindows bounds the before-windows (after merging).
	MaxWindows = 1000
	// MinControls is the fewest control windows Explain contrasts with.
	MinControls = 10
)

// Kinds of Feature.
const (
	KindComm       = "comm"        // a command's samples
	KindFunction   = "function"    // a command's samples with Function anywhere on the stack, counted once each
	KindLeaf       = "leaf"        // a command's samples with Function as the leaf
	KindStack      = "stack"       // a command's samples whose stack starts (root first) with Stack
	KindCPU        = "cpu"         // a command's samples on one CPU: a core taken over
	KindKernelCore = "kernel-core" // a command's system samples on CPUs pegged in the kernel (see PegShare)
	KindSeries     = "series"      // a host series' mean in the window
)

// Feature is one candidate: what ran (Comm and, by Kind, Function, Stack
// or CPU) or a host series (Series, Label, CPU).
type Feature struct {
	Kind     string `json:"kind"`
	Comm     string `json:"comm,omitempty"`
	Function string `json:"function,omitempty"`
	// Stack is a stack prefix, root first, after the command.
	Stack []string `json:"stack,omitempty"`
	// CPU is the CPU of a KindCPU feature or a per-CPU series; -1 for none.
	CPU    int32  `json:"cpu"`
	Series string `json:"series,omitempty"`
	Label  string `json:"label,omitempty"`
	// Unit is "share" (a fraction of the host's samples in the window)
	// or, for a series, its kind's unit.
	Unit string `json:"unit"`
}

// Finding is a feature's contrast. BeforeShare and ControlShare are its
// mean value over the before-windows and over the control windows (for a
// sample feature, its share of all of the host's samples in the window,
// idle ones included); Diff is their difference and Ratio their ratio,
// the control share taken as at least half a sample of an average control
// window when the feature never ran there. StoodOut counts the
// before-windows, of Of, whose value is above the Percentile of the
// control values, and Markers are those windows' markers (Unix ns). P is
// the permutation test's one-sided p-value, Q Benjamini–Hochberg's q
// across the report's Tested features. Also lists the features with the
// same value in every window, folded into this one.
type Finding struct {
	Feature
	BeforeShare  float64   `json:"before_share"`
	ControlShare float64   `json:"control_share"`
	Ratio        float64   `json:"ratio"`
	Diff         float64   `json:"diff"`
	StoodOut     int       `json:"stood_out"`
	Of           int       `json:"of"`
	Markers      []int64   `json:"markers_ns"`
	P            float64   `json:"p"`
	Q            float64   `json:"q"`
	Also         []Feature `json:"also,omitempty"`
}

// Window is a wall-clock range of the host, [From, To) in Unix ns: a
// before-window holds the markers it precedes (several when their windows
// overlapped and were merged), a control window none. Samples counts the
// host's samples in it (the default event), Missing the ns of it no
// capture recorded.
type Window struct {
	From    int64              `json:"from_ns"`
	To      int64              `json:"to_ns"`
	Markers []subsecond.Marker `json:"markers,omitempty"`
	Samples int64              `json:"samples"`
	Missing int64              `json:"missing_ns,omitempty"`
	Session int                `json:"session"`
}

// Report is what Explain found. Windows are the before-windows tested (K
// of them), Controls the control windows, chosen (a seeded sample when
// more than Options.Controls were Available); Dropped counts the
// before-windows left out for being mostly unrecorded or holding fewer
// than MinSamples samples. Tested counts the candidate features tested,
// the m of the q-values; Findings are the first Limit of them, ranked by
// q. Exact is set when the p-values were enumerated over every
// relabeling (one before-window: p ≥ MinP = 1/(controls + 1)); else up
// to Permutations random relabelings were drawn for each feature (fewer
// for a feature far from significant: see docs/explain.md), and MinP =
// 1/(Permutations + 1).
type Report struct {
	Host         string    `json:"host"`
	Match        string    `json:"match"`
	Session      int       `json:"session"`
	Before       int64     `json:"before_ns"`
	Guard        int64     `json:"guard_ns"`
	Windows      []Window  `json:"windows"`
	Controls     []Window  `json:"controls"`
	Available    int       `json:"controls_available"`
	Dropped      int       `json:"dropped"`
	Tested       int       `json:"tested"`
	Permutations int       `json:"permutations"`
	Exact        bool      `json:"exact"`
	MinP         float64   `json:"min_p"`
	Seed         uint64    `json:"seed"`
	Percentile   int       `json:"percentile"`
	Findings     []Finding `json:"findings"`
}

// OptionsOf returns the options q asks Explain for: its markers'
// expression (match), window (before), control windows (controls, 0 for
// as many as MaxControls), seed, session and range of markers (from, to).
func OptionsOf(q *query.Query) (Options, error) {
	opt := Options{Before: time.Duration(q.Before), Controls: q.Controls, Seed: uint64(q.Seed), Session: q.Session,
		From: q.From.NS, To: q.To.NS}
	if opt.Controls == 0 {
		opt.Controls = MaxControls
	}
	if q.Match != "" {
		re, err := regexp.Compile(q.Match)
		if err != nil {
			return opt, query.Invalidf("match", "%v", err)
		}
		opt.Match = re
	}
	return opt, nil
}

// check fills opt's defaults and refuses values out of bounds with a
// *query.ParamError.
func (opt *Options) check() error {
	opt.Before = cmp.Or(opt.Before, DefaultBefore)
	opt.Guard = cmp.Or(opt.Guard, DefaultGuard)
	opt.Guard = max(opt.Guard, 0)
	opt.Controls = cmp.Or(opt.Controls, DefaultControls)
	opt.Permutations = cmp.Or(opt.Permutations, DefaultPermutations)
	opt.Limit = cmp.Or(opt.Limit, DefaultLimit)
	switch {
	case opt.Before < time.Second || opt.Before > MaxBefore:
		return query.Invalidf("before", "%s is outside 1 s to %s, the windows explain reads", opt.Before, MaxBefore)
	case opt.Controls < MinControls || opt.Controls > MaxControls:
		return query.Invalidf("controls", "%d control windows is outside %d to %d", opt.Controls, MinControls, MaxControls)
	case opt.Permutations < MinPermutations || opt.Permutations > MaxPermutations:
		return query.Invalidf("permutations", "%d is outside %d to %d", opt.Permutations, MinPermutations, MaxPermutations)
	case opt.Session < 0:
		return query.Invalidf("session", "%d is not a session number", opt.Session)
	case opt.Limit < 0:
		return query.Invalidf("limit", "%d is negative", opt.Limit)
	case opt.To != 0 && opt.To <= opt.From:
		return query.Invalidf("to", "the range %s to %s is empty; to must be after from", query.DisplayWallTime(opt.From), query.DisplayWallTime(opt.To))
	}
	return nil
}

// Explain contrasts the host's samples in the windows before its markers
// that opt.Match selects with control windows of the same sessions (see
// the package doc and docs/explain.md). A host without a matching marker,
// or whose markers' windows no capture recorded, or with fewer than
// MinControls control windows, is an error wrapping
// subsecond.ErrEmptyRange that says what to do; bad options a
// *query.ParamError.
func Explain(ctx context.Context, src Source, host string, opt Options) (*Report, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	in, err := gather(ctx, src, host, &opt)
	if err != nil {
		return nil, err
	}
	return explain(ctx, src, in, &opt)
}

// explain answers for what gather read.
func explain(ctx context.Context, src Source, in *input, opt *Options) (*Report, error) {
	pl, err := planSeries(ctx, src, in, opt)
	if err != nil {
		return nil, err
	}
	return explainPlan(ctx, src, in, pl, opt, func(ctx context.Context, wins []Window) (*counts, error) {
		return countWindows(ctx, src, in, wins, false)
	})
}

// planSeries chooses the windows (planWindows) and reads the host series'
// means in them: all an explanation reads but the samples.
func planSeries(ctx context.Context, src Source, in *input, opt *Options) (*plan, error) {
	pl, err := planWindows(in, opt)
	if err != nil {
		return nil, err
	}
	if pl.series, err = readSeries(ctx, src, in.host, pl.windows()); err != nil {
		return nil, fmt.Errorf("explain host %q: %w", in.host, err)
	}
	return pl, nil
}

// explainPlan answers for what gather read, in the windows pl chose,
// their samples counted by count.
func explainPlan(ctx context.Context, src Source, in *input, pl *plan, opt *Options, count func(context.Context, []Window) (*counts, error)) (*Report, error) {
	rep := &Report{Host: in.host, Session: opt.Session, Before: int64(opt.Before), Guard: int64(opt.Guard),
		Permutations: opt.Permutations, Seed: opt.Seed, Percentile: Percentile, Available: pl.available, Dropped: pl.dropped}
	if opt.Match != nil {
		rep.Match = opt.Match.String()
	}
	wins := pl.windows()
	cs, err := count(ctx, wins)
	if err != nil {
		return nil, fmt.Errorf("explain host %q: %w", in.host, err)
	}
	// Windows holding too few samples to say anything are dropped: a
	// before-window counts in Dropped; a control window just goes.
	var keep []int
	for i := range wins {
		wins[i].Samples = cs.total[i]
		if cs.total[i] >= MinSamples {
			keep = append(keep, i)
		} else if i < len(pl.before) {
			rep.Dropped++
		}
	}
	for _, i := range keep {
		if i < len(pl.before) {
			rep.Windows = append(rep.Windows, wins[i])
		} else {
			rep.Controls = append(rep.Controls, wins[i])
		}
	}
	if len(rep.Windows) == 0 {
		return nil, fmt.Errorf("host %q: every window before the %d matching markers holds fewer than %d samples: %w",
			in.host, len(pl.matching), MinSamples, subsecond.ErrEmptyRange)
	}
	if len(rep.Controls) < MinControls {
		return nil, fmt.Errorf("host %q: %d control windows of %s hold samples, fewer than %d: %s: %w",
			in.host, len(rep.Controls), opt.Before, MinControls, fewControls, subsecond.ErrEmptyRange)
	}
	cs.series = pl.series
	t := cs.table(keep, len(pl.before))
	t.markersOf(keep, wins)
	rep.Tested = len(t.features)
	var exact bool
	rep.Findings, exact = contrast(t, statOptions{perms: opt.Permutations, seed: opt.Seed})
	rep.Exact = exact
	if exact {
		rep.Permutations = 0
		rep.MinP = 1 / float64(len(rep.Controls)+1)
	} else {
		rep.MinP = 1 / float64(opt.Permutations+1)
	}
	if len(rep.Findings) > opt.Limit {
		// A copy: the first Limit of up to MaxCandidates findings would
		// keep them all, and what they point to, as long as the report
		// lives (in the cache of reports).
		rep.Findings = slices.Clone(rep.Findings[:opt.Limit])
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	return rep, nil
}

// fewControls says what to do about too few control windows.
const fewControls = "record more of the session, or shorten before or the guard around markers"
