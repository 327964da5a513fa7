package heatmap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
)

// HotOptions tune Hotspots. Zero fields take the defaults.
type HotOptions struct {
	Threshold float64 // busy fraction that counts as busy, (0, 1]; default 0.9
	Min       int64   // shortest episode, ns; default 1 s
	Bucket    int64   // cores-map resolution, ns; default 0.1 s
	Cells     int     // how many hottest heatmap cells to list; default 10
}

// Spot is one busy episode of one CPU: [Start, End) in nanoseconds.
// Busy is the mean busy fraction over the episode and Samples its non-idle
// samples. Comm is the command with most of those samples; Stack is the
// heaviest path of the episode's flame graph (folded: command;root;…;frame,
// with the filter's Only applied), found by descending from Comm into the
// child with the most samples while some child outweighs the node's own
// self samples; Function is the function with most self samples. Each Share
// is a fraction of Samples (for Stack: the samples under its last frame).
type Spot struct {
	CPU           int32   `json:"cpu"`
	Start         int64   `json:"start_ns"`
	End           int64   `json:"end_ns"`
	Busy          float64 `json:"busy"`
	Samples       int64   `json:"samples"`
	Comm          string  `json:"comm"`
	CommShare     float64 `json:"comm_share"`
	Stack         string  `json:"top_stack"`
	StackShare    float64 `json:"top_stack_share"`
	Function      string  `json:"top_function"`
	FunctionShare float64 `json:"top_function_share"`
}

// Cell is one offset-heatmap cell (default shape: 1 s columns, 50 rows).
type Cell struct {
	Col   int   `json:"col"`
	Row   int   `json:"row"`
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	Count int64 `json:"count"`
}

// Report lists hot spots, longest and busiest first, and the hottest cells,
// fullest first.
type Report struct {
	T0    int64  `json:"t0_ns"`
	Spots []Spot `json:"hotspots"`
	Cells []Cell `json:"cells"`
}

// smooth is the longest window over which Hotspots averages busy fractions.
const smooth = int64(1e9)

