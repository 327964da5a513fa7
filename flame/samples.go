package flame

import (
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Samples is the data of a stack chart (the samples of a range in time
// order, each drawn as its stack): the samples that the filter keeps, each
// with the node of the range's flame graph that its stack ends at. The flame
// graph is the one Build returns for the same capture, filter and range, so
// that a client holding that graph draws each sample's stack by walking up
// from its leaf, and a frame is the same node in both views. Nodes is that
// graph's node count, for the client to check that the two agree.
//
// Times are nanoseconds after Start (the range's start); CPU, PID and TID
// are subsecond.Unknown where the input had none; Comm indexes Strings.
type Samples struct {
	Start   int64    `json:"start_ns"`
	End     int64    `json:"end_ns"`
	Nodes   int      `json:"nodes"`
	Count   int      `json:"count"`
	Strings []string `json:"strings"`
	Time    []int64  `json:"time"`
	CPU     []int32  `json:"cpu"`
	PID     []int32  `json:"pid"`
	TID     []int32  `json:"tid"`
	Comm    []int32  `json:"comm"`
	Leaf    []int32  `json:"leaf"`
	// Unrecorded is how much of the range no capture recorded, in
	// nanoseconds (see Graph.Unrecorded).
	Unrecorded int64 `json:"unrecorded_ns,omitempty"`
}

// StackSamples returns the stack-chart samples of c in r that pass f, or,
// when more than limit samples pass, nil and their number alone, so that a
// caller can refuse the range before anything is built for it. Errors are
// those of Build, and subsecond.ErrNoTime for a capture without timestamps,
// whose samples have no order in time to chart.
func StackSamples(c *subsecond.Capture, f query.Filter, r subsecond.Range, limit int) (*Samples, int, error) {
	if !c.Profile.Timed() {
		return nil, 0, subsecond.ErrNoTime
	}
	m, ix, err := prepare(c, f)
	if err != nil {
		return nil, 0, err
	}
	lo, hi, err := CheckRange(c, r)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for i := lo; i < hi; i++ {
		if m.Keep(i) {
			n++
		}
	}
	if n > limit {
		return nil, n, nil
	}
	g := ix.graph(ix.count(c, m, lo, hi), nil)
	// The graph numbers the index's nodes that have samples; map back.
	node := make([]int32, ix.Len())
	for i, k := range g.node {
		node[k] = int32(i)
	}
	s := &Samples{
		Start: r.Start, End: r.End, Nodes: g.Len(), Count: n,
		Time: make([]int64, 0, n), CPU: make([]int32, 0, n), PID: make([]int32, 0, n),
		TID: make([]int32, 0, n), Comm: make([]int32, 0, n), Leaf: make([]int32, 0, n),
	}
	comms := make([]int32, len(c.Strings)) // output string + 1 of each capture string; 0 when not yet used
	col := &c.Samples
	for i := lo; i < hi; i++ {
		if !m.Keep(i) {
			continue
		}
		cm := comms[col.Comm[i]] - 1
		if cm < 0 {
			cm = int32(len(s.Strings))
			comms[col.Comm[i]] = cm + 1
			s.Strings = append(s.Strings, c.Strings[col.Comm[i]])
		}
		s.Time = append(s.Time, col.Time[i]-r.Start)
		s.CPU = append(s.CPU, col.CPU[i])
		s.PID = append(s.PID, col.PID[i])
		s.TID = append(s.TID, col.TID[i])
		s.Comm = append(s.Comm, cm)
		s.Leaf = append(s.Leaf, node[ix.leaf[i]])
	}
	if s.Strings == nil {
		s.Strings = []string{}
	}
	return s, n, nil
}
