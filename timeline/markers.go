package timeline

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
)

// Before is how far back a marker's window reaches: "the 10 s before it".
// By default (query.DefaultNear) a hot spot is marked with a marker when
// it ends within the same reach, so that its window shows it.
const Before = 10 * time.Second

// MarkerView is a marker with its window: Before, the Before just before
// it as far as the host's recordings hold it, across their captures, and
// URL, the path of the host's flame graph page of that range; both are
// absent when no capture holds any of it.
type MarkerView struct {
	subsecond.Marker
	Before *Period `json:"before,omitempty"`
	URL    string  `json:"url,omitempty"`
}

// Period is a wall-clock range of a host's night, [From, To) in Unix ns,
// that may span captures; Missing ns of it were not recorded (the time
// between recordings, see Recording).
type Period struct {
	From    int64 `json:"from_ns"`
	To      int64 `json:"to_ns"`
	Missing int64 `json:"missing_ns"`
}

// MarkerList is a host's markers, in time order, as the API's
// /api/hosts/{host}/markers and `subsecond markers list --format json`
// write them.
type MarkerList struct {
	Host    string       `json:"host"`
	Markers []MarkerView `json:"markers"`
}

// Markers returns host's markers ms with their windows among its
// recordings. A host with markers but no capture is no error.
func Markers(ctx context.Context, src Source, host string, ms []subsecond.Marker) (*MarkerList, error) {
	caps, _, err := HostCaptures(ctx, src, host)
	if err != nil && len(ms) == 0 {
		return nil, err
	}
	rs := Recordings(caps)
	out := &MarkerList{Host: host, Markers: make([]MarkerView, 0, len(ms))}
	for _, m := range ms {
		v := MarkerView{Marker: m}
		if p, ok := Recorded(rs, m.Time-int64(Before), m.Time); ok {
			v.Before = &p
			v.URL = HostFlameURL(host, p.From, p.To, -1)
		}
		out.Markers = append(out.Markers, v)
	}
	return out, nil
}

// Recorded returns the part of the wall-clock range [from, to) from the
// first to the last instant some recording of rs holds, with how much of
// it is missing, and false when none holds any of it.
func Recorded(rs []Recording, from, to int64) (Period, bool) {
	lo, hi := to, from
	for i := range rs {
		if r := &rs[i]; r.End > from && r.Start < to {
			lo, hi = min(lo, max(from, r.Start)), max(hi, min(to, r.End))
		}
	}
	if hi <= lo {
		return Period{}, false
	}
	return Period{From: lo, To: hi, Missing: Missing(rs, lo, hi)}, true
}

// HostFlameURL returns the path of host's flame graph page of the
// wall-clock range [from, to), on one CPU when cpu ≥ 0.
func HostFlameURL(host string, from, to int64, cpu int32) string {
	return hostRangeURL(link.HostFlamePage, host, cpu, "from", from, "to", to)
}

// HostDiffURL returns the path of host's differential flame graph page
// from the wall-clock range [from2, to2) to [from, to), on one CPU when
// cpu ≥ 0.
func HostDiffURL(host string, from, to, from2, to2 int64, cpu int32) string {
	return hostRangeURL(link.HostDiffPage, host, cpu, "from", from, "to", to, "from2", from2, "to2", to2)
}

// hostRangeURL returns the path of host's page r with the wall-clock
// times given as name, time pairs, on one CPU when cpu ≥ 0.
func hostRangeURL(r link.Route, host string, cpu int32, times ...any) string {
	v := url.Values{}
	for i := 0; i < len(times); i += 2 {
		v.Set(times[i].(string), query.FormatWallTime(times[i+1].(int64)))
	}
	if cpu >= 0 {
		v.Set("cpu", strconv.Itoa(int(cpu)))
	}
	return r.With(v, host)
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
// /api/hosts and `subsecond hosts --format json` write it: a page of
// them in the API (see HostPage), all of them from the CLI.
type HostList struct {
	Hosts []Host `json:"hosts"`
	// NextCursor is the cursor of the next page, the name of this page's
	// last host, and Next that page's URL; both absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	Next       string `json:"next,omitempty"`
}
