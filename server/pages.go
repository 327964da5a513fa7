package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/web"
)

// layout returns the shared part of a page's view model.
func (s *Server) layout(title string, data web.ViewData, r *http.Request) web.Layout {
	if data.Params == nil {
		data.Params = flatten(r.URL.Query())
	}
	data.ReadOnly = s.readOnly
	data.TokenRequired = s.token != ""
	tz := r.URL.Query().Get("tz")
	if tz != "local" && tz != "offset" {
		tz = "utc"
	}
	return web.Layout{
		Title:     title,
		Data:      data,
		CSSURL:    s.assets.url("app.css"),
		ScriptURL: s.assets.url("app.js"),
		// Pages that show times of day offer the Times toggle; a capture's
		// views offer seconds from its start too.
		Clock:   data.Profile != nil && data.Profile.Wall != nil || data.Page == "host" || data.Page == "hosts",
		Offsets: data.Profile != nil,
		TZ:      tz,
	}
}

// render writes component c as an HTML page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if err := c.Render(r.Context(), w); err != nil {
		s.log.Debug("render page", "path", r.URL.Path, "err", err)
	}
}

// index handles GET /?per_page=&cursor=: a page of the profiles, newest
// first, with a link to the next, and the upload form.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	list, next, err := s.listPage(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, web.Index(web.IndexPage{
		Layout:        s.layout("Profiles", web.ViewData{Page: "index"}, r),
		Profiles:      list,
		Next:          nextPage(r, next),
		First:         r.URL.Query().Get("cursor") != "",
		ReadOnly:      s.readOnly,
		TokenRequired: s.token != "",
		UploadURL:     s.baseURL(r) + string(link.ProfilesAPI),
	}))
}

// pageProfile returns the profile of a page request and its parsed query.
func (s *Server) pageProfile(ctx context.Context, r *http.Request) (*subsecond.Profile, *Query, error) {
	p, err := s.store.Profile(ctx, chi.URLParam(r, "id"))
	if err != nil {
		return nil, nil, err
	}
	q, err := parseQuery(p, r.URL.Query())
	if err != nil {
		return nil, nil, err
	}
	return p, q, nil
}

func viewData(page string, p *subsecond.Profile, r *http.Request) web.ViewData {
	return web.ViewData{
		Page:    page,
		Profile: web.Summarize(p),
		Params:  flatten(r.URL.Query()),
		API:     link.ProfileAPI.Path(p.ID),
	}
}

// The profile page lists the first pageHotspots hot spots. For a capture
// of up to pageHotspotSamples samples, whose list takes a few milliseconds,
// it waits at most pageHotspotWait for them. For a larger one it lists them
// only when they were computed before: finding them takes a pass over the
// capture (about 50 ms for the bundled 564,480 samples, twice that just
// after an upload), which would hold back the heatmaps that the page's
// script draws. Otherwise the page says they are being computed and its
// script fetches them from the API, beside the heatmaps.
const (
	pageHotspots       = 20
	pageHotspotWait    = time.Second
	pageHotspotSamples = 100_000
)

