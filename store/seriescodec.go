package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/subsecond/subsecond"
)

// A host's series are stored in blocks: the points of one series whose
// times lie in one SeriesBlockSpan of the wall clock, in one blob with the
// block's point count, first and last times and the minimum, maximum and
// sum of its values beside it (SeriesBlock), which a lane whose buckets
// hold whole blocks reads instead of the points.
//
// A block's blob is, behind a format byte and the decimals its values are
// kept to, the point count and then two columns of zigzag varints, the
// whole compressed with zstd:
//
//   - times as delta-of-delta: the first time, the first interval, then
//     each interval's change, and after a change of 0 (an interval equal
//     to the previous one) the number of further intervals equal to it,
//     so that a block sampled every second spends a few bytes on its
//     times;
//   - values as integers on their kind's grid (seriesDecimals), the first
//     then each one's change from the previous.
//
// Values are kept to their kind's precision: a percentage ("%") to 0.01,
// a rate ("/s") to 0.001, a count or a byte count to a whole number —
// except load1, a count with two decimals (as /proc/loadavg writes it).
// A value is rounded to that grid when stored and read back as the grid
// point, so storing a read-back value again changes nothing.

// seriesFormat is the format byte of a series block's blob.
const seriesFormat = 1

// SeriesBlockSpan is the span of wall-clock time whose points of one
// series are stored as one block: ten minutes, 600 points at one a
// second. Blocks are aligned to multiples of it from the Unix epoch.
const SeriesBlockSpan = int64(600e9)

// maxBlockPoints bounds the points a stored block may hold, one a
// millisecond, so that a damaged blob cannot make a reader allocate
// without bound.
const maxBlockPoints = int(SeriesBlockSpan / 1e6)

// maxQuantized bounds a value on its grid: up to 2^53 every integer is a
// float64, so that a value stored reads back exactly.
const maxQuantized = 1 << 53

// pow10 are the grids' scales, by decimals.
var pow10 = [...]float64{1, 10, 100, 1000}

// seriesDecimals returns the decimals to which values of kind k are kept.
func seriesDecimals(k subsecond.SeriesKind) int {
	switch {
	case k.Unit == "%" || k.Name == "load1":
		return 2
	case k.Unit == "/s":
		return 3
	}
	return 0
}

// seriesBlockStart returns the start of the block holding time t (> 0).
func seriesBlockStart(t int64) int64 { return t - t%SeriesBlockSpan }

// quantize returns v on the grid of dec decimals as an integer, and false
// when v is not finite or too large for the grid.
func quantize(v float64, dec int) (int64, bool) {
	q := math.Round(v * pow10[dec])
	if !(math.Abs(q) <= maxQuantized) { // also NaN
		return 0, false
	}
	return int64(q), true
}

// encodeSeries returns the blob of points at times ts (positive,
// increasing) with values qs on the grid of dec decimals.
func encodeSeries(ts, qs []int64, dec int) []byte {
	e := enc{b: make([]byte, 0, 16+len(ts)*2)}
	e.byte(seriesFormat)
	e.byte(byte(dec))
	e.uvarint(uint64(len(ts)))
	var delta int64
	for i := 0; i < len(ts); {
		switch i {
		case 0:
			e.varint(ts[0])
			i++
			continue
		case 1:
			delta = ts[1] - ts[0]
			e.varint(delta)
			i++
			continue
		}
		d := ts[i] - ts[i-1]
		e.varint(d - delta)
		i++
		if d == delta { // a run of equal intervals: its length
			run := 0
			for i < len(ts) && ts[i]-ts[i-1] == delta {
				run++
				i++
			}
			e.uvarint(uint64(run))
		}
		delta = d
	}
	var q0 int64
	for _, q := range qs {
		e.varint(q - q0)
		q0 = q
	}
	return zstdBlob(e.b)
}

// seriesPoints are a block's points as stored: times and values on the
// grid of dec decimals.
type seriesPoints struct {
	dec    int
	ts, qs []int64
}

