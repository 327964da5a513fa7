// Package heatmap buckets a capture's samples in time: the offset heatmap
// (FlameScope's subsecond view: one column per C seconds, R rows within it),
// the cores map (one row per CPU with a busy fraction per bucket) and the hot
// spots found in them.
//
// Time is integer nanoseconds. T0 is the whole second containing the first
// sample; cell (col, row) of an offset heatmap counts the samples t with
// (t-T0)/C == col and ((t-T0) mod C)·R/C == row, in integer arithmetic, so
// every sample lands in exactly one cell whatever C/R's remainder and a
// sample at 5086.2 s lands in the 200 ms row at 50 rows a second.
//
//	q, _ := query.Parse(r.URL.Query())
//	g, err := heatmap.Offset(capture, q.Filter, heatmap.Options{Col: q.Col, Rows: q.Rows})
//	if err != nil { … }
//	fmt.Println(g.Counts[3][10]) // samples in [T0+3.2 s, T0+3.22 s)
package heatmap

import (
	"fmt"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// MaxCells bounds any grid's size so a capture spanning years of timestamps
// is refused rather than allocated. The limits of the parameters are the
// root package's MinCol, MaxCol and MaxRows.
const MaxCells = 8_000_000

// Options shape an offset heatmap. Zero fields take the defaults; the
// limits are those of the "col" and "rows" query parameters.
type Options struct {
	Col  int64 // column width in nanoseconds, query.MinCol..MaxCol (default 1 s)
	Rows int   // rows per column, 1..query.MaxRows (default 50)
}

func (o *Options) check() error {
	if o.Col == 0 {
		o.Col = query.DefaultCol
	}
	if o.Rows == 0 {
		o.Rows = query.DefaultRows
	}
	if err := query.CheckParam("col", o.Col); err != nil {
		return err
	}
	return query.CheckParam("rows", int64(o.Rows))
}

// Grid is an offset heatmap. Counts[col][row] is the number of samples that
// pass the filter in [T0 + col·Col + row·Col/Rows, T0 + col·Col + (row+1)·Col/Rows),
// with row boundaries rounded as described in the package doc. Row 0 is the
// start of each column. Cols covers the capture up to and including its
// last sample.
type Grid struct {
	T0     int64     `json:"t0_ns"`
	Col    int64     `json:"col_ns"`
	Rows   int       `json:"rows"`
	Cols   int       `json:"cols"`
	Counts [][]int64 `json:"counts"`
	Max    int64     `json:"max"`
	Total  int64     `json:"total"`
}

// CellRange returns the half-open time range of cell (col, row).
func (g *Grid) CellRange(col, row int) subsecond.Range {
	start := g.T0 + int64(col)*g.Col
	return subsecond.Range{Start: start + rowStart(g.Col, g.Rows, row), End: start + rowStart(g.Col, g.Rows, row+1)}
}

// rowStart is the first offset within a column that falls in row: the least
// d with d·rows/col ≥ row, i.e. ceil(row·col/rows).
func rowStart(col int64, rows, row int) int64 {
	return (int64(row)*col + int64(rows) - 1) / int64(rows)
}

// Span returns the whole-second-aligned span of c's timed samples: T0 and the
// time of the last sample. It fails with subsecond.ErrNoTime when c has
// samples but none with a time, and with ErrEmptyRange when c has none.
func Span(c *subsecond.Capture) (t0, last int64, err error) {
	ts := c.Samples.Time
	lo := c.Search(subsecond.NoTime + 1)
	if lo == len(ts) && lo > 0 {
		return 0, 0, subsecond.ErrNoTime
	}
	if lo == len(ts) {
		return 0, 0, fmt.Errorf("profile %q: %w", c.Profile.ID, subsecond.ErrEmptyRange)
	}
	t0, last = subsecond.FloorSecond(ts[lo]), ts[len(ts)-1]
	if last-t0 < 0 {
		return 0, 0, fmt.Errorf("profile %q: samples from %d ns to %d ns span too long a time: %w", c.Profile.ID, ts[lo], last, subsecond.ErrInvalid)
	}
	return t0, last, nil
}

// Offset returns the offset heatmap of the samples of c that pass f.
// Errors wrap subsecond.ErrInvalid (bad options or filter) or
// subsecond.ErrEmptyRange (no timed samples).
func Offset(c *subsecond.Capture, f query.Filter, opt Options) (*Grid, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	m, err := f.Compile(c)
	if err != nil {
		return nil, err
	}
	t0, last, err := Span(c)
	if err != nil {
		return nil, err
	}
	C, R := opt.Col, int64(opt.Rows)
	cols := (last-t0)/C + 1
	if cols*R > MaxCells {
		return nil, query.Invalidf("col", "%d columns of %s s × %d rows exceed %d cells; use wider columns or fewer rows",
			cols, query.FormatSeconds(C), R, MaxCells)
	}
	g := &Grid{T0: t0, Col: C, Rows: opt.Rows, Cols: int(cols), Counts: make([][]int64, cols)}
	flat := make([]int64, cols*R)
	for i := range g.Counts {
		g.Counts[i] = flat[int64(i)*R : int64(i+1)*R : int64(i+1)*R]
	}
	lo, hi := c.Window(subsecond.Range{Start: t0, End: last + 1})
	ts := c.Samples.Time
	ev, idle, simple := m.Simple()
	events := c.Samples.Event
	for i := lo; i < hi; i++ {
		if simple {
			if events[i] != ev || !idle && m.Idle(i) {
				continue
			}
		} else if !m.Keep(i) {
			continue
		}
		d := ts[i] - t0
		col := d / C
		flat[col*R+(d-col*C)*R/C]++
	}
	for _, n := range flat {
		g.Total += n
		g.Max = max(g.Max, n)
	}
	return g, nil
}
