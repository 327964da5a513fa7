package subsecond

import (
	"io"
	"net/url"
	"strconv"
)

// Hotspot is one busy episode of one CPU: [Start, End) in nanoseconds.
// Busy is the mean busy fraction over the episode and Samples its non-idle
// samples. Comm is the command with most of those samples; Stack is the
// heaviest path of Comm's stacks (folded: command;root;…;frame, with the
// filter's Only applied), found by descending from the root into the
// child with the most samples while some child outweighs the node's own
// self samples; Function is the function with most self samples. Each
// Share is a fraction of Samples (for Stack: the samples under its last
// frame).
//
// Usual is Comm's share of this CPU's busy samples outside the episode, and
// Score = Samples × (1 − Usual): a command pegging a core it usually leaves
// alone scores high, a thread that always owns its core scores low.
//
// URL is the path of the episode's flame graph page when the profile is
// stored (see HotspotReport.Link), else empty.
type Hotspot struct {
	CPU           int32   `json:"cpu"`
	Start         int64   `json:"start_ns"`
	End           int64   `json:"end_ns"`
	Busy          float64 `json:"busy"`
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
// cells, fullest first. Found counts the episodes before the limit applied.
// The CLI's `hotspots --format json` and the API's hot-spot resource write
// it alike.
type HotspotReport struct {
	T0    int64     `json:"t0_ns"`
	Found int       `json:"found"`
	Spots []Hotspot `json:"hotspots"`
	Cells []HotCell `json:"cells"`
}

// Link sets each spot's URL to the flame graph page of stored profile id
// for its episode: its CPU and range, with the filters of f.
func (r *HotspotReport) Link(id string, f Filter) {
	for i := range r.Spots {
		h := &r.Spots[i]
		v := f.Values()
		v.Set("start", FormatSeconds(h.Start-r.T0))
		v.Set("end", FormatSeconds(h.End-r.T0))
		if h.CPU != Unknown {
			v.Set("cpu", strconv.Itoa(int(h.CPU)))
		}
		h.URL = FlamePath(id, v)
	}
}

// FlamePath returns the path of stored profile id's flame graph page with
// the query v.
func FlamePath(id string, v url.Values) string {
	return "/p/" + url.PathEscape(id) + "/flame?" + v.Encode()
}

// ProfileList is the list of stored profiles, newest first, as the API's
// /api/profiles and `subsecond list --format json` write it.
type ProfileList struct {
	Profiles []Profile `json:"profiles"`
}

// Graph is a computed flame graph that can be written in each export
// format: "json", "folded", "svg", "pprof" or "functions".
type Graph interface {
	Export(w io.Writer, format string) error
	Len() int // the number of nodes
}
