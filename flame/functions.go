package flame

import (
	"cmp"
	"math"
	"slices"
)

// Function is one row of a graph's function table: a function (name and
// DSO, as perf report keys symbols) with the samples it was the leaf of
// (Self) and the samples whose stack holds it (Total, counting a stack once
// where the function recurses). In a differential graph BaseSelf and
// BaseTotal are the base range's counts, and SelfDelta and TotalDelta the
// changes in share of each range's samples, in percentage points (target
// share − base share); Z is the two-proportion z-score of the change in
// Total (see Z), and Significant says whether |Z| reaches SignificantZ.
type Function struct {
	Name        string  `json:"name"`
	DSO         string  `json:"dso"`
	Kind        string  `json:"kind"`
	Self        int64   `json:"self"`
	Total       int64   `json:"total"`
	BaseSelf    int64   `json:"base_self"`
	BaseTotal   int64   `json:"base_total"`
	SelfDelta   float64 `json:"self_delta_pts"`
	TotalDelta  float64 `json:"total_delta_pts"`
	Z           float64 `json:"z"`
	Significant bool    `json:"significant"`
}

// SignificantZ is the |z| from which a change counts as significant:
// 3.29, a two-sided p below 0.001. A flame graph holds thousands of
// functions, so the usual 1.96 would paint dozens of them as changed by
// sampling noise alone.
const SignificantZ = 3.29

// TintIntensity is the colour intensity (see Intensity) of a change whose
// |z| just reaches SignificantZ: a clear tint, unlike the neutral 0 below it.
const TintIntensity = 0.25

// FullZ is the |z| from which a change is drawn in full colour (Intensity 1).
const FullZ = 20

// Z returns the two-proportion z-score of the change from x2 of n2 samples
// (the base) to x1 of n1 (the target): (x1/n1 − x2/n2) / sqrt(p(1−p)(1/n1
// + 1/n2)) with the pooled share p = (x1+x2)/(n1+n2). It is 0 when either
// side has no samples or the shares are equal (which the pooled share
// being 0 or 1 implies). The front end computes the same in
// web/src/flame.ts (zScore), which web's TestZScoreScript checks.
func Z(x1, n1, x2, n2 int64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 0
	}
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	p := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 0
	}
	return (p1 - p2) / se
}

// Intensity maps a change's z-score to a colour intensity in 0..1: 0 below
// SignificantZ, then linearly from TintIntensity up to full colour at
// FullZ. The web page uses the same scale with the same constants, from
// web/src/wire.ts (web/src/flame.ts's diffIntensity, which web's
// TestZScoreScript checks).
func Intensity(z float64) float64 {
	a := math.Abs(z)
	if a < SignificantZ {
		return 0
	}
	return TintIntensity + (1-TintIntensity)*min(1, (a-SignificantZ)/(FullZ-SignificantZ))
}

// Functions returns g's function table. Rows are sorted by Self, then
// Total, then name, largest first; in a differential graph by the size of
// the change in Total share, then by name. It takes one pass over the
// graph's nodes and no map lookup: functions are told apart by the graph's
// string indexes.
func (g *Graph) Functions() []Function {
	n := g.Len()
	type acc struct {
		name, dso, kind            int32
		self, total, bself, btotal int64
	}
	var rows []acc
	byName := make([]int32, len(g.Strings)) // first row with this name, +1
	next := []int32(nil)                    // per row: next row with the same name, +1
	var onPath []int32                      // per row: occurrences on the current path
	var path []int32                        // row per depth, -1 for the root and commands
	diff := g.BaseN != nil
	for i := 0; i < n; i++ {
		d := int(g.Depth[i])
		for len(path) > d {
			if r := path[len(path)-1]; r >= 0 {
				onPath[r]--
			}
			path = path[:len(path)-1]
		}
		if k := g.Kind[i]; k == KindRoot || k == KindComm {
			path = append(path, -1)
			continue
		}
		name, dso := g.Name[i], g.DSO[i]
		r := byName[name] - 1
		for r >= 0 && rows[r].dso != dso {
			r = next[r] - 1
		}
		if r < 0 {
			r = int32(len(rows))
			rows = append(rows, acc{name: name, dso: dso, kind: g.Kind[i]})
			next = append(next, byName[name])
			byName[name] = r + 1
			onPath = append(onPath, 0)
		}
		a := &rows[r]
		a.self += g.SelfN[i]
		if diff {
			a.bself += g.BaseSelfN[i]
		}
		if onPath[r] == 0 {
			a.total += g.TotalN[i]
			if diff {
				a.btotal += g.BaseN[i]
			}
		}
		onPath[r]++
		path = append(path, r)
	}
	out := make([]Function, len(rows))
	share := func(x, of int64) float64 {
		if of == 0 {
			return 0
		}
		return 100 * float64(x) / float64(of)
	}
	for i, a := range rows {
		f := Function{Name: g.Strings[a.name], DSO: g.Strings[a.dso], Kind: kindName(a.kind), Self: a.self, Total: a.total}
		if diff {
			f.BaseSelf, f.BaseTotal = a.bself, a.btotal
			f.SelfDelta = share(a.self, g.Total) - share(a.bself, g.BaseTotal)
			f.TotalDelta = share(a.total, g.Total) - share(a.btotal, g.BaseTotal)
			f.Z = Z(a.total, g.Total, a.btotal, g.BaseTotal)
			f.Significant = math.Abs(f.Z) >= SignificantZ
		}
		out[i] = f
	}
	if diff {
		slices.SortFunc(out, func(a, b Function) int {
			return cmp.Or(cmp.Compare(math.Abs(b.TotalDelta), math.Abs(a.TotalDelta)), cmp.Compare(a.Name, b.Name), cmp.Compare(a.DSO, b.DSO))
		})
	} else {
		slices.SortFunc(out, func(a, b Function) int {
			return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(b.Total, a.Total), cmp.Compare(a.Name, b.Name), cmp.Compare(a.DSO, b.DSO))
		})
	}
	return out
}

func kindName(k int32) string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}