// Hotspots finds, per CPU, the contiguous windows where the busy fraction
// stays at or above opt.Threshold for at least opt.Min, at the resolution
// of the cores map's buckets. "Stays" is measured over min(opt.Min, 1 s):
// a bucket is hot when some window of that length containing it has a
// mean busy fraction ≥ Threshold, so one bucket that sampling jitter left a
// sample short (at 49 Hz a 0.1 s bucket holds 4 or 5 samples) does not
// split an episode. An episode's edge buckets are
// then trimmed while they fall more than one sample short of the
// threshold. The filter applies as everywhere; idle samples never count as
// busy. Errors wrap subsecond.ErrInvalid or subsecond.ErrEmptyRange.
func Hotspots(c *subsecond.Capture, f subsecond.Filter, opt HotOptions) (*Report, error) {
	if opt.Threshold == 0 {
		opt.Threshold = 0.9
	}
	if opt.Min == 0 {
		opt.Min = 1e9
	}
	if opt.Bucket == 0 {
		opt.Bucket = DefaultBucket
	}
	if opt.Cells == 0 {
		opt.Cells = 10
	}
	if !(opt.Threshold > 0 && opt.Threshold <= 1) {
		return nil, fmt.Errorf("threshold: %v is not a fraction in (0, 1]: %w", opt.Threshold, subsecond.ErrInvalid)
	}
	if opt.Min < 0 {
		return nil, fmt.Errorf("min: %s s is negative: %w", subsecond.FormatSeconds(opt.Min), subsecond.ErrInvalid)
	}
	k, err := PerCore(c, f, opt.Bucket)
	if err != nil {
		return nil, err
	}
	rep := &Report{T0: k.T0, Spots: []Spot{}, Cells: []Cell{}}
	// Smooth over windows of at most 1 s; episodes must last opt.Min.
	win := int((min(opt.Min, smooth) + opt.Bucket - 1) / opt.Bucket)
	win = max(win, 1)
	minLen := int((opt.Min + opt.Bucket - 1) / opt.Bucket)
	need := opt.Threshold * k.Expected * float64(win) // busy samples a window needs
	edge := opt.Threshold * (k.Expected - 1)          // busy samples an edge bucket needs
	for r, cpu := range k.CPUs {
		busy := k.busy[r]
		nb := len(busy)
		if nb < win || k.Expected <= 0 {
			continue
		}
		// hot[b] > 0 when a qualifying window covers b (difference array).
		hot := make([]int, nb+1)
		var sum int64
		for b := 0; b < nb; b++ {
			sum += busy[b]
			if b >= win {
				sum -= busy[b-win]
			}
			if b >= win-1 && float64(sum) >= need-1e-9 {
				hot[b-win+1]++
				hot[b+1]--
			}
		}
		covered := make([]bool, nb)
		run := 0
		for b := range covered {
			run += hot[b]
			covered[b] = run > 0
		}
		for b := 0; b < nb; b++ {
			if !covered[b] {
				continue
			}
			s := b
			for b < nb && covered[b] {
				b++
			}
			lo, hi := s, b
			for hi-lo > win && float64(busy[lo]) < edge {
				lo++
			}
			for hi-lo > win && float64(busy[hi-1]) < edge {
				hi--
			}
			if hi-lo < minLen {
				continue
			}
			var n int64
			for _, v := range busy[lo:hi] {
				n += v
			}
			rep.Spots = append(rep.Spots, Spot{
				CPU: cpu, Start: k.T0 + int64(lo)*k.Bucket, End: k.T0 + int64(hi)*k.Bucket,
				Busy: min(1, float64(n)/(k.Expected*float64(hi-lo))), Samples: n,
			})
		}
	}
	for i := range rep.Spots {
		if err := describe(c, f, &rep.Spots[i]); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(rep.Spots, func(i, j int) bool {
		a, b := &rep.Spots[i], &rep.Spots[j]
		wa, wb := float64(a.End-a.Start)*a.Busy, float64(b.End-b.Start)*b.Busy
		if wa != wb {
			return wa > wb
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.CPU < b.CPU
	})

	g, err := Offset(c, f, Options{})
	if err != nil {
		return nil, err
	}
	for col := range g.Counts {
		for row, n := range g.Counts[col] {
			if n > 0 {
				r := g.CellRange(col, row)
				rep.Cells = append(rep.Cells, Cell{Col: col, Row: row, Start: r.Start, End: r.End, Count: n})
			}
		}
	}
	sort.SliceStable(rep.Cells, func(i, j int) bool { return rep.Cells[i].Count > rep.Cells[j].Count })
	rep.Cells = rep.Cells[:min(len(rep.Cells), opt.Cells)]
	return rep, nil
}

// describe fills in what ran on s.CPU during s: dominant command, top
// stack and top self function, from the episode's flame graph.
func describe(c *subsecond.Capture, f subsecond.Filter, s *Spot) error {
	f.CPUs = []int32{s.CPU}
	f.Idle = false
	g, err := flame.Build(c, f, subsecond.Range{Start: s.Start, End: s.End})
	if err != nil {
		return err
	}
	if g.Total == 0 {
		return nil
	}
	total := float64(g.Total)
	// heaviest[i] is node i's child with the largest total.
	heaviest := make([]int, g.Len())
	fn := map[string]int64{}
	for i := 1; i < g.Len(); i++ {
		p := g.Parent[i]
		if h := heaviest[p]; h == 0 || g.TotalN[i] > g.TotalN[h] {
			heaviest[p] = i
		}
		if g.Kind[i] != flame.KindComm && g.SelfN[i] > 0 {
			fn[g.NameOf(i)] += g.SelfN[i]
		}
	}
	top := heaviest[0]
	s.Comm, s.CommShare = g.NameOf(top), float64(g.TotalN[top])/total
	for h := heaviest[top]; h != 0 && g.TotalN[h] > g.SelfN[top]; h = heaviest[top] {
		top = h
	}
	p := g.Path(top)
	p[0] = flame.CommName(p[0])
	s.Stack, s.StackShare = strings.Join(p, ";"), float64(g.TotalN[top])/total
	var best int64
	for name, n := range fn {
		if n > best || n == best && name < s.Function {
			s.Function, best = name, n
		}
	}
	s.FunctionShare = float64(best) / total
	return nil
}
