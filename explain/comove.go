package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/stats"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
)

// MoveOptions ask Moves for what moves with one series or one feature
// over a span of a host's recording. Zero fields take the defaults.
type MoveOptions struct {
	// Series names the series the others are ranked against; nil when
	// Feature does. A per-CPU kind with CPU subsecond.Unknown and no
	// host-wide series is the sum (rates) or mean (shares) over the CPUs.
	Series *subsecond.SeriesKey
	// Feature names the command (Kind KindComm) or command + function
	// (KindFunction) whose share the host's series are ranked against;
	// read when Series is nil.
	Feature *Feature
	// From and To bound the span read, Unix ns; 0 for the host's
	// session (Session, else the latest).
	From, To int64
	Session  int
	// Windows is the most windows of Length read, spread over the
	// recorded time of the span on a grid of the wall clock (see spread):
	// half to all of them when the time holds that many; default
	// DefaultMoveWindows, at most MaxControls.
	Windows int
	Length  time.Duration
	// Limit is how many of the moving features are listed; default
	// DefaultLimit.
	Limit int
}

// MoveOptionsOf returns what Moves is asked by q: what moves with the
// command q.Filter.Comm (and function q.Frame) when it names one, else
// with the series q.Series (q.SeriesLabel, q.SeriesCPU), over q's from, to and
// session.
func MoveOptionsOf(q *query.Query) MoveOptions {
	opt := MoveOptions{From: q.From.NS, To: q.To.NS, Session: q.Session}
	if q.Filter.Comm != "" {
		f := Feature{Kind: KindComm, Comm: q.Filter.Comm, CPU: subsecond.Unknown}
		if q.Frame != "" {
			f.Kind, f.Function = KindFunction, q.Frame
		}
		opt.Feature = &f
	} else {
		opt.Series = &subsecond.SeriesKey{Name: q.Series, CPU: int32(q.SeriesCPU), Label: q.SeriesLabel}
	}
	return opt
}

// Defaults of MoveOptions.
const (
	DefaultMoveWindows = 120
	DefaultMoveLength  = 5 * time.Second
	// MinMoveWindows is the fewest windows with both values that a rank
	// correlation is given for.
	MinMoveWindows = 8
)

// Moving is a feature and how it moves with what Moves was asked about:
// Spearman's rank correlation Rho over the N windows where both have a
// value. Rho near 1: they rise and fall together; near −1: one rises as
// the other falls.
type Moving struct {
	Feature
	Rho float64 `json:"rho"`
	N   int     `json:"n"`
}

// Movement is Moves' answer: Of is what the others are ranked against,
// over Windows (of Length ns) spread over [From, To); Moving are the
// features (commands and functions for a series, series for a feature),
// by |Rho|, then N.
type Movement struct {
	Host    string   `json:"host"`
	Of      Feature  `json:"of"`
	From    int64    `json:"from_ns"`
	To      int64    `json:"to_ns"`
	Length  int64    `json:"length_ns"`
	Windows []Window `json:"windows"`
	Moving  []Moving `json:"moving"`
}

// Moves ranks what moves with a host's series over a span of its
// recording (the commands and command + function pairs whose share of the
// host's samples rises and falls with it), or, for a command or function,
// the host's series that move with its share. Both are read in the same
// windows, spread over the recorded time (see spread), the series' points
// counted in the window holding the end of their interval, so that a
// series and the samples of the same seconds are compared. Windows of one
// recording are not independent (a trend in both gives a correlation), so
// Moves gives Rho and N, not a p-value: it says where to look, explain
// says what is unusual.
func Moves(ctx context.Context, src Source, host string, opt MoveOptions) (*Movement, error) {
	pl, err := planMoves(ctx, src, host, opt)
	if err != nil {
		return nil, err
	}
	return pl.moves(ctx, func(ctx context.Context, wins []Window) (*counts, error) {
		return countWindows(ctx, src, &input{host: host, caps: pl.caps}, wins, true)
	})
}

// movePlan is what Moves reads before any sample: the host's captures,
// the span and its windows, and the means in those windows of the series
// it ranks (of the series asked for, or of every series of the host).
type movePlan struct {
	host     string
	opt      MoveOptions
	caps     []timeline.Capture
	from, to int64
	wins     []Window
	of       Feature     // the series asked for
	y        []float64   // its means, by window
	series   []Feature   // the host's series, for a feature
	ys       [][]float64 // their means, by window
}

