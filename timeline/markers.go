package timeline

import (
	"context"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
)

// Before is how far back a marker's window reaches: "the 10 s before it".
const Before = 10 * time.Second

// MarkerView is a marker with its window, the Before just before it in the
// capture that holds most of them, and URL, the path of that capture's
// page zoomed to the window; both are absent when no capture holds any of
// it.
type MarkerView struct {
	subsecond.Marker
	Before *Window `json:"before,omitempty"`
	URL    string  `json:"url,omitempty"`
}

// MarkerList is a host's markers, in time order, as the API's
// /api/hosts/{host}/markers and `subsecond markers list --format json`
// write them.
type MarkerList struct {
	Host    string       `json:"host"`
	Markers []MarkerView `json:"markers"`
}

// Markers returns host's markers ms with their windows among its
// captures. A host with markers but no capture is no error.
func Markers(ctx context.Context, src Source, host string, ms []subsecond.Marker) (*MarkerList, error) {
	caps, _, err := HostCaptures(ctx, src, host)
	if err != nil && len(ms) == 0 {
		return nil, err
	}
	out := &MarkerList{Host: host, Markers: make([]MarkerView, 0, len(ms))}
	for _, m := range ms {
		v := MarkerView{Marker: m}
		if win, ok := Locate(caps, m.Time-int64(Before), m.Time); ok {
			v.Before = &win
			v.URL = link.ProfilePage.Path(win.Capture) + "?start=" + query.FormatSeconds(win.Start) + "&end=" + query.FormatSeconds(win.End)
		}
		out.Markers = append(out.Markers, v)
	}
	return out, nil
}

// EndOfTime is a wall-clock time, in Unix ns, after every marker: the
// end of the range that reads all of a host's markers.
const EndOfTime int64 = 1 << 62

// MarkerRange returns the range of markers q asks for with from and to:
// [from, to) in wall-clock Unix ns, all time by default.
func MarkerRange(q *query.Query) (from, to int64) {
	to = EndOfTime
	if q.To.Set {
		to = q.To.NS
	}
	return q.From.NS, to
}

// HostList is the hosts of the stored captures, by name, as the API's
// /api/hosts and `subsecond hosts --format json` write it.
type HostList struct {
	Hosts []Host `json:"hosts"`
}
