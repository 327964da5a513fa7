package explain

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
	"github.com/subsecond/subsecond/timeline"
)

// Cache keeps reports and movements, the most recently used within a
// byte budget, so that a page asking again (its table, then its flame
// graphs) pays for one Explain or Moves. An answer is keyed by its host,
// options and what it read, so that a capture, a marker or a series point
// added or deleted makes another key, never a stale answer: a report by
// the ids of the host's captures, its markers and the series' means in
// its windows; a movement by its windows, the captures that overlap them
// and the series' means in them.
// What is read before the samples (the captures' list, the markers, the
// series) is read on every call; the samples are read, and the answer
// computed, only on a miss, in what enter takes. Concurrent requests for
// one key share one computation, and those that wait for it take
// nothing. Safe for concurrent use.
type Cache struct {
	reports *lru.Cache[cacheKey, *Report]
	moves   *lru.Cache[moveKey, *Movement]
	counts  *lru.Cache[string, *hostCounts] // by host, and by movesCounts + host
}

// Enter takes what a computation runs in (a server's slot for a long
// analysis), waiting while ctx lasts, and returns its release; nil takes
// nothing.
type Enter func(ctx context.Context) (release func(), err error)

// DefaultCacheBudget is the byte budget NewCache takes for 0.
const DefaultCacheBudget = 64 << 20

// NewCache returns a cache within budget bytes (0: DefaultCacheBudget): an
// eighth for reports, an eighth for movements, and the rest for the
// counts of the windows the hosts' explanations read, the hosts asked
// last.
func NewCache(budget int64) *Cache {
	if budget <= 0 {
		budget = DefaultCacheBudget
	}
	return &Cache{
		reports: lru.New[cacheKey](lru.Options[*Report]{Budget: budget / 8, Size: (*Report).bytes}),
		moves:   lru.New[moveKey](lru.Options[*Movement]{Budget: budget / 8, Size: (*Movement).bytes}),
		counts: lru.New[string](lru.Options[*hostCounts]{Budget: budget - budget/4,
			Size: func(*hostCounts) int64 { return 0 }, Growing: func(hc *hostCounts) int64 { return hc.bytes.Load() }}),
	}
}

type cacheKey struct {
	host, match                 string
	before, guard, from, to     int64
	session, controls, perms, n int
	seed                        uint64
	read                        uint64 // hash of the captures' ids, the markers and the series' means
}