// decodeSeries decodes blob into p, reusing its slices, and returns the
// scratch buffer buf holding the decompressed blob for the next call.
// Every count, time and value is checked: a damaged blob yields an error
// wrapping errCorrupt, never a panic, and the points decoded are at most
// maxBlockPoints, positive and increasing in time, on their grid.
func decodeSeries(blob []byte, p *seriesPoints, buf []byte) ([]byte, error) {
	raw, err := unzstd(buf[:0], blob)
	if err != nil {
		return buf, err
	}
	if err := decodeSeriesRaw(raw, p); err != nil {
		return raw, err
	}
	return raw, nil
}

// decodeSeriesRaw decodes a decompressed block (see decodeSeries).
func decodeSeriesRaw(raw []byte, p *seriesPoints) error {
	d := dec{b: raw}
	if f := d.byte(); d.err == nil && f != seriesFormat {
		return fmt.Errorf("%w: series block format %d", errCorrupt, f)
	}
	p.dec = int(d.byte())
	if d.err == nil && p.dec >= len(pow10) {
		return fmt.Errorf("%w: series block of %d decimals", errCorrupt, p.dec)
	}
	// Each point's value takes a byte at least.
	n := d.count(min(maxBlockPoints, len(d.b)))
	if d.err != nil {
		return d.err
	}
	p.ts, p.qs = slices.Grow(p.ts[:0], n)[:n], slices.Grow(p.qs[:0], n)[:n]
	b, at := d.b, 0
	var t, delta int64
	for i := 0; i < n; {
		v, next := readZigzag(b, at)
		if next < 0 {
			return fmt.Errorf("%w: bad varint", errCorrupt)
		}
		at = next
		switch i {
		case 0:
			if t = v; t <= 0 {
				return fmt.Errorf("%w: time not positive", errCorrupt)
			}
			p.ts[0] = t
			i++
			continue
		case 1:
			delta = v
		default:
			if v > math.MaxInt64-delta {
				return fmt.Errorf("%w: times not increasing", errCorrupt)
			}
			delta += v // delta > 0: no overflow below
		}
		run := uint64(0)
		if i > 1 && v == 0 {
			u, m := binary.Uvarint(b[at:])
			if m <= 0 || u >= uint64(n-i) {
				return fmt.Errorf("%w: bad run of intervals", errCorrupt)
			}
			at += m
			run = u
		}
		if delta <= 0 {
			return fmt.Errorf("%w: times not increasing", errCorrupt)
		}
		for range run + 1 {
			if t > math.MaxInt64-delta {
				return fmt.Errorf("%w: times beyond the int64 range", errCorrupt)
			}
			t += delta
			p.ts[i] = t
			i++
		}
	}
	var q int64
	for i := range n {
		var v int64
		if at < len(b) && b[at] < 0x80 { // zigzag's common cases, inline
			u := uint64(b[at])
			v, at = int64(u>>1)^-int64(u&1), at+1
		} else if at+1 < len(b) && b[at+1] < 0x80 {
			u := uint64(b[at]&0x7f) | uint64(b[at+1])<<7
			v, at = int64(u>>1)^-int64(u&1), at+2
		} else if v, at = readZigzag(b, at); at < 0 {
			return fmt.Errorf("%w: bad varint", errCorrupt)
		}
		if v < -2*maxQuantized || v > 2*maxQuantized {
			return fmt.Errorf("%w: value out of range", errCorrupt)
		}
		q += v // |q|, |v| ≤ 2^54: no overflow
		if q < -maxQuantized || q > maxQuantized {
			return fmt.Errorf("%w: value out of range", errCorrupt)
		}
		p.qs[i] = q
	}
	if at != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(b)-at)
	}
	return nil
}

// readZigzag reads the zigzag varint at b[at:] and returns it and the index
// after it, or -1 when there is none: dec.varint, with the one-byte case
// inline, since nearly every varint of a series block is one byte.
func readZigzag(b []byte, at int) (int64, int) {
	if at < len(b) && b[at] < 0x80 {
		u := uint64(b[at])
		return int64(u>>1) ^ -int64(u&1), at + 1
	}
	if at >= len(b) {
		return 0, -1
	}
	u, n := binary.Uvarint(b[at:])
	if n <= 0 {
		return 0, -1
	}
	return int64(u>>1) ^ -int64(u&1), at + n
}

