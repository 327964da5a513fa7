package subsecond

import "time"

// ChunkSpan is the span of time whose samples the store keeps together, in
// nanoseconds: one second, aligned to whole seconds of the capture's clock
// (so the chunk of a time t starts at FloorSecond(t)). A chunk is also the
// unit of a ChunkSummary.
const ChunkSpan = int64(time.Second)

// MaxEvents is the largest number of distinct event names a capture may
// have: Columns.Event is a uint16. An import past it is refused with an
// error wrapping ErrTooLarge.
const MaxEvents = 1<<16 - 1

// ChunkSummary counts the samples of one second of a capture, so that views
// across many captures (a host's night) need not read the samples
// themselves. Samples counts every sample; Busy the busy ones and System
// the system ones, as a sample's classes define them (Class, ClassesOf) for
// every view; Busy − System is user time. Counts are per event, since
// adding samples of different events means nothing.
//
// The store counts them at import, with each chunk it writes; the host
// views read them restricted to the first event (timeline.FromChunks).
type ChunkSummary struct {
	// Start is the second's first nanosecond, a multiple of ChunkSpan, or
	// NoTime for the samples that carry no time.
	Start int64
	// CPUs holds one entry per (CPU, event) with samples, by CPU and then
	// event. Samples without a CPU have CPU Unknown.
	CPUs []CPUCount
	// Comms holds one entry per (command, event) with samples, by command
	// name and then event.
	Comms []CommCount
}

// CPUCount is the sample count of one CPU and event in a ChunkSummary.
type CPUCount struct {
	CPU   int32
	Event uint16 // index into Profile.Events
	Counts
}

// CommCount is the sample count of one command and event in a
// ChunkSummary.
type CommCount struct {
	Comm  string
	Event uint16 // index into Profile.Events
	Counts
}

// Counts are the sample, busy and system counts of a ChunkSummary entry.
type Counts struct {
	Samples int64
	Busy    int64
	System  int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Samples += o.Samples
	c.Busy += o.Busy
	c.System += o.System
}

// Count adds one sample to c: busy, system or neither (see Class.Time).
func (c *Counts) Count(busy, system bool) {
	c.Samples++
	if busy {
		c.Busy++
	}
	if system {
		c.System++
	}
}

// MaxSpan bounds the time a capture's samples may span, in nanoseconds:
// thirty days, whose offset heatmap can still be drawn at its widest
// columns (10 s) with 30 rows. A capture spanning more has a sample whose
// time is wrong (a clock jump, a corrupted line); import refuses it.
const MaxSpan = int64(30 * 24 * time.Hour)
