package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// DefaultMaxRangeSamples bounds the samples of a host's range across its
// captures, counted from their summaries before any is loaded: as many as
// one capture may hold at import (store.DefaultMaxSamples).
const DefaultMaxRangeSamples = 50_000_000

// hostRange is a request for a view of a host's range: the selections of
// the range and, for a differential graph, of its base, and the query.
type hostRange struct {
	host         string
	q            *Query
	target, base *timeline.Selection
}

// selectHostRange parses a request for a host's range and bounds its cost
// from the captures' summaries, before any capture is loaded.
func (s *Server) selectHostRange(r *http.Request, diff bool) (*hostRange, error) {
	host, q, err := hostQuery(r)
	if err != nil {
		return nil, err
	}
	target, base, err := timeline.SelectQuery(r.Context(), s.source(), host, q, diff)
	if err != nil {
		return nil, err
	}
	for _, sel := range []*timeline.Selection{target, base} {
		if sel != nil && sel.Samples > s.maxRangeSamples {
			return nil, errorf(subsecond.ErrTooLarge, "the range %s holds about %d samples, more than this server's limit of %d for a host's range; choose a shorter range (from, to) or fewer CPUs (cpu)",
				wallLabel(sel.From, sel.To), sel.Samples, s.maxRangeSamples)
		}
	}
	return &hostRange{host: host, q: q, target: target, base: base}, nil
}

// loadHostRange selects the range a request names (selectHostRange) and
// joins its captures (and its base's) in a heavy slot, which the caller
// gives back with release.
func (s *Server) loadHostRange(r *http.Request, diff bool) (hr *hostRange, c, bc *subsecond.Capture, release func(), err error) {
	if hr, err = s.selectHostRange(r, diff); err != nil {
		return nil, nil, nil, nil, err
	}
	if release, err = s.heavy.enterLong(r.Context()); err != nil {
		return nil, nil, nil, nil, err
	}
	if c, err = hr.target.Load(r.Context(), s.source(), s.ranges); err == nil && hr.base != nil {
		bc, err = hr.base.Load(r.Context(), s.source(), s.ranges)
	}
	if err != nil {
		release()
		return nil, nil, nil, nil, err
	}
	return hr, c, bc, release, nil
}

// hostFlamegraph handles GET /api/hosts/{host}/flamegraph?from=&to=&<filters>&format=:
// the flame graph of a host's wall-clock range across its captures, in
// every format of a capture's; "unrecorded_ns" says how much of the range
// no capture recorded. A request that names a base (from2, to2) gets the
// differential graph.
func (s *Server) hostFlamegraph(w http.ResponseWriter, r *http.Request) {
	s.hostGraph(w, r, namesBase(r.URL.Query()))
}

// hostDiff handles GET /api/hosts/{host}/diff?from2=&to2=&from=&to=&<filters>&format=:
// the differential flame graph from the host's range [from2, to2) to
// [from, to), each across the captures that recorded it.
func (s *Server) hostDiff(w http.ResponseWriter, r *http.Request) {
	s.hostGraph(w, r, true)
}

