package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/web"
)

// explainSource is what explain reads: the night's source and markers,
// and, where the server keeps them, the host's series.
type explainSource struct {
	nightSource
}

type explainSeriesSource struct {
	nightSource
	State
}

func (s *Server) explainSource() explain.Source {
	ns := nightSource{s.store, s.night}
	if s.state != nil {
		return explainSeriesSource{ns, s.state}
	}
	return explainSource{ns}
}

// report returns the explanation a request asks for, from the cache when
// it holds it, computed in a heavy slot for long analyses otherwise: the
// host's captures and markers are read, and the cache asked, before any
// slot is taken, and requests waiting for the same explanation take none.
func (s *Server) report(r *http.Request) (string, *Query, *explain.Report, error) {
	host, q, err := hostQuery(r)
	if err != nil {
		return "", nil, nil, err
	}
	opt, err := explain.OptionsOf(q)
	if err != nil {
		return host, q, nil, err
	}
	rep, _, err := s.explains.Explain(r.Context(), s.explainSource(), host, opt, s.heavy.enterLong)
	return host, q, rep, err
}

// hostExplain handles GET /api/hosts/{host}/explain?match=&before=&controls=&seed=&session=:
// what is unusual in the windows before the host's markers against
// control windows of the same sessions, ranked by Benjamini–Hochberg q
// (explain.Report; docs/explain.md).
func (s *Server) hostExplain(w http.ResponseWriter, r *http.Request) {
	_, _, rep, err := s.report(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, rep)
}

// explainParams are the parameters of an explanation, which its page's
// links keep.
var explainParams = []string{"match", "before", "controls", "seed", "session"}

// explainPage handles GET /hosts/{host}/explain?match=&before=&controls=&seed=&session=:
// the findings as sentences, each linking to its differential flame graph,
// with the strip of the markers it preceded, and the windows contrasted. A
// question with no answer (no matching marker) is said in the page, under
// the form that asked it.
func (s *Server) explainPage(w http.ResponseWriter, r *http.Request) {
	host, q, rep, err := s.report(r)
	if host == "" || q == nil || (err != nil && !errors.Is(err, subsecond.ErrEmptyRange)) {
		s.error(w, r, err)
		return
	}
	v := pick(r.URL.Query(), explainParams...)
	p := web.ExplainPage{Layout: s.layout(host+" · what precedes the markers", web.ViewData{Page: "explain", Host: host, Params: flatten(v)}, r),
		Host: host, Match: q.Match, Before: query.FormatSeconds(q.Before), Controls: strconv.Itoa(q.Controls),
		Seed: strconv.Itoa(q.Seed), Session: strconv.Itoa(q.Session), NightHref: link.HostPage.Path(host)}
	p.Layout.Clock = true
	if err != nil {
		_, p.Error = status(err)
		s.render(w, r, web.Explain(p))
		return
	}
	p.DiffHref = link.ExplainDiffPage.With(v, host)
	p.Summary = explainSummary(rep)
	p.Method = fmt.Sprintf("Windows are the unit: each feature's share of the host's samples in each window; p from %s of the windows' labels (one-sided: more before the markers), q by Benjamini–Hochberg across the %d features tested, so q < 0.05 means at most 5%% of such findings are expected to be chance. \"Stood out\" counts the windows before markers whose share is above the %dth percentile of the control windows' shares. Smallest possible p: %s.",
		permutationsText(rep), rep.Tested, rep.Percentile, web.FormatQ(rep.MinP))
	if !rep.Exact {
		p.Method += fmt.Sprintf(" A feature's relabelings stop at the %dth as extreme as observed, its p then %d over the relabelings drawn (a sequential p-value, as valid as the full test's).",
			explain.Exceedances, explain.Exceedances)
	}
	for i, f := range rep.Findings {
		row := web.ExplainRow{Rank: i + 1, What: f.Feature.String(), Kind: f.Feature.KindName(),
			Before: web.FormatValue(f.BeforeShare, f.Unit), Control: web.FormatValue(f.ControlShare, f.Unit), Ratio: web.FormatRatio(f.Ratio),
			StoodOut: fmt.Sprintf("%d of %d", f.StoodOut, f.Of), Q: web.FormatQ(f.Q), Significant: f.Q < 0.05}
		row.Sentence = fmt.Sprintf("%s %s in the %s before %d of %d marker windows, %s elsewhere",
			web.FormatValue(f.BeforeShare, f.Unit), shareOf(f.Unit), query.DisplayDuration(rep.Before), f.StoodOut, f.Of, web.FormatValue(f.ControlShare, f.Unit))
		dv := url.Values{}
		for k := range v {
			dv.Set(k, v.Get(k))
		}
		if f.Function != "" {
			dv.Set("search", "^"+regexp.QuoteMeta(f.Function)+"$")
		} else if f.Comm != "" {
			dv.Set("search", "^"+regexp.QuoteMeta(f.Comm)+"$")
		}
		row.DiffHref = link.ExplainDiffPage.With(dv, host)
		stood := map[int64]bool{}
		for _, m := range f.Markers {
			stood[m] = true
		}
		for _, w := range rep.Windows {
			on := false
			for _, m := range w.Markers {
				on = on || stood[m.Time]
			}
			row.Strip = append(row.Strip, web.StripMark{StoodOut: on, Title: windowTitle(w), Href: windowHref(host, w)})
		}
		for _, a := range f.Also {
			row.Also = append(row.Also, a.String())
		}
		p.Findings = append(p.Findings, row)
	}
	for _, w := range rep.Windows {
		nv := url.Values{}
		nv.Set("from", query.FormatSeconds(w.From-30*int64(time.Second)))
		nv.Set("to", query.FormatSeconds(w.To+30*int64(time.Second)))
		ew := web.ExplainWindow{From: w.From, To: w.To, Samples: w.Samples, Href: windowHref(host, w), NightHref: link.Host(host, nv)}
		for _, m := range w.Markers {
			ew.Markers = append(ew.Markers, query.DisplayWallTime(m.Time)+" "+m.Text)
		}
		p.Windows = append(p.Windows, ew)
	}
	s.render(w, r, web.Explain(p))
}

