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
			seg := c.Slice(at, at+n, at+n)
			subsecond.SortColumns(&seg)
			c.CopyAt(at, &seg)
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
	out := subsecond.MakeColumns(total)
	for _, b := range bufs {
		out.AppendRange(&b.cols, 0, b.cols.Len())
	}
	sortSeconds(&out, spans)
	return &out
}