func (s *Server) hostGraph(w http.ResponseWriter, r *http.Request, isDiff bool) {
	ft, err := flame.LookupFormat(r.URL.Query().Get("format"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	hr, c, bc, release, err := s.loadHostRange(r, isDiff)
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	var g Graph
	kind := "flame"
	if isDiff {
		kind = "diff"
		g, err = s.engine.Diff(c, bc, hr.q)
	} else {
		g, err = s.engine.Flame(c, hr.q)
	}
	if fg, ok := g.(*flame.Graph); ok && err == nil {
		fg.Unrecorded = hr.target.Unrecorded
		if hr.base != nil {
			fg.BaseUnrecorded = hr.base.Unrecorded
		}
	}
	name := fmt.Sprintf("%s-%s-%s-%s.%s", hr.host, kind, fileTime(hr.target.From), fileTime(hr.target.To), ft.Ext)
	s.writeGraph(w, r, g, err, ft, name)
}

// hostSamples handles GET /api/hosts/{host}/samples?from=&to=&<filters>&max_samples=:
// the stack chart's samples of a host's range across its captures, times
// on the wall clock after start_ns, as a capture's samples are.
func (s *Server) hostSamples(w http.ResponseWriter, r *http.Request) {
	hr, c, _, release, err := s.loadHostRange(r, false)
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	v, n, err := s.engine.Samples(c, hr.q, hr.q.MaxSamples)
	if err == nil && v == nil {
		err = query.Invalidf("to", "the range %s holds %d samples of these filters, more than the stack chart's limit of %d; choose a shorter range, fewer CPUs or max_samples up to %d",
			wallLabel(hr.target.From, hr.target.To), n, hr.q.MaxSamples, query.MaxMaxSamples)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if fs, ok := v.(*flame.Samples); ok {
		fs.Unrecorded = hr.target.Unrecorded
	}
	s.json(w, http.StatusOK, v)
}

// wallLabel writes a wall-clock range for an error message.
func wallLabel(from, to int64) string {
	return "[" + query.DisplayWallTime(from) + ", " + query.DisplayWallTime(to) + ")"
}

// fileTime writes a wall-clock time for a file name: 20261130T031200.5Z.
func fileTime(ns int64) string {
	// The .999999999 layout drops trailing zeros, and the point with them.
	return time.Unix(0, ns).UTC().Format("20060102T150405.999999999Z")
}

// hostFlamePage handles GET /hosts/{host}/flame?from=&to=&<filters>&search=&zoom=&view=:
// the flame graph of a host's wall-clock range across its captures.
func (s *Server) hostFlamePage(w http.ResponseWriter, r *http.Request) {
	s.hostGraphPage(w, r, "flame")
}

// hostDiffPage handles GET /hosts/{host}/diff?from2=&to2=&from=&to=&<filters>:
// the differential flame graph from the host's range [from2, to2) to
// [from, to), such as the 10 s before a marker against the same 10 s an
// hour earlier.
func (s *Server) hostDiffPage(w http.ResponseWriter, r *http.Request) {
	s.hostGraphPage(w, r, "diff")
}

// hostStacksPage handles GET /hosts/{host}/stacks?from=&to=&<filters>&lanes=:
// the stack chart of a host's range above its flame graph.
func (s *Server) hostStacksPage(w http.ResponseWriter, r *http.Request) {
	s.hostGraphPage(w, r, "stacks")
}

// hostGraphPage renders the page of kind "flame", "diff" or "stacks" of a
// host's range: a capture's page (web.Flame) headed by the host, the range
// and its captures, and what of the range was not recorded. Nothing is
// loaded but the captures' summaries; the script fetches the graph.
func (s *Server) hostGraphPage(w http.ResponseWriter, r *http.Request, kind string) {
	isDiff := kind == "diff"
	hr, err := s.selectHostRange(r, isDiff)
	if err != nil {
		s.error(w, r, err)
		return
	}
	v := r.URL.Query()
	host, sel := hr.host, hr.target
	api := link.HostFlameAPI.Path(host)
	if isDiff {
		api = link.HostDiffAPI.Path(host)
	}
	filters := strings.Join(web.Filters(hr.q.Filter), " · ")
	title := sel.Title() + " · " + map[string]string{"flame": "flame", "stacks": "stack chart", "diff": "diff"}[kind]
	if filters != "" {
		title += " · " + filters
	}
	data := web.ViewData{Page: kind, Host: host, Profile: selectionSummary(sel), Params: flatten(v), API: api}
	layout := s.layout(title, data, r)
	layout.Clock = true
	layout.Preload = []string{graphJSON(api, v)}
	if kind == "stacks" {
		layout.Preload = append(layout.Preload, link.HostSamplesAPI.Path(host)+link.Query(pick(v, "from", "to", "max_samples")))
	}
	night := url.Values{}
	night.Set("from", query.FormatSeconds(subsecond.FloorSecond(sel.From)))
	night.Set("to", query.FormatSeconds(sel.To))
	page := web.FlamePage{
		Layout:     layout,
		Profile:    subsecond.Profile{Name: sel.Title(), Host: host},
		Diff:       isDiff,
		Stacks:     kind == "stacks",
		Wall:       &web.WallRange{From: sel.From, To: sel.To, Approximate: approximate(sel), Date: true},
		Unrecorded: web.Unrecorded(sel.Unrecorded),
		Target:     selectionSide(sel),
		Filters:    filters,
		Back:       link.Host(host, night),
		BackLabel:  "← night",
		Search:     v.Get("search"),
	}
	if isDiff {
		page.Base = selectionSide(hr.base)
	}
	export := func(format string) string {
		e := pick(v, "from", "to", "from2", "to2")
		e.Set("format", format)
		return api + "?" + e.Encode()
	}
	graphLinks(&page, v, kind, export, link.HostStacksPage, link.HostFlamePage, host)
	s.render(w, r, web.Flame(page))
}

// selectionSummary is the profile summary a host range's page script
// reads: the joined capture's, whose times are on the wall clock.
func selectionSummary(sel *timeline.Selection) *web.ProfileSummary {
	ps := &web.ProfileSummary{Name: sel.Title(), T0: subsecond.FloorSecond(sel.From), Start: sel.From, End: sel.To - 1,
		Samples: sel.Samples, Events: []subsecond.EventCount{}}
	for _, c := range sel.Captures {
		ps.CPUs = max(ps.CPUs, c.CPUs)
		ps.FrequencyHz = max(ps.FrequencyHz, c.Hz)
	}
	ps.Wall = &subsecond.WallClock{Source: sel.Captures[0].Source, Approximate: approximate(sel)}
	return ps
}

func approximate(sel *timeline.Selection) bool {
	for _, c := range sel.Captures {
		if c.Approximate {
			return true
		}
	}
	return false
}

// selectionSide describes a host range as a side of a differential graph.
func selectionSide(sel *timeline.Selection) web.DiffSide {
	n := len(sel.Captures)
	name := fmt.Sprintf("%d captures", n)
	if n == 1 {
		name = "1 capture"
	}
	v := url.Values{}
	v.Set("from", query.FormatSeconds(subsecond.FloorSecond(sel.From)))
	v.Set("to", query.FormatSeconds(sel.To))
	side := web.DiffSide{Host: sel.Host, HostHref: link.HostPage.Path(sel.Host), Name: name, Href: link.Host(sel.Host, v),
		Range: query.DisplayDuration(sel.To - sel.From), Wall: &web.WallRange{From: sel.From, To: sel.To, Approximate: approximate(sel), Date: true}}
	if u := web.Unrecorded(sel.Unrecorded); u != "" {
		side.Range += " · " + u
	}
	return side
}
