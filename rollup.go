package subsecond

import (
	"cmp"
	"math"
	"slices"
	"unsafe"
)

// Rollup is one capture's per-second counts as the host views read them
// (the night's timeline, comm shares, hot spots and range selections): the
// first event's samples that have a time, counted by CPU (those with a CPU)
// and by command, for each second in which some CPU has such samples. The
// store writes a capture's rollup at import, so that a night is read as a
// few hundred small rows rather than every chunk's summary.
//
// It holds the same counts as the ChunkSummary list it is built from
// (NewRollup) in about a quarter of the memory: CPUs and commands are
// indexes into the rollup's lists, and the counts are 16 bits wide when
// every count fits.
type Rollup struct {
	// Starts holds each second's first nanosecond on the capture's clock,
	// in time order.
	Starts []int64
	// CPUs are the CPUs with samples, ascending; Comms the commands, by
	// name.
	CPUs  []int32
	Comms []string

	cpuEnd, commEnd []int32 // by second: the end of its entries
	narrow          []cell16
	wide            []cell32
	comms           []cell32
}

// cell16 is one entry of a rollup whose indexes and counts all fit in 16
// bits; cell32 one of another rollup, or a command's entry.
type cell16 struct{ key, samples, busy, system uint16 }
type cell32 struct{ key, samples, busy, system uint32 }

// NewRollup returns the rollup of sums, a capture's per-second summaries
// in time order (as the store reads them): of each second with a time,
// the entries of event 0, those by CPU without CPU Unknown. A second
// without such a CPU entry is left out, with its commands. Counts past
// 2³² − 1 (a second holds far fewer samples) are clamped to it.
func NewRollup(sums []ChunkSummary) *Rollup {
	cpuIdx := map[int32]int{}
	commIdx := map[string]int{}
	entries := 0
	for i := range sums {
		s := &sums[i]
		if s.Start == NoTime {
			continue
		}
		for _, c := range s.CPUs {
			if c.Event == 0 && c.CPU != Unknown {
				cpuIdx[c.CPU] = 0
				entries++
			}
		}
		for _, c := range s.Comms {
			if c.Event == 0 {
				commIdx[c.Comm] = 0
			}
		}
	}
	cpus, comms := sortedKeys(cpuIdx), sortedKeys(commIdx)
	for i, c := range cpus {
		cpuIdx[c] = i
	}
	for i, c := range comms {
		commIdx[c] = i
	}
	b := NewRollupBuilder(cpus, comms, len(sums), entries)
	for i := range sums {
		s := &sums[i]
		if s.Start == NoTime || !slices.ContainsFunc(s.CPUs, func(c CPUCount) bool { return c.Event == 0 && c.CPU != Unknown }) {
			continue
		}
		b.Second(s.Start)
		for _, c := range s.CPUs {
			if c.Event == 0 && c.CPU != Unknown {
				b.CPU(cpuIdx[c.CPU], clamp32(c.Samples), clamp32(c.Busy), clamp32(c.System))
			}
		}
		for _, c := range s.Comms {
			if c.Event == 0 {
				b.Comm(commIdx[c.Comm], clamp32(c.Samples), clamp32(c.Busy), clamp32(c.System))
			}
		}
	}
	return b.Rollup()
}

func clamp32(n int64) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

func sortedKeys[K cmp.Ordered](m map[K]int) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RollupBuilder builds a Rollup second by second, as a store decodes a
// stored one: Second, then the second's CPU and command entries. It keeps
// 16-bit entries until a count needs more.
type RollupBuilder struct {
	r Rollup
}

// NewRollupBuilder returns a builder of a rollup over the given CPUs
// (ascending) and commands (by name), for about seconds seconds and
// entries CPU entries.
func NewRollupBuilder(cpus []int32, comms []string, seconds, entries int) *RollupBuilder {
	b := &RollupBuilder{r: Rollup{CPUs: cpus, Comms: comms, Starts: make([]int64, 0, seconds),
		cpuEnd: make([]int32, 0, seconds), commEnd: make([]int32, 0, seconds)}}
	if len(cpus) <= math.MaxUint16 {
		b.r.narrow = make([]cell16, 0, entries)
	} else {
		b.r.wide = make([]cell32, 0, entries)
	}
	return b
}

// Second starts the second whose first nanosecond is start.
func (b *RollupBuilder) Second(start int64) {
	b.r.Starts = append(b.r.Starts, start)
	b.r.cpuEnd = append(b.r.cpuEnd, int32(len(b.r.narrow)+len(b.r.wide)))
	b.r.commEnd = append(b.r.commEnd, int32(len(b.r.comms)))
}

