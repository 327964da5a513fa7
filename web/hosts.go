package web

import (
	"slices"
	"strconv"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// HostRow is one host of the hosts page, ready to show.
type HostRow struct {
	Host     string
	Href     string
	Captures int
	Samples  int64
	Wall     *WallRange // the wall-clock span of its captures; nil when none has one
	Without  int        // captures without wall clock
	Labels   []subsecond.Label
}

// HostsPage lists the hosts of the stored captures.
type HostsPage struct {
	Layout
	Hosts []HostRow
	Fleet bool // the server keeps the fleet index: link to /fleet
	// Next is the URL of the next page, "" on the last; First is set on
	// every page but the first, which it links to.
	Next  string
	First bool
}

// HostPage shows one host's night: the containers its script fills from
// the host API (ViewData.API), and the span and capture count as text.
type HostPage struct {
	Layout
	Host     string
	Captures int
	Wall     *WallRange // the wall-clock span of its captures; nil when none has one
	Without  int
	Labels   []subsecond.Label // the host's labels, set and derived
	// Sessions are the host's recording sessions, which the page's picker
	// offers when there are more than one.
	Sessions []SessionOption
	// ExplainHref opens the explanation of the host's markers (all of
	// them, the session shown).
	ExplainHref string
}

// SessionOption is one recording session in the host page's picker.
type SessionOption struct {
	Number   int
	Wall     WallRange
	Captures int
	Samples  int64
}

// sessionLabel names a session in the picker, in UTC (the script rewrites
// it in the page's zone): "3: 2026-11-30 03:00:00–04:12:30 UTC, 40
// captures", the end's date too when it is another day.
func sessionLabel(s SessionOption) string {
	n := strconv.Itoa(s.Captures) + " captures"
	if s.Captures == 1 {
		n = "1 capture"
	}
	approx := ""
	if s.Wall.Approximate {
		approx = "≈ "
	}
	from := Clock(s.Wall.From, true)
	to := Clock(s.Wall.To, true)
	if to[:10] == from[:10] {
		to = Clock(s.Wall.To, false) // the same day
	}
	return strconv.Itoa(s.Number) + ": " + approx + from + "–" + to + " UTC, " + n
}

// LaneChoice is one kind of host series (subsecond.SeriesKinds) in the host
// page's lane picker.
type LaneChoice struct {
	Name   string
	Unit   string
	PerCPU bool
	Help   string
	// Shown is set when the URL's state names the kind (its default,
	// query.DefaultState, when the URL has none).
	Shown bool
}

// LaneChoices returns the host page's lane picker (laneChoices).
func (p HostPage) LaneChoices() []LaneChoice { return laneChoices(p.Data.Params) }

// laneChoices returns every kind of host series in the order the pages
// list them, those the URL's state (in params) names shown. A state the
// server would refuse shows none.
func laneChoices(params map[string]string) []LaneChoice {
	state, ok := params["state"]
	if !ok || state == "" {
		state = query.DefaultState
	}
	shown, _ := query.Page{State: state}.StateKinds()
	out := make([]LaneChoice, 0, len(subsecond.SeriesKinds))
	for _, k := range subsecond.SeriesKinds {
		out = append(out, LaneChoice{Name: k.Name, Unit: k.Unit, PerCPU: k.PerCPU, Help: k.Help, Shown: slices.Contains(shown, k.Name)})
	}
	return out
}