// planMoves checks opt, fills its defaults, and reads all that Moves reads
// but the samples.
func planMoves(ctx context.Context, src Source, host string, opt MoveOptions) (*movePlan, error) {
	ss, ok := src.(SeriesSource)
	if !ok {
		return nil, fmt.Errorf("this store keeps no host series: %w", subsecond.ErrNotFound)
	}
	opt.Windows = cmp.Or(opt.Windows, DefaultMoveWindows)
	opt.Length = cmp.Or(opt.Length, DefaultMoveLength)
	opt.Limit = cmp.Or(opt.Limit, DefaultLimit)
	if opt.Windows < MinMoveWindows || opt.Windows > MaxControls {
		return nil, query.Invalidf("windows", "%d windows is outside %d to %d", opt.Windows, MinMoveWindows, MaxControls)
	}
	if opt.Series == nil && (opt.Feature == nil || opt.Feature.Comm == "") {
		return nil, query.Invalidf("name", "give a series (name, and cpu or label where the kind has several) or a command (comm, and function)")
	}
	caps, un, err := timeline.HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("host %q: none of its %d captures has a wall-clock time: %w", host, un, subsecond.ErrEmptyRange)
	}
	from, to, err := timeline.DefaultRange(caps, timeline.Span{From: opt.From, To: opt.To, Session: opt.Session})
	if err != nil {
		return nil, err
	}
	wins := spread(timeline.Recordings(caps), from, to, opt.Windows, int64(opt.Length))
	if len(wins) < MinMoveWindows {
		return nil, fmt.Errorf("host %q: %d windows of %s recorded in %s – %s, fewer than %d: %w", host, len(wins), opt.Length,
			query.DisplayWallTime(from), query.DisplayWallTime(to), MinMoveWindows, subsecond.ErrEmptyRange)
	}
	pl := &movePlan{host: host, opt: opt, caps: caps, from: from, to: to, wins: wins}
	if opt.Series != nil {
		k := *opt.Series
		kind, ok := subsecond.Kind(k.Name)
		if !ok {
			return nil, query.Invalidf("name", "%q is not a kind of host series", k.Name)
		}
		if pl.y, err = seriesMeans(ctx, ss, host, k, kind, wins); err != nil {
			return nil, err
		}
		pl.of = Feature{Kind: KindSeries, Series: k.Name, CPU: k.CPU, Label: k.Label, Unit: kind.Unit}
		return pl, nil
	}
	for _, kind := range subsecond.SeriesKinds {
		list, err := ss.Series(ctx, host, kind.Name, wins[0].From, wins[len(wins)-1].To+1)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			pl.series = append(pl.series, Feature{Kind: KindSeries, Series: kind.Name, CPU: s.CPU, Label: s.Label, Unit: kind.Unit})
			pl.ys = append(pl.ys, windowMeans(s.Points, wins, kind.Unit == "/s"))
		}
	}
	return pl, nil
}

// moves counts the plan's windows with count and ranks what moves.
func (pl *movePlan) moves(ctx context.Context, count func(context.Context, []Window) (*counts, error)) (*Movement, error) {
	host, wins, opt := pl.host, pl.wins, pl.opt
	cs, err := count(ctx, wins)
	if err != nil {
		return nil, err
	}
	mv := &Movement{Host: host, From: pl.from, To: pl.to, Length: int64(opt.Length), Windows: wins, Moving: []Moving{}}
	feats := make([][]fcount, len(wins)) // the commands' and functions' counts, by window
	for w := range wins {
		f, _ := cs.expand(w)
		feats[w] = slices.Clone(f)
	}
	// shares returns the share of the host's samples of each feature
	// wanted in each window, NaN in a window too small to judge, in one
	// pass over the windows' counts.
	shares := func(want func(f int32) bool) map[int32][]float64 {
		out := map[int32][]float64{}
		for w := range wins {
			if cs.total[w] < MinSamples {
				continue
			}
			for _, c := range feats[w] {
				if !want(c.id) {
					continue
				}
				x, ok := out[c.id]
				if !ok {
					x = make([]float64, len(wins))
					for v := range x {
						if cs.total[v] < MinSamples {
							x[v] = math.NaN()
						}
					}
					out[c.id] = x
				}
				x[w] = float64(c.n) / float64(cs.total[w])
			}
		}
		return out
	}
	if opt.Series != nil {
		mv.Of = pl.of
		ftot := make([]int64, len(cs.keys))
		for w := range wins {
			for _, c := range feats[w] {
				ftot[c.id] += c.n
			}
		}
		xs := shares(func(f int32) bool {
			k := cs.keys[f].kind
			return (k == kComm || k == kFunction) && ftot[f] >= MinCount
		})
		for _, f := range slices.Sorted(maps.Keys(xs)) { // ties keep the features' order
			if rho, n := stats.Spearman(xs[f], pl.y); n >= MinMoveWindows && !math.IsNaN(rho) {
				mv.Moving = append(mv.Moving, Moving{Feature: cs.describe(cs.keys[f]), Rho: rho, N: n})
			}
		}
	} else {
		f := *opt.Feature
		key, ok := fkey{}, false
		if a, found := cs.nameID[f.Comm]; found {
			key, ok = fkey{kind: kComm, a: a}, true
			if f.Function != "" {
				b, found := cs.nameID[f.Function]
				key, ok = fkey{kind: kFunction, a: a, b: b}, found
			}
		}
		var x []float64
		if id, found := cs.feats[key]; ok && found {
			x = shares(func(f int32) bool { return f == id })[id]
			mv.Of = cs.describe(key)
		} else {
			return nil, fmt.Errorf("host %q: %s is not in the %d windows read: %w", host, f.String(), len(wins), subsecond.ErrEmptyRange)
		}
		for i, y := range pl.ys {
			if rho, n := stats.Spearman(x, y); n >= MinMoveWindows && !math.IsNaN(rho) {
				mv.Moving = append(mv.Moving, Moving{Feature: pl.series[i], Rho: rho, N: n})
			}
		}
	}
	slices.SortStableFunc(mv.Moving, func(a, b Moving) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Rho), math.Abs(a.Rho)), cmp.Compare(b.N, a.N))
	})
	mv.Moving = slices.Clone(mv.Moving[:min(len(mv.Moving), opt.Limit)]) // not the features cut, as Explain's findings
	return mv, nil
}

