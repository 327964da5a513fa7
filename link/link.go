// Package link builds the paths of Subsecond's pages from a query: the one
// place that spells a route's URL, so that the server, the CLI, templ
// components and the night's hot spots link alike. Path segments are
// escaped with url.PathEscape and queries encoded with url.Values.Encode.
//
//	link.Flame(id, q.ValuesFor(query.ViewFlame)) // "/p/ID/flame?cpu=39&end=62&start=56"
package link

import (
	"net/url"
	"strconv"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Hotspots sets each spot's URL to the flame graph page of stored profile
// id for its episode: its CPU and range, with the filters of f.
func Hotspots(r *subsecond.HotspotReport, id string, f query.Filter) {
	for i := range r.Spots {
		h := &r.Spots[i]
		v := f.Values()
		v.Set("start", query.FormatSeconds(h.Start-r.T0))
		v.Set("end", query.FormatSeconds(h.End-r.T0))
		if h.CPU != subsecond.Unknown {
			v.Set("cpu", strconv.Itoa(int(h.CPU)))
		}
		h.URL = Flame(id, v)
	}
}

// Flame returns the path of stored profile id's flame graph page with the
// query v.
func Flame(id string, v url.Values) string { return Page(id, "flame", v) }

// Profile returns the path of stored profile id's page with the query v.
func Profile(id string, v url.Values) string {
	return "/p/" + url.PathEscape(id) + Query(v)
}

// Page returns the path of stored profile id's page named page ("flame",
// "diff", "stacks") with the query v.
func Page(id, page string, v url.Values) string {
	return "/p/" + url.PathEscape(id) + "/" + page + Query(v)
}

// Query returns v encoded as a URL's query, "?" included, or "" when v is
// empty.
func Query(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