// explainSummary says what a report contrasted.
func explainSummary(rep *explain.Report) string {
	which := "every marker"
	if rep.Match != "" {
		which = "the markers matching " + rep.Match
	}
	markers := 0
	for _, w := range rep.Windows {
		markers += len(w.Markers)
	}
	s := fmt.Sprintf("%d windows of %s before %s (%d markers), against %d control windows", len(rep.Windows), query.DisplayDuration(rep.Before), which, markers, len(rep.Controls))
	if rep.Available > len(rep.Controls) {
		s += fmt.Sprintf(" drawn at random (seed %d) from %d", rep.Seed, rep.Available)
	}
	s += fmt.Sprintf(" of the same sessions, none within %s of a marker.", query.DisplayDuration(rep.Guard))
	if rep.Dropped > 0 {
		s += fmt.Sprintf(" %d windows before markers were left out: mostly unrecorded or with too few samples.", rep.Dropped)
	}
	return s
}

func permutationsText(rep *explain.Report) string {
	if rep.Exact {
		return "every relabeling"
	}
	return fmt.Sprintf("up to %d random relabelings", rep.Permutations)
}

func shareOf(unit string) string {
	if unit == "share" {
		return "of the host"
	}
	return "on average"
}

func windowTitle(w explain.Window) string {
	var b strings.Builder
	b.WriteString(query.DisplayWallTime(w.From) + " – " + query.DisplayWallTime(w.To))
	for _, m := range w.Markers {
		b.WriteString("\n▼ " + m.Text)
	}
	return b.String()
}

// windowHref links a window to its host range's flame graph.
func windowHref(host string, w explain.Window) string {
	v := url.Values{}
	v.Set("from", query.FormatSeconds(w.From))
	v.Set("to", query.FormatSeconds(w.To))
	return link.HostFlamePage.With(v, host)
}

// explainWindows loads a report's before-windows and control windows as
// two joined captures, bounded like a host's range.
func (s *Server) explainWindows(ctx context.Context, host string, rep *explain.Report) (before, control *subsecond.Capture, err error) {
	var n int64
	for _, w := range append(append([]explain.Window{}, rep.Windows...), rep.Controls...) {
		n += w.Samples
	}
	if n > s.maxRangeSamples {
		return nil, nil, errorf(subsecond.ErrTooLarge, "the windows hold %d samples, more than this server's limit of %d for a host's range; ask for fewer control windows (controls)", n, s.maxRangeSamples)
	}
	src := s.source()
	if before, err = explain.LoadWindows(ctx, src, host, rep.Windows); err != nil {
		return nil, nil, err
	}
	if control, err = explain.LoadWindows(ctx, src, host, rep.Controls); err != nil {
		return nil, nil, err
	}
	return before, control, nil
}