// seriesMeans returns series k's mean in each window: of the series with
// that key, or, for a per-CPU kind asked with CPU Unknown and no host-wide
// series, the sum over the CPUs of a rate and the mean of a share.
func seriesMeans(ctx context.Context, ss SeriesSource, host string, k subsecond.SeriesKey, kind subsecond.SeriesKind, wins []Window) ([]float64, error) {
	list, err := ss.Series(ctx, host, k.Name, wins[0].From, wins[len(wins)-1].To+1)
	if err != nil {
		return nil, err
	}
	rate := kind.Unit == "/s"
	for _, s := range list {
		if s.Key() == k {
			return windowMeans(s.Points, wins, rate), nil
		}
	}
	var sum []float64
	n := 0
	for _, s := range list {
		if k.CPU != subsecond.Unknown || s.Label != k.Label || s.CPU < 0 {
			continue
		}
		m := windowMeans(s.Points, wins, rate)
		if sum == nil {
			sum = m
		} else {
			for w := range sum {
				sum[w] += m[w]
			}
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("host %q has no series %s in the windows read: %w", host, Feature{Kind: KindSeries, Series: k.Name, CPU: k.CPU, Label: k.Label}, subsecond.ErrEmptyRange)
	}
	if !rate {
		for w := range sum {
			sum[w] /= float64(n)
		}
	}
	return sum, nil
}

// spread returns at most n windows of length ns over the time recs
// recorded in [from, to): those starting at a multiple of a step of the
// wall clock (Unix ns) and lying whole in a recording, the step the
// smallest length × 2^k giving at most n. Windows that stay where they
// are as the recording grows are counted once: a host recording live
// gets a capture every few minutes, and windows spread evenly over its
// time moved with each one, so that every count was read again. Until
// the windows would pass n they only gain new ones at the end; then the
// step doubles and every other one stays. So there are n/2 to n of
// them when the time holds that many.
func spread(recs []timeline.Recording, from, to int64, n int, length int64) []Window {
	type seg struct{ a, b int64 }
	var segs []seg
	for _, r := range recs {
		a, b := max(r.Start, from), min(r.End, to)
		if b-a >= length {
			segs = append(segs, seg{a, b})
		}
	}
	// first returns the first multiple of step at or after a.
	first := func(a, step int64) int64 {
		f := a / step * step
		if f < a {
			f += step
		}
		return f
	}
	count := func(step int64) int {
		c := 0
		for _, s := range segs {
			if f := first(s.a, step); f <= s.b-length {
				c += int((s.b-length-f)/step) + 1
			}
		}
		return c
	}
	step := length
	for count(step) > n && step <= math.MaxInt64/4 {
		step *= 2
	}
	var out []Window
	for _, s := range segs {
		for a := first(s.a, step); a <= s.b-length && len(out) < n; a += step {
			out = append(out, Window{From: a, To: a + length})
		}
	}
	return out
}