// profilePage handles GET /p/{id}?<filters>&rows=&col=&bucket=&scale=: the
// metadata, heatmaps and hot spots of a profile.
func (s *Server) profilePage(w http.ResponseWriter, r *http.Request) {
	p, q, err := s.pageProfile(r.Context(), r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if offsetsRedirect(w, r, q) {
		return
	}
	v := r.URL.Query()
	vd := viewData("profile", p, r)
	note := canonical(v, &vd, q.Clamps(p.T0(), p.T0()))
	page := web.ProfilePage{
		Layout:  s.layout(displayName(p), vd, r),
		Profile: *p,
		Notice:  note,
		Linked:  linkedRange(p, q, v),
		Filters: filterFields(p, v),
	}
	var hs []subsecond.Hotspot
	page.HotspotsWhat = web.HotspotsWhat(q.Measure, q.Threshold, q.Min)
	if q.Range != query.WholeOf(p) {
		// A page opened on a range (from a host's night) lists its hot spots.
		page.HotspotsWhat += web.HotspotsWhere(p.T0(), q.Range.Start, q.Range.End)
	}
	wait := pageHotspotWait
	if p.Samples > s.pageHotSamples {
		wait = -1
	}
	rep, err := s.hotspotList(r, q, wait)
	if err == nil {
		hs = rep.Spots
		page.HotspotsNote = rep.Note
	}
	switch {
	case err == errPending:
		page.HotspotsPending = true
	case err != nil:
		code, msg := status(err)
		if code == http.StatusInternalServerError {
			s.log.Error("hot spots", "profile", p.ID, "err", err)
		}
		page.HotspotsErr = "Hot spots unavailable: " + msg
	}
	if len(hs) > pageHotspots {
		all := q.ValuesFor(query.ViewHotspots)
		all.Set("limit", strconv.Itoa(len(hs)))
		page.HotspotsAPI = link.HotspotsAPI.With(all, p.ID)
		page.HotspotsMore = len(hs) - pageHotspots
		hs = hs[:pageHotspots]
	}
	t0 := p.T0()
	for _, h := range hs {
		item := web.Hotspot{
			Href:     h.URL,
			Range:    query.DisplayRange(h.Start-t0, h.End-t0),
			Comm:     h.Comm,
			Function: h.Function,
			Wall:     web.WallOf(p, h.Start, h.End),
		}
		if h.CPU != subsecond.Unknown {
			item.CPU = strconv.Itoa(int(h.CPU))
		}
		if h.Busy > 0 {
			item.Busy = web.Percent(h.Busy)
			item.System = web.Percent(h.System)
		}
		if h.CommShare > 0 {
			item.Share = web.Percent(h.CommShare)
		}
		page.Hotspots = append(page.Hotspots, item)
	}
	if len(hs) == 0 && page.HotspotsErr == "" && !page.HotspotsPending {
		page.HotspotsErr = "No CPU stayed " + page.HotspotsWhat + "."
	}
	s.render(w, r, web.Profile(page))
}

// linkedRange returns the range a profile page's link gives (start, end;
// a host's night links to a capture's page so), with the links to its
// flame graph and stack chart; nil when the link gives none.
func linkedRange(p *subsecond.Profile, q *Query, v url.Values) *web.LinkedRange {
	if !q.Start.Set && !q.End.Set {
		return nil
	}
	g := pick(v, "start", "end")
	return &web.LinkedRange{
		Range:      rangeLabel(q.Range, p.T0()),
		Filters:    strings.Join(web.Filters(q.Filter), " · "),
		Wall:       web.WallOf(p, q.Range.Start, q.Range.End),
		FlameHref:  link.FlamePage.With(g, p.ID),
		StacksHref: link.StacksPage.With(g, p.ID),
	}
}

// flamePage handles GET /p/{id}/flame?start=&end=&<filters>&search=&zoom=&view=:
// the flame graph of a range.
func (s *Server) flamePage(w http.ResponseWriter, r *http.Request) {
	s.graphPage(w, r, "flame")
}

// diffPage handles GET /p/{id}/diff?start2=&end2=&start=&end=&base=&<filters>:
// the differential flame graph from [start2, end2) to [start, end), the base
// range taken from profile base when given.
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	s.graphPage(w, r, "diff")
}

// stacksPage handles GET /p/{id}/stacks?start=&end=&<filters>&lanes=&search=&zoom=:
// the stack chart of a range (one lane per CPU, or per thread with
// lanes=thread) above its flame graph.
func (s *Server) stacksPage(w http.ResponseWriter, r *http.Request) {
	s.graphPage(w, r, "stacks")
}

