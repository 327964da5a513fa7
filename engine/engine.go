// Package engine computes the views of a capture for a query with the
// heatmap and flame packages: the offset heatmap, the cores map, the hot
// spots and flame graphs. It is the one adapter between them and whoever
// serves or prints the views: `subsecond serve` hands it to the server,
// the server's tests use it, and the CLI's commands call it, so that a view
// is computed, and written as JSON, the same everywhere.
//
//	q, _ := query.Parse(r.URL.Query())
//	_ = q.Resolve(&c.Profile)
//	rep, err := engine.Engine{}.Hotspots(c, q)
package engine

import (
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/query"
)

// Engine computes views; its zero value is ready and safe for concurrent
// use. Each view first checks that its filter can match something
// (query.Filter.Check). Errors about the query wrap
// subsecond.ErrInvalid or subsecond.ErrEmptyRange.
type Engine struct{}

// Heatmap returns the offset heatmap of q.Col by q.Rows (*heatmap.Grid).
func (Engine) Heatmap(c *subsecond.Capture, q *query.Query) (any, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return heatmap.Offset(c, q.Filter, heatmap.Options{Col: q.Col, Rows: q.Rows})
}

// Cores returns the cores map in buckets of q.Bucket (*heatmap.Cores).
func (Engine) Cores(c *subsecond.Capture, q *query.Query) (any, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return heatmap.PerCore(c, q.Filter, q.Bucket)
}

// Hotspots returns the hot-spot report of q.Range: the first q.Limit
// episodes (0 for all), highest score first, and the q.Cells hottest
// heatmap cells.
func (Engine) Hotspots(c *subsecond.Capture, q *query.Query) (*subsecond.HotspotReport, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return heatmap.Hotspots(c, q.Filter, HotOptions(q))
}

// HotOptions returns the hot-spot options q asks for, within q.Range (the
// whole capture unless start or end narrow it; see Query.Resolve).
func HotOptions(q *query.Query) heatmap.HotOptions {
	opt := heatmap.HotOptions{Measure: heatmap.Measure(q.Measure), Threshold: q.Threshold, Min: q.Min, Bucket: q.Bucket, Cells: q.Cells, Limit: q.Limit,
		Range: q.Range}
	if q.Limit == 0 {
		opt.Limit = -1 // all
	}
	return opt
}

// Flame returns the flame graph of q.Range.
func (Engine) Flame(c *subsecond.Capture, q *query.Query) (subsecond.Graph, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return flame.Build(c, q.Filter, q.Range)
}

// Diff returns the differential flame graph from q.Range2 of base (c itself
// unless the query names another profile) to q.Range of c.
func (Engine) Diff(c, base *subsecond.Capture, q *query.Query) (subsecond.Graph, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return flame.DiffProfiles(c, base, q.Filter, q.Range2, q.Range)
}

// Samples returns the stack chart's samples of q.Range, at most limit of
// them (*flame.Samples), and how many passed the filter.
func (Engine) Samples(c *subsecond.Capture, q *query.Query, limit int) (any, int, error) {
	if err := q.Filter.Check(c); err != nil {
		return nil, 0, err
	}
	s, n, err := flame.StackSamples(c, q.Filter, q.Range, limit)
	if s == nil {
		return nil, n, err // a nil *flame.Samples must not become a non-nil any
	}
	return s, n, err
}
