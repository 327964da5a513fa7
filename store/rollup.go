package store

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/subsecond/subsecond"
)

// rollupFormat is the format byte of an encoded subsecond.Rollup.
const rollupFormat = 1

// encodeRollup encodes r: its CPUs (the first, then the steps between
// them), its commands, then each second's start (in seconds, the step from
// the one before) with its CPU entries (the CPU's index as a step from the
// entry before, then samples, busy and system) and command entries (the
// same, by command index).
func encodeRollup(r *subsecond.Rollup) []byte {
	e := enc{b: make([]byte, 0, 64+r.Len()*(4+len(r.CPUs)*4))}
	e.byte(rollupFormat)
	e.uvarint(uint64(len(r.CPUs)))
	prev := int64(0)
	for _, c := range r.CPUs {
		e.varint(int64(c) - prev)
		prev = int64(c)
	}
	e.uvarint(uint64(len(r.Comms)))
	for _, c := range r.Comms {
		e.bytes([]byte(c))
	}
	cpuIdx := make(map[int32]int, len(r.CPUs))
	for i, c := range r.CPUs {
		cpuIdx[c] = i
	}
	e.uvarint(uint64(r.Len()))
	var cpus []subsecond.CPUCount
	var comms []subsecond.CommCount
	prev = 0
	for i, start := range r.Starts {
		sec := start / subsecond.ChunkSpan
		e.varint(sec - prev)
		prev = sec
		cpus = r.CPUCounts(i, cpus[:0])
		e.uvarint(uint64(len(cpus)))
		k := 0
		for _, c := range cpus {
			at := cpuIdx[c.CPU]
			e.uvarint(uint64(at - k))
			k = at
			putCounts(&e, &c.Counts)
		}
		comms = r.CommCounts(i, comms[:0])
		e.uvarint(uint64(len(comms)))
		k = 0
		for _, c := range comms {
			at, _ := slices.BinarySearch(r.Comms, c.Comm)
			e.uvarint(uint64(at - k))
			k = at
			putCounts(&e, &c.Counts)
		}
	}
	return e.b
}

// decodeRollup decodes what encodeRollup wrote, checking every index and
// count.
func decodeRollup(b []byte) (*subsecond.Rollup, error) {
	d := dec{b: b}
	if f := d.byte(); f != rollupFormat && d.err == nil {
		return nil, fmt.Errorf("%w: rollup format %d", errCorrupt, f)
	}
	cpus := make([]int32, d.count(len(b)))
	prev := int64(0)
	for i := range cpus {
		v := prev + d.varint()
		if v < math.MinInt32 || v > math.MaxInt32 || (i > 0 && v <= prev) {
			d.fail("rollup CPUs out of order")
		}
		cpus[i], prev = int32(v), v
	}
	comms := make([]string, d.count(len(b)))
	for i := range comms {
		comms[i] = string(d.bytes())
	}
	secs := d.count(len(b))
	if d.err != nil {
		return nil, d.err
	}
	rb := subsecond.NewRollupBuilder(cpus, comms, secs, min(secs*len(cpus), len(b)/4))
	sec := int64(0)
	for range secs {
		sec += d.varint()
		if sec < math.MinInt64/subsecond.ChunkSpan || sec > math.MaxInt64/subsecond.ChunkSpan {
			d.fail("rollup second out of range")
		}
		if d.err != nil {
			break
		}
		rb.Second(sec * subsecond.ChunkSpan)
		k := 0
		for range d.count(len(cpus)) {
			var s, bu, sy uint32
			if step, ok := d.smallEntry(&s, &bu, &sy, len(cpus)); ok {
				k += step
			} else {
				k += d.count(len(cpus))
				s, bu, sy = getRollupCounts(&d)
			}
			if k >= len(cpus) {
				d.fail("rollup CPU index out of range")
			}
			if d.err != nil {
				break
			}
			rb.CPU(k, s, bu, sy)
		}
		k = 0
		for range d.count(len(comms)) {
			k += d.count(len(comms))
			s, bu, sy := getRollupCounts(&d)
			if k >= len(comms) {
				d.fail("rollup command index out of range")
			}
			if d.err != nil {
				break
			}
			rb.Comm(k, s, bu, sy)
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return rb.Rollup(), nil
}

// smallEntry reads an entry whose index step and counts are each one
// byte, as most are (a step of 1 and fewer than 128 samples a second), in
// one step rather than four varints, checked as count and getRollupCounts
// check them: it sets samples, busy and system and returns the step, or
// reports false, reading nothing, for an entry of longer varints.
func (d *dec) smallEntry(samples, busy, system *uint32, max int) (int, bool) {
	b := d.b
	if d.err != nil || len(b) < 4 || (b[0]|b[1]|b[2]|b[3])&0x80 != 0 {
		return 0, false
	}
	d.b = b[4:]
	if int(b[0]) > max {
		d.fail(fmt.Sprintf("count %d exceeds %d", b[0], max))
		return 0, true
	}
	if b[2] > b[1] || b[3] > b[2] {
		d.fail("rollup counts inconsistent")
	}
	*samples, *busy, *system = uint32(b[1]), uint32(b[2]), uint32(b[3])
	return int(b[0]), true
}

// getRollupCounts reads an entry's samples, busy and system counts.
func getRollupCounts(d *dec) (samples, busy, system uint32) {
	s, b, y := d.count(math.MaxUint32), d.count(math.MaxUint32), d.count(math.MaxUint32)
	if b > s || y > b {
		d.fail("rollup counts inconsistent")
	}
	return uint32(s), uint32(b), uint32(y)
}

// rollupOf returns the encoded rollup of the chunks an import spooled.
func rollupOf(comms []string, events int, sp *chunkSpool) ([]byte, error) {
	chunks := sp.sorted()
	m := newSummaryMerger(comms, events, len(chunks))
	for i, ch := range chunks {
		start := ch.Second * subsecond.ChunkSpan
		if ch.Second == chunkSecond(subsecond.NoTime) {
			start = subsecond.NoTime
		}
		if err := m.add(start, ch.Summary, len(chunks)-i-1); err != nil {
			return nil, fmt.Errorf("rollup: chunk %d/%d: %w", ch.Second, ch.Seq, err)
		}
	}
	return encodeRollup(subsecond.NewRollup(m.summaries())), nil
}

// Rollup returns profile id's rollup, the per-second counts the host views
// read (see subsecond.Rollup). A profile imported before rollups were
// stored gets its rollup from its chunk summaries on first read, and
// stores it; a failure to store it (a full disk, a lock held past the busy
// timeout) fails no view but leaves it to be made again on the next read.
func (s *Store) Rollup(ctx context.Context, id string) (*subsecond.Rollup, error) {
	b, err := s.b.Rollup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("rollup of %s: %w", id, err)
	}
	if b != nil {
		r, err := decodeRollup(b)
		if err != nil {
			return nil, fmt.Errorf("rollup of %s: %w", id, err)
		}
		return r, nil
	}
	sums, err := s.Summaries(ctx, id)
	if err != nil {
		return nil, err
	}
	r := subsecond.NewRollup(sums)
	s.b.WriteRollup(ctx, id, encodeRollup(r)) // a failure is the next read's to mend
	return r, nil
}