// explainDiff handles GET /api/hosts/{host}/explain/diff?match=&before=&controls=&seed=&session=&<filters>&format=:
// the differential flame graph from the control windows (the base) to the
// windows before the markers, each merged across captures, in every
// format of a capture's graphs.
func (s *Server) explainDiff(w http.ResponseWriter, r *http.Request) {
	ft, err := flame.LookupFormat(r.URL.Query().Get("format"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	host, q, rep, err := s.report(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	release, err := s.heavy.enterLong(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	before, control, err := s.explainWindows(r.Context(), host, rep)
	if err != nil {
		s.error(w, r, err)
		return
	}
	q.Range = span(rep.Windows)
	q.Range2 = span(rep.Controls)
	g, err := s.engine.Diff(before, control, q)
	name := fmt.Sprintf("%s-explain-%s.%s", host, fileTime(q.Range.Start), ft.Ext)
	s.writeGraph(w, r, g, err, ft, name)
}

// span returns the range from the first window's start to the last one's
// end.
func span(ws []explain.Window) subsecond.Range {
	if len(ws) == 0 {
		return subsecond.Range{}
	}
	r := subsecond.Range{Start: ws[0].From, End: ws[0].To}
	for _, w := range ws {
		r.Start, r.End = min(r.Start, w.From), max(r.End, w.To)
	}
	return r
}

// explainDiffPage handles GET /hosts/{host}/explain/diff?match=&before=&controls=&seed=&session=&<filters>&search=:
// the differential flame graph of the windows before the markers against
// the control windows, as a host range's diff page draws one.
func (s *Server) explainDiffPage(w http.ResponseWriter, r *http.Request) {
	host, _, rep, err := s.report(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	v := r.URL.Query()
	api := link.ExplainDiffAPI.Path(host)
	target, base := span(rep.Windows), span(rep.Controls)
	var samples int64
	for _, w := range rep.Windows {
		samples += w.Samples
	}
	title := fmt.Sprintf("%s · %d windows before the markers against %d control windows · diff", host, len(rep.Windows), len(rep.Controls))
	ps := &web.ProfileSummary{Name: title, T0: subsecond.FloorSecond(target.Start), Start: target.Start, End: target.End - 1,
		Samples: samples, Events: []subsecond.EventCount{}, Wall: &subsecond.WallClock{}}
	data := web.ViewData{Page: "diff", Host: host, Profile: ps, Params: flatten(v), API: api}
	layout := s.layout(title, data, r)
	layout.Clock = true
	layout.Preload = []string{graphJSON(api, v)}
	side := func(name string, ws []explain.Window, rg subsecond.Range) web.DiffSide {
		return web.DiffSide{Host: host, HostHref: link.HostPage.Path(host), Name: name,
			Href: link.ExplainPage.With(pick(v, explainParams...), host), Range: fmt.Sprintf("%d windows of %s", len(ws), query.DisplayDuration(rep.Before)),
			Wall: &web.WallRange{From: rg.Start, To: rg.End, Date: true}}
	}
	page := web.FlamePage{
		Layout:    layout,
		Profile:   subsecond.Profile{Name: title, Host: host},
		Diff:      true,
		Wall:      &web.WallRange{From: target.Start, To: target.End, Date: true},
		Target:    side("before the markers", rep.Windows, target),
		Base:      side("control windows", rep.Controls, base),
		Back:      link.ExplainPage.With(pick(v, explainParams...), host),
		BackLabel: "← findings",
		Search:    v.Get("search"),
	}
	export := func(format string) string {
		e := pick(v, explainParams...)
		e.Set("format", format)
		return api + "?" + e.Encode()
	}
	graphLinks(&page, v, "diff", export, link.HostStacksPage, link.HostFlamePage, host)
	s.render(w, r, web.Flame(page))
}
