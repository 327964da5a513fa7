package store

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
)

// The fleet index stores two kinds of blobs:
//
//   - a capture's slot totals (fleet_captures.slots): behind a format byte,
//     zstd of the slot count and then five columns of varints, the
//     samples, busy and system counts as zigzag deltas from the previous
//     slot's, and each slot's peak core as the two counts of its fraction
//     (system samples, samples), so that it reads back exactly;
//   - a name's counts in one capture (fleet_counts.slots): the slots with
//     samples as pairs of varints, the slots skipped since the previous
//     one and the count. They are a few bytes, too small for zstd's frame
//     to pay.

// Format bytes of the fleet index's blobs.
const (
	slotsFormat  = 1
	countsFormat = 1
)

// maxIndexSlots bounds a capture's slots: subsecond.MaxSpan in slots, and
// one more for a span that starts late in its first slot.
const maxIndexSlots = int(subsecond.MaxSpan/subsecond.IndexSlot) + 2

// maxIndexName bounds the bytes of an indexed name: a longer function or
// call edge (C++ templates) is cut to it, at a character boundary, so that
// it fits PostgreSQL's unique index of the names.
const maxIndexName = 1024

// slotTotal is one slot's totals as stored: the counts, and the peak
// core's share as the fraction peakSys / peakN (0/0 when no CPU was
// judged).
type slotTotal struct {
	subsecond.Counts
	peakSys, peakN int64
}

// peak returns the slot's subsecond.SlotTotals.PeakCore.
func (s slotTotal) peak() float64 {
	if s.peakN == 0 {
		return 0
	}
	return float64(s.peakSys) / float64(s.peakN)
}

// encodeSlotTotals returns the blob of a capture's slot totals.
func encodeSlotTotals(slots []slotTotal) []byte {
	e := enc{b: make([]byte, 0, 8*len(slots)+8)}
	e.uvarint(uint64(len(slots)))
	for _, col := range []func(s *slotTotal) int64{
		func(s *slotTotal) int64 { return s.Samples },
		func(s *slotTotal) int64 { return s.Busy },
		func(s *slotTotal) int64 { return s.System },
	} {
		var prev int64
		for i := range slots {
			v := col(&slots[i])
			e.varint(v - prev)
			prev = v
		}
	}
	for _, s := range slots {
		e.uvarint(uint64(s.peakN))
		e.uvarint(uint64(s.peakSys))
	}
	return append([]byte{slotsFormat}, zstdBlob(e.b)...)
}

