package explain

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/subsecond/subsecond"
)

// seriesValues is a series feature's value in each window; NaN where the
// series has no point in the window.
type seriesValues struct {
	f    Feature
	vals []float64
}

// seriesKinds are the host series tested, when the source keeps them.
var seriesKinds = []string{"cpu.sys", "cgroups", "cgroup.dying", "irq"}

// readSeries returns the host series' means in each window, when src
// keeps series: cpu.sys per CPU, cgroups per controller, cgroup.dying, and
// irq per line summed over the CPUs. A point counts in the window holding
// the end of its interval, (From, To]; a rate without a point in a window
// is 0 there.
func readSeries(ctx context.Context, src Source, host string, wins []Window) ([]seriesValues, error) {
	ss, ok := src.(SeriesSource)
	if !ok || len(wins) == 0 {
		return nil, nil
	}
	var out []seriesValues
	lo, hi := wins[0].From, wins[0].To
	for _, w := range wins {
		lo, hi = min(lo, w.From), max(hi, w.To)
	}
	for _, name := range seriesKinds {
		kind, _ := subsecond.Kind(name)
		list, err := ss.Series(ctx, host, name, lo, hi+1)
		if err != nil {
			return nil, err
		}
		rate := kind.Unit == "/s"
		idx := map[subsecond.SeriesKey]int{}
		for _, s := range list {
			key := s.Key()
			if name == "irq" {
				key.CPU = subsecond.Unknown // summed over the CPUs
			} else if kind.PerCPU && s.CPU < 0 {
				continue // the host's line: the per-CPU ones say more
			}
			i, ok := idx[key]
			if !ok {
				i = len(out)
				idx[key] = i
				vals := make([]float64, len(wins))
				if name == "irq" {
					clear(vals)
				} else {
					for w := range vals {
						vals[w] = math.NaN()
					}
				}
				out = append(out, seriesValues{f: Feature{Kind: KindSeries, Series: name, Label: key.Label, CPU: key.CPU, Unit: kind.Unit}, vals: vals})
			}
			sv := &out[i]
			for w, mean := range windowMeans(s.Points, wins, rate) {
				switch {
				case name == "irq":
					if !math.IsNaN(mean) {
						sv.vals[w] += mean
					}
				default:
					sv.vals[w] = mean
				}
			}
		}
	}
	return out, nil
}

// windowMeans returns the mean of pts (in time order) in each window, a
// point counting in the window holding the end of its interval, (From,
// To]; NaN where none falls, or 0 for a rate, which omits its zeros.
func windowMeans(pts []subsecond.Point, wins []Window, rate bool) []float64 {
	out := make([]float64, len(wins))
	for w, win := range wins {
		a, _ := slices.BinarySearchFunc(pts, win.From+1, func(p subsecond.Point, t int64) int { return cmp.Compare(p.Time, t) })
		var sum float64
		n := 0
		for ; a < len(pts) && pts[a].Time <= win.To; a++ {
			sum += pts[a].Value
			n++
		}
		out[w] = math.NaN()
		if n > 0 {
			out[w] = sum / float64(n)
		} else if rate {
			out[w] = 0
		}
	}
	return out
}

