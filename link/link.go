// Package link is the one place that spells Subsecond's URLs: every page
// and API route as a pattern (Route, with {name} segments as chi writes
// them), filled from a profile id or a host name and a query. The server
// registers its routes from these patterns; the server, the CLI, templ
// components and the night's hot spots build their links with them; and
// web/src/links.ts, which the front end builds its links with, is
// generated from the same table (go test ./link -run TestLinksTS -update).
//
// A segment is escaped with url.PathEscape, and the server reads it back
// unescaped, so any host name that can be stored can be linked.
//
//	link.Flame(id, v)                   // "/p/ID/flame?cpu=39&end=62&start=56"
//	link.HostPage.Path("web-1")         // "/hosts/web-1"
//	link.ProfileAPI.With(v, id)         // "/api/profiles/ID?…"
package link

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Route is a URL path pattern: literal text and {name} segments, each
// filled by one argument of Path or With, in order.
type Route string

// Pages.
const (
	Index       Route = "/"
	ProfilePage Route = "/p/{id}"
	FlamePage   Route = "/p/{id}/flame"
	DiffPage    Route = "/p/{id}/diff"
	StacksPage  Route = "/p/{id}/stacks"
	HostsPage   Route = "/hosts"
	HostPage    Route = "/hosts/{host}"
	Static      Route = "/static/*"

	// A host's wall-clock range across its captures (from, to).
	HostFlamePage  Route = "/hosts/{host}/flame"
	HostDiffPage   Route = "/hosts/{host}/diff"
	HostStacksPage Route = "/hosts/{host}/stacks"

	// What precedes a host's markers (match, before), and the differential
	// flame graph of the windows before them against the control windows.
	ExplainPage     Route = "/hosts/{host}/explain"
	ExplainDiffPage Route = "/hosts/{host}/explain/diff"

	// The fleet: hosts × time, the search and the contrasts.
	FleetPage Route = "/fleet"
)

// APIPrefix begins the path of every API route and of no page.
const APIPrefix = "/api/"

// The JSON API.
const (
	ProfilesAPI    Route = "/api/profiles"
	ProfileAPI     Route = "/api/profiles/{id}"
	HeatmapAPI     Route = "/api/profiles/{id}/heatmap"
	CoresAPI       Route = "/api/profiles/{id}/cpus"
	HotspotsAPI    Route = "/api/profiles/{id}/hotspots"
	FlameAPI       Route = "/api/profiles/{id}/flamegraph"
	DiffAPI        Route = "/api/profiles/{id}/diff"
	SamplesAPI     Route = "/api/profiles/{id}/samples"
	HostsAPI       Route = "/api/hosts"
	HostAPI        Route = "/api/hosts/{host}"
	CapturesAPI    Route = "/api/hosts/{host}/captures"
	TimelineAPI    Route = "/api/hosts/{host}/timeline"
	HostHotspotAPI Route = "/api/hosts/{host}/hotspots"
	CommsAPI       Route = "/api/hosts/{host}/comms"
	MarkersAPI     Route = "/api/hosts/{host}/markers"
	SessionsAPI    Route = "/api/hosts/{host}/sessions"
	HostFlameAPI   Route = "/api/hosts/{host}/flamegraph"
	HostDiffAPI    Route = "/api/hosts/{host}/diff"
	HostSamplesAPI Route = "/api/hosts/{host}/samples"
	ExplainAPI     Route = "/api/hosts/{host}/explain"
	ExplainDiffAPI Route = "/api/hosts/{host}/explain/diff"
	SeriesAPI      Route = "/api/hosts/{host}/series"
	MovesAPI       Route = "/api/hosts/{host}/moves"
	LabelsAPI      Route = "/api/hosts/{host}/labels"
	FleetAPI       Route = "/api/fleet"
	FleetSearchAPI Route = "/api/fleet/search"
	FleetGroupsAPI Route = "/api/fleet/groups"
	FleetUptimeAPI Route = "/api/fleet/uptime"
)

// Health checks, for load balancers and service managers: Healthz answers
// 200 while the process serves, Readyz 200 while its database answers and
// has this build's schema, 503 with the reason otherwise.
const (
	Healthz Route = "/healthz"
	Readyz  Route = "/readyz"
)