// Explain returns Explain's report for host and opt, from the cache when
// it holds one for what the host has now; hit reports that it did. The
// host's captures and markers are read, the windows chosen (an
// explanation without windows is answered) and the series' means in them
// read before the cache is asked; a miss computes in what enter takes.
func (c *Cache) Explain(ctx context.Context, src Source, host string, opt Options, enter Enter) (rep *Report, hit bool, err error) {
	if err := opt.check(); err != nil {
		return nil, false, err
	}
	in, err := gather(ctx, src, host, &opt)
	if err != nil {
		return nil, false, err
	}
	pl, err := planSeries(ctx, src, in, &opt)
	if err != nil {
		return nil, false, err
	}
	h := fnv.New64a()
	for _, k := range in.caps {
		fmt.Fprintf(h, "%s\x00%d\x00", k.ID, k.Offset)
	}
	for _, m := range in.markers {
		fmt.Fprintf(h, "%d\x00%s\x00", m.Time, m.Text)
	}
	var b []byte
	for _, sv := range pl.series {
		b = appendSeries(b, sv.f, sv.vals)
	}
	h.Write(b)
	key := cacheKey{host: host, before: int64(opt.Before), guard: int64(opt.Guard), from: opt.From, to: opt.To,
		session: opt.Session, controls: opt.Controls, perms: opt.Permutations, n: opt.Limit, seed: opt.Seed, read: h.Sum64()}
	if opt.Match != nil {
		key.match = opt.Match.String()
	}
	return c.reports.Get(ctx, key, func(ctx context.Context) (*Report, error) {
		release, err := enterOf(enter)(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		hc, _, err := c.counts.Get(ctx, host, func(context.Context) (*hostCounts, error) { return &hostCounts{}, nil })
		if err != nil {
			return nil, err
		}
		hc.mu.Lock()
		defer hc.mu.Unlock()
		defer hc.done()
		return explainPlan(ctx, src, in, pl, &opt, func(ctx context.Context, wins []Window) (*counts, error) {
			return hc.count(ctx, src, in, wins)
		})
	})
}

// hostCounts keeps the counts of the windows a host's explanations read,
// so that the next explanation (of another seed, or after a capture was
// added) counts only the windows not counted before. A window's counts
// are keyed by its range and the ids and offsets of the captures that
// overlap it. Its user holds mu.
type hostCounts struct {
	mu        sync.Mutex
	commsOnly bool // counts the commands and functions alone (Moves)
	cs        *counts
	rows      map[windowKey]int
	last      *counts // the view count returned last
	bytes     atomic.Int64
}

type windowKey struct {
	from, to int64
	read     uint64 // hash of the ids and offsets of the captures overlapping it
}

// movesCounts begins the key of a host's counts for Moves in Cache.counts,
// which a host name (query.CheckHost) never begins with.
const movesCounts = "\x00moves "

// maxHostCounts bounds the bytes one host's counts grow to before they are
// dropped and begun again.
const maxHostCounts = 32 << 20

// count returns the counts of wins, in their order, counting those not
// counted before.
func (hc *hostCounts) count(ctx context.Context, src Source, in *input, wins []Window) (*counts, error) {
	if hc.cs == nil || hc.bytes.Load() > maxHostCounts {
		hc.cs, hc.rows = newCounts(0), map[windowKey]int{}
		hc.cs.commsOnly = hc.commsOnly
	}
	cs := hc.cs
	rows := make([]int, len(wins))
	var todo []Window
	var todoRows []int
	for i, w := range wins {
		h := fnv.New64a()
		h.Write(appendOverlapping(nil, in.caps, w.From, w.To))
		k := windowKey{w.From, w.To, h.Sum64()}
		r, ok := hc.rows[k]
		if !ok {
			r = len(cs.total)
			cs.total, cs.rows = append(cs.total, 0), append(cs.rows, nil)
			hc.rows[k] = r
			todo, todoRows = append(todo, w), append(todoRows, r)
		}
		rows[i] = r
	}
	if err := cs.countInto(ctx, src, in.caps, todo, todoRows); err != nil {
		hc.cs, hc.rows = nil, nil // some rows half counted
		return nil, err
	}
	hc.last = cs.view(rows)
	return hc.last, nil
}

// done takes back what the last view added, and measures the counts.
func (hc *hostCounts) done() {
	if hc.cs != nil && hc.last != nil {
		hc.cs.adopt(hc.last)
	}
	hc.last = nil
	var n int64
	if hc.cs != nil {
		n = hc.cs.bytes() + 64*int64(len(hc.rows))
	}
	hc.bytes.Store(n)
}

type moveKey struct {
	host                    string
	series                  subsecond.SeriesKey
	kind, comm, function    string
	from, to, length        int64
	session, windows, limit int
	read                    uint64 // hash of the windows, their captures and the series' means
}

// Moves returns Moves' movement for host and opt, from the cache when it
// holds one for what the host has now; hit reports that it did. The
// host's captures and series are read, and the windows chosen, before the
// cache is asked; a miss counts the windows' samples in what enter takes.
func (c *Cache) Moves(ctx context.Context, src Source, host string, opt MoveOptions, enter Enter) (mv *Movement, hit bool, err error) {
	pl, err := planMoves(ctx, src, host, opt)
	if err != nil {
		return nil, false, err
	}
	opt = pl.opt
	key := moveKey{host: host, from: pl.from, to: pl.to, length: int64(opt.Length), session: opt.Session, windows: opt.Windows, limit: opt.Limit, read: pl.hash()}
	if opt.Series != nil {
		key.series = *opt.Series
	} else {
		key.kind, key.comm, key.function = opt.Feature.Kind, opt.Feature.Comm, opt.Feature.Function
	}
	return c.moves.Get(ctx, key, func(ctx context.Context) (*Movement, error) {
		release, err := enterOf(enter)(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		// The commands' counts of the windows, kept per host apart from
		// the explanations' (counted in full, and held while they
		// relabel): moves asked again after a capture was added count
		// only the windows new to them (see spread).
		hc, _, err := c.counts.Get(ctx, movesCounts+host, func(context.Context) (*hostCounts, error) {
			return &hostCounts{commsOnly: true}, nil
		})
		if err != nil {
			return nil, err
		}
		hc.mu.Lock()
		defer hc.mu.Unlock()
		defer hc.done()
		in := &input{host: host, caps: pl.caps}
		return pl.moves(ctx, func(ctx context.Context, wins []Window) (*counts, error) {
			return hc.count(ctx, src, in, wins)
		})
	})
}

// hash hashes what the plan read: its windows, the ids and offsets of the
// captures that overlap them, and the series' means in them.
func (pl *movePlan) hash() uint64 {
	h := fnv.New64a()
	var b []byte
	for _, w := range pl.wins {
		b = binary.LittleEndian.AppendUint64(b, uint64(w.From))
		b = binary.LittleEndian.AppendUint64(b, uint64(w.To))
	}
	b = appendOverlapping(b, pl.caps, pl.wins[0].From, pl.wins[len(pl.wins)-1].To)
	b = appendMeans(b, pl.y)
	for i, f := range pl.series {
		b = appendSeries(b, f, pl.ys[i])
	}
	h.Write(b)
	return h.Sum64()
}

// appendOverlapping appends to b, for a hash, the ids and offsets of the
// captures of caps that overlap [from, to).
func appendOverlapping(b []byte, caps []timeline.Capture, from, to int64) []byte {
	for _, c := range caps {
		if c.End > from && c.Start < to {
			b = append(b, c.ID...)
			b = append(b, 0)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.Offset))
		}
	}
	return b
}