// table returns the statistics' input over the windows keep (indexes of
// cs's windows, the first nBefore of which are before-windows): the
// features chosen by counts over all of those windows together (MinCount,
// MaxCandidates, Branch), never by which are before-windows, and each
// window's value of them.
func (cs *counts) table(keep []int, nBefore int) *table {
	t := &table{}
	// Totals of the features and the trie's nodes over the kept windows.
	ftot := make([]int64, len(cs.keys))
	ntot := make([]int64, len(cs.trie.parent))
	for _, w := range keep {
		feats, nodes := cs.expand(w)
		for _, c := range feats {
			ftot[c.id] += c.n
		}
		for _, c := range nodes {
			ntot[c.id] += c.n
		}
	}
	maxChild := make([]int64, len(ntot))
	for n := range ntot {
		if p := cs.trie.parent[n]; p >= 0 {
			maxChild[p] = max(maxChild[p], ntot[n])
		}
	}
	type cand struct {
		key   fkey
		total int64
	}
	var cands []cand
	for f, k := range cs.keys {
		if ftot[f] >= MinCount {
			cands = append(cands, cand{k, ftot[f]})
		}
	}
	for n := range ntot {
		if cs.trie.depth[n] >= 2 && ntot[n] >= MinCount && float64(maxChild[n]) < Branch*float64(ntot[n]) {
			cands = append(cands, cand{fkey{kStack, int32(n), 0}, ntot[n]})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.total, a.total), cmp.Compare(a.key.kind, b.key.kind), cmp.Compare(a.key.a, b.key.a), cmp.Compare(a.key.b, b.key.b))
	})
	cands = cands[:min(len(cands), MaxCandidates)]
	// The candidates' columns by feature id and by trie node; -1 for none.
	fcol, ncol := make([]int32, len(cs.keys)), make([]int32, len(cs.trie.parent))
	for i := range fcol {
		fcol[i] = -1
	}
	for i := range ncol {
		ncol[i] = -1
	}
	for _, c := range cands {
		if c.key.kind == kStack {
			ncol[c.key.a] = int32(len(t.features))
		} else {
			fcol[cs.feats[c.key]] = int32(len(t.features))
		}
		t.features = append(t.features, cs.describe(c.key))
	}
	var series []int
	for i, s := range cs.series {
		ok := true
		for _, w := range keep {
			ok = ok && !math.IsNaN(s.vals[w])
		}
		if ok {
			series = append(series, i)
			t.features = append(t.features, s.f)
		}
	}
	F := len(t.features)
	t.values = make([]float64, len(keep)*F)
	t.before = make([]bool, len(keep))
	t.markers = make([][]int64, len(keep))
	var ctlSamples float64
	nctl := 0
	for i, w := range keep {
		row := t.values[i*F : (i+1)*F]
		tot := float64(cs.total[w])
		feats, nodes := cs.expand(w)
		for _, c := range feats {
			if j := fcol[c.id]; j >= 0 {
				row[j] = float64(c.n) / tot
			}
		}
		for _, c := range nodes {
			if j := ncol[c.id]; j >= 0 {
				row[j] = float64(c.n) / tot
			}
		}
		for j, s := range series {
			row[len(cands)+j] = cs.series[s].vals[w]
		}
		t.before[i] = w < nBefore
		if !t.before[i] {
			ctlSamples += tot
			nctl++
		}
	}
	t.floor = make([]float64, F)
	for f := range F {
		if f < len(cands) {
			t.floor[f] = 0.5 / (ctlSamples / float64(max(nctl, 1)))
		} else {
			t.floor[f] = 1e-9
		}
	}
	return t
}

// markersOf fills the table's windows' marker times from wins.
func (t *table) markersOf(keep []int, wins []Window) {
	for i, w := range keep {
		for _, m := range wins[w].Markers {
			t.markers[i] = append(t.markers[i], m.Time)
		}
	}
}

// describe returns the Feature that k counts.
func (cs *counts) describe(k fkey) Feature {
	f := Feature{CPU: subsecond.Unknown, Unit: "share"}
	switch k.kind {
	case kComm:
		f.Kind, f.Comm = KindComm, cs.names[k.a]
	case kLeaf:
		f.Kind, f.Comm, f.Function = KindLeaf, cs.names[k.a], cs.names[k.b]
	case kFunction:
		f.Kind, f.Comm, f.Function = KindFunction, cs.names[k.a], cs.names[k.b]
	case kCPU:
		f.Kind, f.CPU, f.Comm = KindCPU, k.a, cs.names[k.b]
	case kKernelCore:
		f.Kind, f.Comm = KindKernelCore, cs.names[k.a]
	case kStack:
		t := &cs.trie
		f.Kind, f.Comm = KindStack, cs.names[t.comm[k.a]]
		for p := k.a; t.depth[p] >= 2; p = t.parent[p] {
			f.Stack = append(f.Stack, cs.names[t.name[p]])
		}
		slices.Reverse(f.Stack)
	}
	return f
}
