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
// themselves. The counts follow the cores map's definitions (heatmap.Cores)
// with no filter:
//
//   - Samples counts every sample.
//   - Busy counts the samples that are not the idle loop: not (idle task —
//     pid 0 or a command named swapper — whose stack passes through an
//     idle-loop function without interrupt work; see IsIdleFunc and
//     IsIrqFunc).
//   - System counts the busy samples whose leaf frame (the first of the
//     leaf-first stack) is a kernel frame: the CPU's system time.
//
// Busy − System approximates user time. Counts are per event, since adding
// samples of different events means nothing.
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
	CPU    int32
	Event  uint16 // index into Profile.Events
	Counts Counts
}

// CommCount is the sample count of one command and event in a
// ChunkSummary.
type CommCount struct {
	Comm   string
	Event  uint16 // index into Profile.Events
	Counts Counts
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