// Routes lists every route with the name the generated TypeScript gives
// it, in the order above.
var Routes = []struct {
	Name  string
	Route Route
}{
	{"index", Index}, {"profilePage", ProfilePage}, {"flamePage", FlamePage}, {"diffPage", DiffPage},
	{"stacksPage", StacksPage}, {"hostsPage", HostsPage}, {"hostPage", HostPage},
	{"hostFlamePage", HostFlamePage}, {"hostDiffPage", HostDiffPage}, {"hostStacksPage", HostStacksPage},
	{"explainPage", ExplainPage}, {"explainDiffPage", ExplainDiffPage}, {"fleetPage", FleetPage},
	{"profilesAPI", ProfilesAPI}, {"profileAPI", ProfileAPI}, {"heatmapAPI", HeatmapAPI},
	{"coresAPI", CoresAPI}, {"hotspotsAPI", HotspotsAPI}, {"flameAPI", FlameAPI}, {"diffAPI", DiffAPI},
	{"samplesAPI", SamplesAPI}, {"hostsAPI", HostsAPI}, {"hostAPI", HostAPI}, {"capturesAPI", CapturesAPI},
	{"timelineAPI", TimelineAPI}, {"hostHotspotsAPI", HostHotspotAPI}, {"commsAPI", CommsAPI},
	{"markersAPI", MarkersAPI}, {"sessionsAPI", SessionsAPI}, {"hostFlameAPI", HostFlameAPI},
	{"hostDiffAPI", HostDiffAPI}, {"hostSamplesAPI", HostSamplesAPI}, {"explainAPI", ExplainAPI},
	{"explainDiffAPI", ExplainDiffAPI}, {"seriesAPI", SeriesAPI}, {"movesAPI", MovesAPI},
	{"labelsAPI", LabelsAPI}, {"fleetAPI", FleetAPI}, {"fleetSearchAPI", FleetSearchAPI},
	{"fleetGroupsAPI", FleetGroupsAPI}, {"fleetUptimeAPI", FleetUptimeAPI},
	{"healthz", Healthz}, {"readyz", Readyz},
}

// Path fills r's {name} segments with args, in order, each escaped with
// url.PathEscape. It panics when the number of args differs from the
// number of segments: a programming error, not a user's.
func (r Route) Path(args ...string) string {
	var b strings.Builder
	s := string(r)
	n := 0
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		b.WriteString(s[:i])
		if n >= len(args) {
			panic("link: " + string(r) + " needs more than " + strconv.Itoa(len(args)) + " arguments")
		}
		b.WriteString(url.PathEscape(args[n]))
		n++
		s = s[i+j+1:]
	}
	if n != len(args) {
		panic("link: " + string(r) + " takes " + strconv.Itoa(n) + " arguments, not " + strconv.Itoa(len(args)))
	}
	return b.String()
}

// With returns r's path (see Path) followed by the query v, or the path
// alone when v is empty.
func (r Route) With(v url.Values, args ...string) string { return r.Path(args...) + Query(v) }

// Query returns v encoded as a URL's query, "?" included, or "" when v is
// empty.
func Query(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// Profile returns the path of stored profile id's page with the query v.
func Profile(id string, v url.Values) string { return ProfilePage.With(v, id) }

// Flame returns the path of stored profile id's flame graph page with the
// query v.
func Flame(id string, v url.Values) string { return FlamePage.With(v, id) }

// Host returns the path of host's night page with the query v.
func Host(host string, v url.Values) string { return HostPage.With(v, host) }

// HostAt returns the path of host's night page showing the wall-clock
// range [from, to) (Unix ns): where the fleet's map opens a host.
func HostAt(host string, from, to int64) string {
	return Host(host, url.Values{"from": {query.FormatWallTime(from)}, "to": {query.FormatWallTime(to)}})
}

// FleetSearch returns the path of the fleet page searching for the one
// name of kind (a function, a command or a call edge "caller;callee"),
// exactly, with the labels and group of v.
func FleetSearch(kind subsecond.NameKind, name string, v url.Values) string {
	out := url.Values{}
	for _, k := range []string{"label", "group", "from", "to"} {
		if v[k] != nil {
			out[k] = v[k]
		}
	}
	if kind == subsecond.NameComm {
		out.Set("comm", name)
	} else {
		out.Set(kind.String(), "^"+regexp.QuoteMeta(name)+"$")
	}
	return FleetPage.With(out)
}

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
