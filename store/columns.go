package store

import (
	"cmp"
	"slices"

	"github.com/subsecond/subsecond"
)

// A capture's columns are its chunks' columns one after the other, in
// (Second, Seq) order. The chunks of one second after the first (Seq > 0)
// hold samples read later than the first's, from input far out of time
// order: the second's samples are then sorted by time, stably, so that
// among equal times the earlier chunk's, read first, stay first.

// span is the part of a capture's columns one chunk fills.
type span struct {
	second int64
	n      int
}

// sortSeconds sorts by time the samples of every second of c that spans
// more than one chunk.
func sortSeconds(c *subsecond.Columns, spans []span) {
	at := 0
	for i := 0; i < len(spans); {
		j, n := i+1, spans[i].n
		for j < len(spans) && spans[j].second == spans[i].second {
			n += spans[j].n
			j++
		}
		if j > i+1 {
			seg := window(c, at, at+n, at+n)
			subsecond.SortColumns(&seg)
			copyColumns(c, at, &seg)
		}
		at += n
		i = j
	}
}

// assemble joins sealed chunks, each sorted, into one capture's columns.
func assemble(bufs []*chunkBuf) *subsecond.Columns {
	slices.SortFunc(bufs, func(a, b *chunkBuf) int {
		return cmp.Or(cmp.Compare(a.second, b.second), cmp.Compare(a.seq, b.seq))
	})
	spans := make([]span, len(bufs))
	total := 0
	for i, b := range bufs {
		spans[i] = span{b.second, b.cols.Len()}
		total += b.cols.Len()
	}
	out := makeColumns(total)
	for _, b := range bufs {
		appendColumns(&out, &b.cols, 0, b.cols.Len())
	}
	sortSeconds(&out, spans)
	return &out
}

func makeColumns(n int) subsecond.Columns {
	return subsecond.Columns{
		Time: make([]int64, 0, n), CPU: make([]int32, 0, n), PID: make([]int32, 0, n), TID: make([]int32, 0, n),
		Comm: make([]uint32, 0, n), Event: make([]uint16, 0, n), Weight: make([]uint64, 0, n), Stack: make([]int32, 0, n),
	}
}

// appendColumns appends samples [lo, hi) of src to dst.
func appendColumns(dst, src *subsecond.Columns, lo, hi int) {
	dst.Time = append(dst.Time, src.Time[lo:hi]...)
	dst.CPU = append(dst.CPU, src.CPU[lo:hi]...)
	dst.PID = append(dst.PID, src.PID[lo:hi]...)
	dst.TID = append(dst.TID, src.TID[lo:hi]...)
	dst.Comm = append(dst.Comm, src.Comm[lo:hi]...)
	dst.Event = append(dst.Event, src.Event[lo:hi]...)
	dst.Weight = append(dst.Weight, src.Weight[lo:hi]...)
	dst.Stack = append(dst.Stack, src.Stack[lo:hi]...)
}

// copyColumns writes src over dst's samples from index at.
func copyColumns(dst *subsecond.Columns, at int, src *subsecond.Columns) {
	copy(dst.Time[at:], src.Time)
	copy(dst.CPU[at:], src.CPU)
	copy(dst.PID[at:], src.PID)
	copy(dst.TID[at:], src.TID)
	copy(dst.Comm[at:], src.Comm)
	copy(dst.Event[at:], src.Event)
	copy(dst.Weight[at:], src.Weight)
	copy(dst.Stack[at:], src.Stack)
}

// window returns samples [lo, hi) of c as columns of their own that share
// c's arrays, with capacity up to index n.
func window(c *subsecond.Columns, lo, hi, n int) subsecond.Columns {
	return subsecond.Columns{Time: c.Time[lo:hi:n], CPU: c.CPU[lo:hi:n], PID: c.PID[lo:hi:n], TID: c.TID[lo:hi:n],
		Comm: c.Comm[lo:hi:n], Event: c.Event[lo:hi:n], Weight: c.Weight[lo:hi:n], Stack: c.Stack[lo:hi:n]}
}

// grow extends every column of cols by n samples.
func grow(cols *subsecond.Columns, n int) {
	l := cols.Len() + n
	cols.Time = slices.Grow(cols.Time, n)[:l]
	cols.CPU = slices.Grow(cols.CPU, n)[:l]
	cols.PID = slices.Grow(cols.PID, n)[:l]
	cols.TID = slices.Grow(cols.TID, n)[:l]
	cols.Comm = slices.Grow(cols.Comm, n)[:l]
	cols.Event = slices.Grow(cols.Event, n)[:l]
	cols.Weight = slices.Grow(cols.Weight, n)[:l]
	cols.Stack = slices.Grow(cols.Stack, n)[:l]
}

// cut shortens every column of cols to n samples.
func cut(cols *subsecond.Columns, n int) {
	cols.Time, cols.CPU, cols.PID, cols.TID = cols.Time[:n], cols.CPU[:n], cols.PID[:n], cols.TID[:n]
	cols.Comm, cols.Event, cols.Weight, cols.Stack = cols.Comm[:n], cols.Event[:n], cols.Weight[:n], cols.Stack[:n]
}
