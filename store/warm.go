package store

import (
	"slices"

	"github.com/subsecond/subsecond"
)

// warmLimit is the largest sample count for which Import builds the
// capture's columns as it stores them (about 40 bytes a sample), so that the
// first Capture after an upload needs no read from SQLite. Larger imports
// leave the capture to be loaded on first use.
const warmLimit = 5_000_000

// warmCapture collects an import's sample rows, in the form they are
// stored, into the columns of a subsecond.Capture.
type warmCapture struct {
	cols   subsecond.Columns
	limit  int
	sorted bool
	last   int64
	off    bool
}

func newWarmCapture(limit int) *warmCapture {
	return &warmCapture{limit: limit, sorted: true, last: subsecond.NoTime}
}

// add appends batch rows (sampleCols values per sample, as written to the
// samples table). Past the limit it drops what it holds and ignores the rest.
func (w *warmCapture) add(rows []int64) {
	if w.off {
		return
	}
	n := len(rows) / sampleCols
	if w.cols.Len()+n > w.limit {
		w.off, w.cols = true, subsecond.Columns{}
		return
	}
	c := &w.cols
	for r := rows; len(r) >= sampleCols; r = r[sampleCols:] {
		t := r[0]
		if t < w.last {
			w.sorted = false
		}
		w.last = t
		c.Time = append(c.Time, t)
		c.CPU = append(c.CPU, int32(r[2]))
		c.PID = append(c.PID, int32(r[3]))
		c.TID = append(c.TID, int32(r[4]))
		c.Comm = append(c.Comm, uint32(r[5]))
		c.Event = append(c.Event, uint16(r[6]))
		c.Weight = append(c.Weight, uint64(r[7]))
		c.Stack = append(c.Stack, int32(r[8]))
	}
}

// capture returns the columns in the order loadCapture reads them (ORDER BY
// t, seq), with absolute times and implied weights restored as appendSample
// does, or nil past the limit. The rows' seq only ever keeps samples of
// equal time in input order (see seqCounter), so a stable sort by stored
// time yields the same order.
func (w *warmCapture) capture(base int64, periods []uint64) *subsecond.Columns {
	if w.off {
		return nil
	}
	c := &w.cols
	if !w.sorted {
		perm := make([]int32, c.Len())
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int {
			ta, tb := c.Time[a], c.Time[b]
			switch {
			case ta < tb:
				return -1
			case ta > tb:
				return 1
			}
			return 0
		})
		c.Time, c.CPU, c.PID, c.TID = permute(c.Time, perm), permute(c.CPU, perm), permute(c.PID, perm), permute(c.TID, perm)
		c.Comm, c.Event, c.Weight, c.Stack = permute(c.Comm, perm), permute(c.Event, perm), permute(c.Weight, perm), permute(c.Stack, perm)
	}
	for i, t := range c.Time {
		if t != subsecond.NoTime {
			c.Time[i] = t + base
		}
		if c.Weight[i] == 0 {
			if ev := int(c.Event[i]); ev < len(periods) {
				c.Weight[i] = periods[ev]
			}
			if c.Weight[i] == 0 {
				c.Weight[i] = 1
			}
		}
	}
	return c
}

// permute returns s reordered so that element i is s[perm[i]].
func permute[T any](s []T, perm []int32) []T {
	out := make([]T, len(s))
	for i, p := range perm {
		out[i] = s[p]
	}
	return out
}