// CPU adds the counts of the CPU at index cpu of the builder's CPUs to
// the current second.
func (b *RollupBuilder) CPU(cpu int, samples, busy, system uint32) {
	if b.r.wide == nil && samples > math.MaxUint16 {
		b.r.wide = make([]cell32, len(b.r.narrow), cap(b.r.narrow))
		for i, c := range b.r.narrow {
			b.r.wide[i] = cell32{uint32(c.key), uint32(c.samples), uint32(c.busy), uint32(c.system)}
		}
		b.r.narrow = nil
	}
	if b.r.wide != nil {
		b.r.wide = append(b.r.wide, cell32{uint32(cpu), samples, busy, system})
	} else {
		b.r.narrow = append(b.r.narrow, cell16{uint16(cpu), uint16(samples), uint16(busy), uint16(system)})
	}
	b.r.cpuEnd[len(b.r.cpuEnd)-1]++
}

// Comm adds the counts of the command at index comm of the builder's
// commands to the current second.
func (b *RollupBuilder) Comm(comm int, samples, busy, system uint32) {
	b.r.comms = append(b.r.comms, cell32{uint32(comm), samples, busy, system})
	b.r.commEnd[len(b.r.commEnd)-1]++
}

// Rollup returns the rollup built.
func (b *RollupBuilder) Rollup() *Rollup {
	r := b.r
	return &r
}

// Len returns the number of seconds of r.
func (r *Rollup) Len() int { return len(r.Starts) }

// bounds returns the range of second i's entries in ends.
func bounds(ends []int32, i int) (lo, hi int) {
	if i > 0 {
		lo = int(ends[i-1])
	}
	return lo, int(ends[i])
}

// CPUCounts appends second i's counts by CPU, in CPU order, to buf and
// returns it; their Event is 0.
func (r *Rollup) CPUCounts(i int, buf []CPUCount) []CPUCount {
	lo, hi := bounds(r.cpuEnd, i)
	if r.wide != nil {
		for _, c := range r.wide[lo:hi] {
			buf = append(buf, CPUCount{CPU: r.CPUs[c.key], Counts: Counts{int64(c.samples), int64(c.busy), int64(c.system)}})
		}
		return buf
	}
	for _, c := range r.narrow[lo:hi] {
		buf = append(buf, CPUCount{CPU: r.CPUs[c.key], Counts: Counts{int64(c.samples), int64(c.busy), int64(c.system)}})
	}
	return buf
}

// SumCPUs adds the counts of seconds [lo, hi) of r by CPU to sums, which
// holds one entry per CPU of r.CPUs, by index, and sets the entries of
// seen, as long, of the CPUs that have an entry in those seconds (an
// entry of no samples counts). It reads each entry once, with no
// allocation: the host views sum a column's seconds with it.
func (r *Rollup) SumCPUs(lo, hi int, sums []Counts, seen []bool) {
	if lo >= hi {
		return
	}
	a, _ := bounds(r.cpuEnd, lo)
	_, b := bounds(r.cpuEnd, hi-1)
	if r.wide != nil {
		for _, c := range r.wide[a:b] {
			s := &sums[c.key]
			s.Samples += int64(c.samples)
			s.Busy += int64(c.busy)
			s.System += int64(c.system)
			seen[c.key] = true
		}
		return
	}
	for _, c := range r.narrow[a:b] {
		s := &sums[c.key]
		s.Samples += int64(c.samples)
		s.Busy += int64(c.busy)
		s.System += int64(c.system)
		seen[c.key] = true
	}
}

// CommCounts appends second i's counts by command, in name order, to buf
// and returns it; their Event is 0.
func (r *Rollup) CommCounts(i int, buf []CommCount) []CommCount {
	lo, hi := bounds(r.commEnd, i)
	for _, c := range r.comms[lo:hi] {
		buf = append(buf, CommCount{Comm: r.Comms[c.key], Counts: Counts{int64(c.samples), int64(c.busy), int64(c.system)}})
	}
	return buf
}

// Summaries returns r as per-second summaries, one per second in time
// order, each entry's Event 0.
func (r *Rollup) Summaries() []ChunkSummary {
	out := make([]ChunkSummary, r.Len())
	for i := range out {
		out[i] = ChunkSummary{Start: r.Starts[i], CPUs: r.CPUCounts(i, nil), Comms: r.CommCounts(i, nil)}
	}
	return out
}

// Bytes estimates the memory r holds.
func (r *Rollup) Bytes() int64 {
	n := int64(unsafe.Sizeof(*r)) + int64(len(r.Starts))*(8+4+4) + int64(len(r.CPUs))*4 +
		int64(len(r.narrow))*int64(unsafe.Sizeof(cell16{})) + int64(len(r.wide)+len(r.comms))*int64(unsafe.Sizeof(cell32{}))
	for _, c := range r.Comms {
		n += int64(unsafe.Sizeof(c)) + int64(len(c))
	}
	return n
}