// appendSeries appends to b, for a hash, series f and its means in the
// windows.
func appendSeries(b []byte, f Feature, means []float64) []byte {
	b = fmt.Appendf(b, "%s\x00%d\x00%s\x00", f.Series, f.CPU, f.Label)
	return appendMeans(b, means)
}

// appendMeans appends a series' means in the windows to b, for a hash.
func appendMeans(b []byte, y []float64) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(y)))
	for _, v := range y {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// enterOf returns enter, or for nil an Enter that takes nothing.
func enterOf(enter Enter) Enter {
	if enter != nil {
		return enter
	}
	return func(context.Context) (func(), error) { return func() {}, nil }
}

// bytes estimates the memory a report holds: its arrays by their
// capacity and the strings they point to.
func (r *Report) bytes() int64 {
	n := int64(unsafe.Sizeof(*r)) + subsecond.SliceBytes(r.Windows) + subsecond.SliceBytes(r.Controls) + subsecond.SliceBytes(r.Findings)
	for _, ws := range [][]Window{r.Windows, r.Controls} {
		for _, w := range ws {
			n += subsecond.SliceBytes(w.Markers)
			for _, m := range w.Markers {
				n += int64(len(m.Text))
			}
		}
	}
	for _, f := range r.Findings {
		n += subsecond.SliceBytes(f.Markers) + subsecond.SliceBytes(f.Also) + f.Feature.pointed()
		for _, g := range f.Also {
			n += g.pointed()
		}
	}
	return n
}

// bytes estimates the memory a movement holds, as Report.bytes does.
func (m *Movement) bytes() int64 {
	n := int64(unsafe.Sizeof(*m)) + subsecond.SliceBytes(m.Windows) + subsecond.SliceBytes(m.Moving) + m.Of.pointed()
	for _, f := range m.Moving {
		n += f.Feature.pointed()
	}
	return n
}

// pointed estimates the memory a feature points to: its strings and its
// stack's.
func (f Feature) pointed() int64 {
	n := int64(len(f.Comm)+len(f.Function)+len(f.Series)+len(f.Label)) + subsecond.SliceBytes(f.Stack)
	for _, s := range f.Stack {
		n += int64(len(s))
	}
	return n
}

// LoadWindows returns the host's samples in the windows ws as one capture
// (subsecond.Join), their times on the wall clock: a report's Windows, or
// its Controls, for the differential flame graph of before against
// usual. Each window takes the parts of every capture that recorded it,
// across rotation points.
func LoadWindows(ctx context.Context, src timeline.Source, host string, ws []Window) (*subsecond.Capture, error) {
	caps, _, err := timeline.HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 || len(caps) == 0 {
		return nil, fmt.Errorf("host %q: no window to load: %w", host, subsecond.ErrEmptyRange)
	}
	p := subsecond.Profile{Host: host, Name: fmt.Sprintf("%s · %d windows of %s", host, len(ws), time.Duration(ws[0].To-ws[0].From)),
		Wall: subsecond.WallClock{Source: caps[0].Source}}
	var parts []subsecond.Part
	var hz float64
	for _, w := range ws {
		ps, err := loadParts(ctx, src, caps, w)
		if err != nil {
			return nil, err
		}
		for _, pt := range ps {
			parts = append(parts, subsecond.Part{C: pt.c, Lo: pt.lo, Hi: pt.hi, Shift: pt.shift})
		}
		for _, c := range caps {
			if c.End > w.From && c.Start < w.To {
				hz = max(hz, c.Hz)
				p.Wall.Approximate = p.Wall.Approximate || c.Approximate
			}
		}
	}
	j := subsecond.Join(p, parts)
	j.Profile.FrequencyHz = hz
	return j, nil
}