// graphPage renders the page of kind "flame", "diff" or "stacks".
func (s *Server) graphPage(w http.ResponseWriter, r *http.Request, kind string) {
	isDiff := kind == "diff"
	p, q, err := s.pageProfile(r.Context(), r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	v := r.URL.Query()
	short2 := shortRange(q.Range2, p.T0())
	bp := p // the base profile
	if isDiff {
		if err := needBase(v); err != nil {
			s.error(w, r, err)
			return
		}
		if q.Base != "" {
			if bp, err = s.baseProfile(r.Context(), q, v); err != nil {
				s.error(w, r, err)
				return
			}
			short2 = displayName(bp) + " " + shortRange(q.Range2, bp.T0())
		}
	}
	if offsetsRedirect(w, r, q) {
		return
	}
	vd := viewData(kind, p, r)
	note := canonical(v, &vd, q.Clamps(p.T0(), bp.T0()))
	api := link.FlameAPI.Path(p.ID)
	if isDiff {
		api = link.DiffAPI.Path(p.ID)
	}
	export := func(format string) string {
		e := engineParams(v)
		e.Set("format", format)
		return api + "?" + e.Encode()
	}
	t0 := p.T0()
	filters := strings.Join(web.Filters(q.Filter), " · ")
	title := displayName(p) + " · " + map[string]string{"flame": "flame", "stacks": "stack chart"}[kind] + " " + shortRange(q.Range, t0)
	if isDiff {
		title = displayName(p) + " · diff " + short2 + " → " + shortRange(q.Range, t0)
	}
	if filters != "" {
		title += " · " + filters
	}
	layout := s.layout(title, vd, r)
	// The head asks for the JSON the script draws, so that it is on its way
	// while the script loads.
	layout.Preload = []string{graphJSON(api, v)}
	if kind == "stacks" {
		layout.Preload = append(layout.Preload, samplesJSON(link.SamplesAPI.Path(p.ID), v))
	}
	page := web.FlamePage{
		Layout:  layout,
		Profile: *p,
		Diff:    isDiff,
		Stacks:  kind == "stacks",
		Range:   rangeLabel(q.Range, t0),
		Wall:    web.WallOf(p, q.Range.Start, q.Range.End),
		Base:    diffSide(bp, q.Range2),
		Target:  diffSide(p, q.Range),
		Filters: filters,
		Back:    link.Profile(p.ID, profileParams(v)),
		Notice:  note,
		Search:  v.Get("search"),
	}
	graphLinks(&page, v, kind, export, link.StacksPage, link.FlamePage, p.ID)
	s.render(w, r, web.Flame(page))
}

// graphLinks fills the links of a graph page of kind "flame", "diff" or
// "stacks" with query v: its exports (export gives a format's URL), the
// view parameters its search form keeps, and the stack chart and flame
// graph of the same view (stacks and flame, filled with args), which link
// each other.
func graphLinks(page *web.FlamePage, v url.Values, kind string, export func(format string) string, stacks, flameRoute link.Route, args ...string) {
	for _, f := range flame.Formats() {
		if f.Title != "" {
			page.Exports = append(page.Exports, web.Export{Name: f.Name, Label: f.Title, Href: export(f.Name), Download: f.Attachment})
		}
	}
	for _, k := range sortedKeys(v) {
		if k != "search" {
			page.Hidden = append(page.Hidden, web.Option{Value: k, Label: v.Get(k)})
		}
	}
	if kind == "diff" {
		return
	}
	other := url.Values{}
	for k, vs := range v {
		if k != "lanes" || kind == "flame" {
			other[k] = vs
		}
	}
	page.StacksURL = stacks.With(other, args...)
	page.FlameURL = flameRoute.With(other, args...)
}

// canonical writes the bounds that Resolve clamped to their capture
// (clamps) into v, the page's query, and into its view data vd, whose
// script writes them into the page's URL, so that the page's links, its
// exports and its URL say what it shows. It returns the notice saying what
// changed ("start -5 s is before the capture; showing from 0 s"), "" when
// nothing did.
func canonical(v url.Values, vd *web.ViewData, clamps []query.Clamp) string {
	if len(clamps) == 0 {
		return ""
	}
	vd.Canonical = map[string]string{}
	var notes []string
	for _, c := range clamps {
		s := query.FormatSeconds(c.Got)
		v.Set(c.Name, s)
		vd.Canonical[c.Name] = s
		notes = append(notes, c.Notice())
	}
	vd.Params = flatten(v)
	return strings.Join(notes, "; ") + "."
}

// offsetsRedirect sends a page asked for with a range on the wall clock
// (from, to; a differential graph's base range from2, to2) to the same page
// with the range as offsets from T0 (start, end; start2, end2 from the base
// profile's), which its script, its links and its exports read; q is the
// request's query, resolved. It reports whether it did.
func offsetsRedirect(w http.ResponseWriter, r *http.Request, q *Query) bool {
	v := r.URL.Query()
	moved := false
	for _, b := range []struct {
		wall, offset string
		bound        query.Bound
	}{{"from", "start", q.Start}, {"to", "end", q.End}, {"from2", "start2", q.Start2}, {"to2", "end2", q.End2}} {
		if !v.Has(b.wall) {
			continue
		}
		v.Del(b.wall)
		if b.bound.Set {
			v.Set(b.offset, query.FormatSeconds(b.bound.NS))
		}
		moved = true
	}
	if moved {
		http.Redirect(w, r, r.URL.Path+link.Query(v), http.StatusFound)
	}
	return moved
}

// diffSide describes range rg of p as a side of a differential graph.
func diffSide(p *subsecond.Profile, rg subsecond.Range) web.DiffSide {
	s := web.DiffSide{
		Host: p.Host, HostHref: link.HostPage.Path(p.Host),
		Name: displayName(p), Href: link.ProfilePage.Path(p.ID),
		Range: rangeLabel(rg, p.T0()), Wall: web.WallOf(p, rg.Start, rg.End),
	}
	if s.Wall != nil {
		s.Wall.Date = true // the sides may be days apart
	}
	return s
}

// rangeLabel describes rg for reading, as offsets from t0 the way
// query.DisplayRange writes them: "4.5–7.25 s (2.75 s)".
func rangeLabel(rg subsecond.Range, t0 int64) string {
	if rg == subsecond.UntimedRange {
		return "all samples (the capture has no timestamps)"
	}
	return query.DisplayRange(rg.Start-t0, rg.End-t0)
}

// shortRange is rangeLabel for titles: the same range written the same
// way, "(no timestamps)" for a capture without them.
func shortRange(rg subsecond.Range, t0 int64) string {
	if rg == subsecond.UntimedRange {
		return "(no timestamps)"
	}
	return rangeLabel(rg, t0)
}

func displayName(p *subsecond.Profile) string {
	if p.Name != "" {
		return p.Name
	}
	if p.FileName != "" {
		return p.FileName
	}
	return p.ID
}

// engineParams returns the parameters of v that the engine reads: filters,
// ranges and heatmap shape, without view-only state such as search or zoom.
func engineParams(v url.Values) url.Values {
	return pick(v, "start", "end", "start2", "end2", "base")
}

// graphJSON returns the URL of the JSON graph that a flame or differential
// page with query v draws: api with v's ranges and filters and format=json.
// The script builds the same URL (web/src/state.ts's flameAPI) byte for
// byte, keys in order and escaped as url.Values.Encode does, so that its
// fetch takes the answer to the page's preload.
func graphJSON(api string, v url.Values) string {
	var names []string
	for _, p := range query.ParamsIn(query.GroupRange) {
		names = append(names, p.Name)
	}
	q := pick(v, names...)
	q.Set("format", "json")
	return api + "?" + q.Encode()
}

// samplesJSON returns the URL of the samples that a stack-chart page with
// query v draws: api with v's range, filters and max_samples, as the
// script's samplesAPI (web/src/flamepage.ts) builds it.
func samplesJSON(api string, v url.Values) string {
	return api + link.Query(pick(v, "start", "end", "max_samples"))
}

// profileParams returns the parameters of v that the profile page reads:
// filters and heatmap shape.
func profileParams(v url.Values) url.Values {
	return pick(v, "rows", "col", "bucket", "scale", "measure")
}

// pick returns the filter parameters of v and those named.
func pick(v url.Values, names ...string) url.Values {
	for _, p := range query.FilterParams() {
		names = append(names, p.Name)
	}
	out := url.Values{}
	for _, n := range names {
		if s := v.Get(n); s != "" {
			out.Set(n, s)
		}
	}
	return out
}

// filterFields returns the filter form's inputs, filled from v.
func filterFields(p *subsecond.Profile, v url.Values) []web.Field {
	fields := []web.Field{}
	for _, fp := range query.FilterParams() {
		f := web.Field{Name: fp.Name, Label: fp.Name, Value: v.Get(fp.Name), Hint: fp.Usage()}
		switch fp.Name {
		case "only":
			f.Options = []web.Option{{Value: "", Label: "all frames"}, {Value: "kernel", Label: "kernel"}, {Value: "user", Label: "user"}}
		case "event":
			// Every event with its count, in order of appearance; the
			// default one (Profile.DefaultEvent) is the empty value.
			for i, e := range p.Events {
				o := web.Option{Value: e.Name, Label: fmt.Sprintf("%s (%d samples)", e.Name, e.Samples)}
				if i == p.DefaultEvent() {
					o = web.Option{Value: "", Label: fmt.Sprintf("%s (%d samples, default)", e.Name, e.Samples)}
				}
				f.Options = append(f.Options, o)
			}
			if len(p.Events) < 2 {
				f.Options = nil
			}
		}
		fields = append(fields, f)
	}
	for _, name := range []string{"rows", "col", "bucket", "scale"} {
		fp, _ := query.LookupParam(name)
		f := web.Field{Name: name, Label: name, Value: v.Get(name), Hint: fp.Usage()}
		switch name {
		case "col":
			f.Label = "column s"
		case "bucket":
			f.Label = "bucket s"
		case "scale":
			f.Options = []web.Option{{Value: "", Label: "linear"}, {Value: "log", Label: "enhanced (log)"}}
		}
		fields = append(fields, f)
	}
	return fields
}