// decodeSlotTotals reads what encodeSlotTotals wrote.
func decodeSlotTotals(b []byte) ([]subsecond.SlotTotals, error) {
	if len(b) == 0 || b[0] != slotsFormat {
		return nil, fmt.Errorf("%w: slot totals format", errCorrupt)
	}
	raw, err := unzstd(nil, b[1:])
	if err != nil {
		return nil, err
	}
	d := dec{b: raw}
	n := d.count(maxIndexSlots)
	out := make([]subsecond.SlotTotals, n)
	for c := range 3 {
		var v int64
		for i := range out {
			v += d.varint()
			switch c {
			case 0:
				out[i].Samples = v
			case 1:
				out[i].Busy = v
			case 2:
				out[i].System = v
			}
		}
	}
	for i := range out {
		s := &out[i]
		n, sys := d.uvarint(), d.uvarint()
		if sys > n || s.Samples < 0 || s.Busy > s.Samples || s.System > s.Busy || s.System < 0 {
			d.fail("slot totals inconsistent")
		}
		if n > 0 {
			s.PeakCore = float64(sys) / float64(n)
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// slotCount is a name's samples in one slot.
type slotCount struct {
	slot int32
	n    int64
}

// appendSlotCounts appends the blob of a name's counts, given by slot in
// increasing order, to b.
func appendSlotCounts(b []byte, counts []slotCount) []byte {
	e := enc{b: b}
	e.byte(countsFormat)
	prev := int32(-1)
	for _, c := range counts {
		e.uvarint(uint64(c.slot - prev - 1))
		e.uvarint(uint64(c.n))
		prev = c.slot
	}
	return e.b
}

// decodeSlotCounts reads what appendSlotCounts wrote, as counts per slot
// up to the last with samples.
func decodeSlotCounts(b []byte) ([]int64, error) {
	d := dec{b: b}
	if f := d.byte(); f != countsFormat && d.err == nil {
		return nil, fmt.Errorf("%w: slot counts format %d", errCorrupt, f)
	}
	var out []int64
	for d.err == nil && len(d.b) > 0 {
		gap := d.count(maxIndexSlots)
		n := d.uvarint()
		if len(out)+gap >= maxIndexSlots || n > 1<<62 {
			d.fail("slot counts out of range")
			break
		}
		for range gap {
			out = append(out, 0)
		}
		out = append(out, int64(n))
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// indexName returns s cut to maxIndexName bytes at a character boundary.
func indexName(s string) string {
	if len(s) <= maxIndexName {
		return s
	}
	s = s[:maxIndexName]
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// namesFormat is the format byte of a capture's names blob
// (fleet_captures.names): 2 since each name carries its total.
const namesFormat = 2

// EncodeNames returns the blob of a capture's names (fleet_captures.names):
// every name's dictionary ID (ids[i] is that of counts[i]) with its
// per-slot counts, behind a format byte, zstd of the number of names and
// then, by increasing ID, the ID's difference from the previous one, the
// name's total and its slot counts blob (appendSlotCounts) as length and
// bytes. The contrasts read a capture's every name from it in one row (a
// capture wholly inside their range by the totals alone), a search by
// call edge reads the edges' slot counts, and a delete finds the
// capture's rows of fleet_counts by it.
func EncodeNames(ids []int64, counts []IndexCount) []byte {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	e := enc{b: make([]byte, 0, 8*len(ids)+8)}
	e.uvarint(uint64(len(ids)))
	prev := int64(0)
	for _, i := range order {
		e.uvarint(uint64(ids[i] - prev))
		prev = ids[i]
		e.uvarint(uint64(counts[i].Total))
		e.bytes(counts[i].Slots)
	}
	return append([]byte{namesFormat}, zstdBlob(e.b)...)
}

// EachName calls fn with each name of a names blob (EncodeNames): its
// dictionary ID, its total and its slot counts blob, by increasing ID.
func EachName(b []byte, fn func(id, total int64, slots []byte) error) error {
	if len(b) == 0 || b[0] != namesFormat {
		return fmt.Errorf("%w: names format", errCorrupt)
	}
	raw, err := unzstd(nil, b[1:])
	if err != nil {
		return err
	}
	d := dec{b: raw}
	n := d.count(len(raw))
	id := int64(0)
	for range n {
		id += int64(d.uvarint())
		total := d.uvarint()
		slots := d.bytes()
		if d.err != nil {
			break
		}
		if total > 1<<62 {
			d.fail("a name's total out of range")
			break
		}
		if err := fn(id, int64(total), slots); err != nil {
			return err
		}
	}
	return d.end()
}

// slotSum returns the samples of a slot counts blob (appendSlotCounts) in
// the slots starting in [from, to), slot 0 starting at start.
func slotSum(b []byte, start, from, to int64) (int64, error) {
	d := dec{b: b}
	if f := d.byte(); f != countsFormat && d.err == nil {
		return 0, fmt.Errorf("%w: slot counts format %d", errCorrupt, f)
	}
	var sum int64
	slot := int64(-1)
	for d.err == nil && len(d.b) > 0 {
		slot += int64(d.count(maxIndexSlots)) + 1
		n := d.uvarint()
		if slot >= int64(maxIndexSlots) || n > 1<<62 {
			d.fail("slot counts out of range")
			break
		}
		if at := start + slot*subsecond.IndexSlot; at >= from && at < to {
			sum += int64(n)
		}
	}
	return sum, d.end()
}
