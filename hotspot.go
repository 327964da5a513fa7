package subsecond

import (
	"io"
	"unsafe"
)

// Hotspot is one episode of one CPU: [Start, End) in nanoseconds, in which
// the measured fraction (HotspotReport.Measure) stayed at or above the
// threshold. Samples are its non-idle samples. Busy is their number over
// the samples the CPU yields in the episode at the sampling rate, System
// the part whose leaf frame is in the kernel, and User = Busy − System.
// Comm is the command with most of the samples; Stack is the heaviest path
// of Comm's stacks (folded: command;root;…;frame, with the filter's Only
// applied), found by descending from the root into the child with the most
// samples while some child outweighs the node's own self samples; Function
// is the function with most self samples. Each Share is a fraction of
// Samples (for Stack: the samples under its last frame).
//
// Score = measured × max(0, share − Usual), where measured is the
// episode's samples that the measure counts (all of them for busy, the
// kernel-leaf ones for system), share is Comm's part of them, and Usual is
// Comm's share of this CPU's measured samples outside the episode,
// counting one second of the CPU's samples (at the sampling rate) as
// another command's, so that a short outside does not make a command look
// usual: a command pegging a core it usually leaves alone scores about its
// sample count, a thread that always owns its core scores near 0. Episodes
// are ranked by Score, then by start, then by CPU. docs/hotspots.md
// explains both with an example.
//
// URL is the path of the episode's flame graph page when the profile is
// stored (see HotspotReport.Link), else empty.
type Hotspot struct {
	CPU           int32   `json:"cpu"`
	Start         int64   `json:"start_ns"`
	End           int64   `json:"end_ns"`
	Busy          float64 `json:"busy"`
	System        float64 `json:"system"`
	User          float64 `json:"user"`
	Samples       int64   `json:"samples"`
	Comm          string  `json:"comm"`
	CommShare     float64 `json:"comm_share"`
	Stack         string  `json:"top_stack"`
	StackShare    float64 `json:"top_stack_share"`
	Function      string  `json:"top_function"`
	FunctionShare float64 `json:"top_function_share"`
	Usual         float64 `json:"usual"`
	Score         float64 `json:"score"`
	URL           string  `json:"url,omitempty"`
}

// HotCell is one offset-heatmap cell (default shape: 1 s columns, 50 rows).
type HotCell struct {
	Col   int   `json:"col"`
	Row   int   `json:"row"`
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	Count int64 `json:"count"`
}

// HotspotReport lists hot spots, highest Score first, and the hottest
// cells, fullest first. Measure ("busy" or "system"), Threshold and Min
// (ns) are what the episodes were found with. Found counts the episodes
// before the limit applied. Hidden lists the CPUs that have episodes
// without the filter's narrowing criteria (anything but cpu, event and
// idle, such as only=kernel) but none with them, and Note says so in a
// sentence for the user; both are empty otherwise. Start and End (ns) are
// the range searched when it is less than the whole capture (the start
// and end parameters), else 0. The CLI's `hotspots --format json` and the
// API's hot-spot resource write it alike.
type HotspotReport struct {
	T0        int64     `json:"t0_ns"`
	Start     int64     `json:"start_ns,omitempty"`
	End       int64     `json:"end_ns,omitempty"`
	Measure   string    `json:"measure"`
	Threshold float64   `json:"threshold"`
	Min       int64     `json:"min_ns"`
	Found     int       `json:"found"`
	Hidden    []int32   `json:"hidden,omitempty"`
	Note      string    `json:"note,omitempty"`
	Spots     []Hotspot `json:"hotspots"`
	Cells     []HotCell `json:"cells"`
}

// Bytes estimates the memory r holds: its arrays by their capacity and
// the strings its hot spots point to (Sized).
func (r *HotspotReport) Bytes() int64 {
	n := int64(unsafe.Sizeof(*r)) + int64(len(r.Note)) + SliceBytes(r.Hidden) + SliceBytes(r.Spots) + SliceBytes(r.Cells)
	for i := range r.Spots {
		sp := &r.Spots[i]
		n += int64(len(sp.Comm) + len(sp.Stack) + len(sp.Function) + len(sp.URL))
	}
	return n
}

// ProfileList is the list of stored profiles, newest first, as the API's
// /api/profiles and `subsecond list --format json` write it.
type ProfileList struct {
	Profiles []Profile `json:"profiles"`
	// NextCursor is the cursor of the next page, the ID of this page's
	// last profile, and Next that page's URL; both absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	Next       string `json:"next,omitempty"`
}

// Graph is a computed flame graph that can be written in each export
// format: "json", "folded", "svg", "pprof" or "functions".
type Graph interface {
	Export(w io.Writer, format string) error
	Len() int // the number of nodes
}
