package server

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// sqliteStore adapts the real store to the server's Store interface, as the
// serve command does.
type sqliteStore struct{ *store.Store }

func (s sqliteStore) Import(ctx context.Context, r io.Reader, u Upload) (*subsecond.Profile, bool, error) {
	return s.Store.Import(ctx, r, store.ImportOptions{Name: u.Name, FileName: u.FileName, Size: u.Size, Host: u.Host,
		Labels: u.Labels, Boot: u.Boot, MaxText: u.MaxText, Pause: u.Pause})
}

// countEngine is a small engine for the handler tests: it answers from the
// capture with the query's filter and range, so a test can check that the
// parsed URL reached the engine and that the answer reached the client.
type countEngine struct{}

// kept returns the indexes of the samples in r that pass q's filter.
func kept(c *subsecond.Capture, q *Query, r subsecond.Range) ([]int, error) {
	m, err := q.Filter.Compile(c)
	if err != nil {
		return nil, err
	}
	lo, hi := c.Window(r)
	var out []int
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

type countView struct {
	Rows   int   `json:"rows"`
	ColNS  int64 `json:"col_ns"`
	Bucket int64 `json:"bucket_ns"`
	Start  int64 `json:"start_ns"`
	End    int64 `json:"end_ns"`
	Total  int   `json:"total"`
}

func (countEngine) Heatmap(c *subsecond.Capture, q *Query) (any, error) {
	idx, err := kept(c, q, q.Range)
	if err != nil {
		return nil, err
	}
	return countView{Rows: q.Rows, ColNS: q.Col, Start: q.Range.Start, End: q.Range.End, Total: len(idx)}, nil
}

func (countEngine) Cores(c *subsecond.Capture, q *Query) (any, error) {
	idx, err := kept(c, q, q.Range)
	if err != nil {
		return nil, err
	}
	return countView{Bucket: q.Bucket, Total: len(idx)}, nil
}

// Hotspots reports one episode per CPU, from its first kept sample to just
// after its last, named after the most frequent command and leaf function.
func (countEngine) Hotspots(c *subsecond.Capture, q *Query) (*subsecond.HotspotReport, error) {
	idx, err := kept(c, q, q.Range)
	if err != nil {
		return nil, err
	}
	byCPU := map[int32]*subsecond.Hotspot{}
	for _, i := range idx {
		cpu := c.Samples.CPU[i]
		h := byCPU[cpu]
		if h == nil {
			h = &subsecond.Hotspot{CPU: cpu, Start: c.Samples.Time[i], Busy: 1, CommShare: 1,
				Comm: c.Strings[c.Samples.Comm[i]], Function: leaf(c, i)}
			byCPU[cpu] = h
		}
		h.End = c.Samples.Time[i] + 1
		h.Samples++
	}
	rep := &subsecond.HotspotReport{T0: c.Profile.T0(), Spots: []subsecond.Hotspot{}, Cells: []subsecond.HotCell{}}
	for _, h := range byCPU {
		rep.Spots = append(rep.Spots, *h)
	}
	sort.Slice(rep.Spots, func(i, j int) bool { return rep.Spots[i].CPU < rep.Spots[j].CPU })
	rep.Found = len(rep.Spots)
	return rep, nil
}

func leaf(c *subsecond.Capture, i int) string {
	n := c.Samples.Stack[i]
	if n <= 0 {
		return ""
	}
	return c.Strings[c.Frames[c.Nodes[n].Frame].Symbol]
}

// countGraph writes the kept samples' leaf functions in each format.
type countGraph struct {
	total, base int
	leaves      []string
}

func (g countGraph) Len() int { return 1 + len(g.leaves) }

func (g countGraph) Export(w io.Writer, format string) error {
	switch format {
	case "json":
		return json.NewEncoder(w).Encode(map[string]any{"total": g.total, "base_total": g.base, "leaves": g.leaves})
	case "folded":
		for _, l := range g.leaves {
			fmt.Fprintf(w, "%s 1\n", l)
		}
	case "svg":
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg">`)
		for _, l := range g.leaves {
			fmt.Fprintf(w, "<text>%s</text>", html.EscapeString(l))
		}
		fmt.Fprint(w, `</svg>`)
	case "pprof":
		fmt.Fprint(w, "\x1f\x8b pprof:"+strings.Join(g.leaves, ","))
	default:
		return fmt.Errorf("format %q: %w", format, subsecond.ErrInvalid)
	}
	return nil
}

func (e countEngine) graph(c *subsecond.Capture, q *Query, r subsecond.Range) (countGraph, error) {
	idx, err := kept(c, q, r)
	if err != nil {
		return countGraph{}, err
	}
	if len(idx) == 0 {
		return countGraph{}, fmt.Errorf("flame graph: %w", subsecond.ErrEmptyRange)
	}
	g := countGraph{total: len(idx)}
	for _, i := range idx {
		g.leaves = append(g.leaves, leaf(c, i))
	}
	return g, nil
}

func (e countEngine) Flame(c *subsecond.Capture, q *Query) (Graph, error) {
	return e.graph(c, q, q.Range)
}

func (e countEngine) Diff(c, bc *subsecond.Capture, q *Query) (Graph, error) {
	g, err := e.graph(c, q, q.Range)
	if err != nil {
		return nil, err
	}
	base, err := kept(bc, q, q.Range2)
	if err != nil {
		return nil, err
	}
	g.base = len(base)
	return g, nil
}

// Samples answers the count and times (after the range's start) of the
// samples of q.Range that q keeps.
func (e countEngine) Samples(c *subsecond.Capture, q *Query, limit int) (any, int, error) {
	idx, err := kept(c, q, q.Range)
	if err != nil || len(idx) > limit {
		return nil, len(idx), err
	}
	t := make([]int64, len(idx))
	for j, i := range idx {
		t[j] = c.Samples.Time[i] - q.Range.Start
	}
	return map[string]any{"count": len(idx), "time": t}, len(idx), nil
}

// sqliteNight answers the host views from the store: its rollups and its
// markers.
type sqliteNight struct{ *store.Store }
