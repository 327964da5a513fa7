package web

import (
	"time"

	"github.com/subsecond/subsecond"
)

// HostRow is one host of the hosts page, ready to show.
type HostRow struct {
	Host     string
	Href     string
	Captures int
	Samples  int64
	From, To string // wall-clock span in UTC, "≈" first when approximate; "" when unknown
	Without  int    // captures without wall clock
}

// HostsPage lists the hosts of the stored captures.
type HostsPage struct {
	Layout
	Hosts []HostRow
}

// HostPage shows one host's night: the containers its script fills from
// the host API (ViewData.API), and the span and capture count as text.
type HostPage struct {
	Layout
	Host     string
	Captures int
	From, To string
	Without  int
}

// WallSpan describes when p's samples were taken, in UTC, and how that is
// known; "≈" marks an estimate.
func WallSpan(p subsecond.Profile) string {
	w := p.Wall
	if !w.Known() {
		return "unknown (record with perf record -k CLOCK_REALTIME, or keep perf script's --header)"
	}
	at := func(t int64) string { return time.Unix(0, w.Wall(t)).UTC().Format("2006-01-02 15:04:05.000") }
	s := at(p.Start) + " – " + at(p.End) + " UTC (" + w.Source + ")"
	if w.Approximate {
		s = "≈ " + s + ", approximate"
	}
	return s
}