// value returns point i's value.
func (p *seriesPoints) value(i int) float64 { return float64(p.qs[i]) / pow10[p.dec] }

// seriesBlock returns the block of key k starting at start that holds
// points ts and qs (on the grid of dec decimals), with its summary.
func seriesBlock(k subsecond.SeriesKey, start int64, ts, qs []int64, dec int) SeriesBlock {
	b := SeriesBlock{Name: k.Name, CPU: k.CPU, Label: k.Label, Start: start,
		First: ts[0], Last: ts[len(ts)-1], Points: int32(len(ts)), Data: encodeSeries(ts, qs, dec)}
	lo, hi := qs[0], qs[0]
	var sum float64 // of integers, exact below 2^53
	for _, q := range qs {
		lo, hi = min(lo, q), max(hi, q)
		sum += float64(q)
	}
	b.Min, b.Max, b.Sum = float64(lo)/pow10[dec], float64(hi)/pow10[dec], sum/pow10[dec]
	return b
}

// MergeSeriesBlocks returns the block holding the points of stored and of
// add, two blocks of the same series and start, and how many of add's
// points stored did not have. At a time both have, stored's value is kept,
// so that sending a batch again stores nothing twice. Values are kept to
// the finer grid of the two. Backends call it to merge a block they are
// given with the one they hold; a damaged blob yields an error wrapping
// errCorrupt.
func MergeSeriesBlocks(stored, add *SeriesBlock) (SeriesBlock, int, error) {
	var a, b seriesPoints
	buf, err := decodeSeries(stored.Data, &a, nil)
	if err != nil {
		return SeriesBlock{}, 0, fmt.Errorf("stored series block %s/%d/%q at %d: %w", stored.Name, stored.CPU, stored.Label, stored.Start, err)
	}
	if _, err := decodeSeries(add.Data, &b, buf); err != nil {
		return SeriesBlock{}, 0, fmt.Errorf("series block %s/%d/%q at %d: %w", add.Name, add.CPU, add.Label, add.Start, err)
	}
	dec := max(a.dec, b.dec)
	scale := func(p *seriesPoints, i int) int64 {
		return p.qs[i] * int64(pow10[dec-p.dec])
	}
	n := len(a.ts) + len(b.ts)
	ts, qs := make([]int64, 0, n), make([]int64, 0, n)
	added := 0
	i, j := 0, 0
	for i < len(a.ts) || j < len(b.ts) {
		switch {
		case j == len(b.ts) || i < len(a.ts) && a.ts[i] < b.ts[j]:
			ts, qs = append(ts, a.ts[i]), append(qs, scale(&a, i))
			i++
		case i == len(a.ts) || b.ts[j] < a.ts[i]:
			ts, qs = append(ts, b.ts[j]), append(qs, scale(&b, j))
			j++
			added++
		default: // the same time: the stored value stays
			ts, qs = append(ts, a.ts[i]), append(qs, scale(&a, i))
			i++
			j++
		}
	}
	if added == 0 {
		return *stored, 0, nil
	}
	if len(ts) > maxBlockPoints {
		return SeriesBlock{}, 0, fmt.Errorf("series block %s/%d/%q at %d: more than %d points: %w", add.Name, add.CPU, add.Label, add.Start, maxBlockPoints, subsecond.ErrTooLarge)
	}
	// On the finer grid a coarser block's values may exceed maxQuantized.
	for _, q := range qs {
		if q < -maxQuantized || q > maxQuantized {
			return SeriesBlock{}, 0, fmt.Errorf("series block %s/%d/%q at %d: value out of range: %w", add.Name, add.CPU, add.Label, add.Start, subsecond.ErrInvalid)
		}
	}
	return seriesBlock(subsecond.SeriesKey{Name: add.Name, CPU: add.CPU, Label: add.Label}, add.Start, ts, qs, dec), added, nil
}
