package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/markers"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// Night is what the host views read beside the Store: each capture's
// rollup of per-second counts (never its samples, for the timeline and
// comm shares) and each host's event markers.
type Night interface {
	Rollup(ctx context.Context, id string) (*subsecond.Rollup, error)
	Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error)
	AddMarkers(ctx context.Context, host string, ms []subsecond.Marker) (subsecond.MarkersAdded, error)
}

// nightSource joins the Store and Night into the timeline's Source.
type nightSource struct {
	Store
	Night
}

func (s *Server) source() timeline.Source { return nightSource{s.store, s.night} }

// A nightSource reads windows of captures for the night's hot spots.
var _ timeline.WindowSource = nightSource{}

// maxMarkerBody bounds a POST of markers, in bytes.
const maxMarkerBody = 8 << 20

// hostParam returns the {host} of the URL, unescaped and checked. chi
// matches the escaped path (and so gives escaped parameters) when the
// request's path has escapes the decoded path would not have, as links to
// a host named "rack;7" do (link.HostPage escapes with url.PathEscape).
func hostParam(r *http.Request) (string, error) {
	h := chi.URLParam(r, "host")
	if r.URL.RawPath != "" {
		u, err := url.PathUnescape(h)
		if err != nil {
			return "", fmt.Errorf("host %q: %w", h, subsecond.ErrNotFound)
		}
		h = u
	}
	if err := query.CheckHost(h); err != nil {
		return "", fmt.Errorf("host %q: %w", h, subsecond.ErrNotFound)
	}
	return h, nil
}

// hostQuery returns the {host} of the URL and its query parameters, the
// table's (query.Parse).
func hostQuery(r *http.Request) (string, *Query, error) {
	host, err := hostParam(r)
	if err != nil {
		return "", nil, err
	}
	q, err := query.Parse(r.URL.Query())
	if err != nil {
		return "", nil, err
	}
	return host, q, nil
}

// listHosts handles GET /api/hosts?per_page=&cursor=: a page of the
// hosts, by name, each with its captures' count, samples, wall-clock span
// and labels: {"hosts": [...], "next_cursor", "next"} (timeline.HostList),
// the last two naming the next page while there is one.
func (s *Server) listHosts(w http.ResponseWriter, r *http.Request) {
	hosts, next, err := s.hostList(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, timeline.HostList{Hosts: hosts, NextCursor: next, Next: nextPage(r, next)})
}

// hostList returns the page of the host list that the request's per_page
// and cursor name (a host name: the page starts after it), with the
// labels of its hosts alone, and the next page's cursor ("" for the
// last). Its cost follows the page, not the archive: the database totals
// the page's hosts (timeline.HostPage).
func (s *Server) hostList(r *http.Request) ([]timeline.Host, string, error) {
	q, err := query.Parse(r.URL.Query())
	if err != nil {
		return nil, "", err
	}
	hosts, next, err := timeline.HostPage(r.Context(), s.store, q.PerPage, q.Cursor)
	if err != nil {
		return nil, "", err
	}
	labels, err := s.labelsOf(r.Context(), timeline.HostNames(hosts))
	if err != nil {
		return nil, "", err
	}
	timeline.Labelled(hosts, labels)
	return hosts, next, nil
}

// hostCaptures handles GET /api/hosts/{host}/captures?per_page=&cursor=: a
// page of the host's captures placed on its night, in time order
// (timeline.CaptureList), from the profiles' metadata alone, with the next
// page's cursor and URL while there is one.
func (s *Server) hostCaptures(w http.ResponseWriter, r *http.Request) {
	host, q, err := hostQuery(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := timeline.Captures(r.Context(), s.source(), host, q.PerPage, q.Cursor)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list.Next = nextPage(r, list.NextCursor)
	s.json(w, http.StatusOK, list)
}

// hostSessions handles GET /api/hosts/{host}/sessions: the host's
// recording sessions, each with its wall-clock span, captures and samples
// (timeline.SessionList), from the profiles' metadata alone.
func (s *Server) hostSessions(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := timeline.Sessions(r.Context(), s.source(), host)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, list)
}

// hostTimeline handles GET /api/hosts/{host}/timeline?from=&to=&bucket=:
// the cores × time grid of the host's night (timeline.Grid), from the
// captures' summaries, its columns × CPUs bounded by the server's cell
// limit before any summary is read.
func (s *Server) hostTimeline(w http.ResponseWriter, r *http.Request) {
	s.hostSpanJSON(w, r, func(ctx context.Context, host string, span timeline.Span, _ *Query) (any, error) {
		return timeline.Timeline(ctx, s.source(), host, span)
	})
}

// hostComms handles GET /api/hosts/{host}/comms?comm=&from=&to=&bucket=&limit=:
// comm's share of the host's CPU over the night, and the commands that
// jump furthest above their baseline (timeline.CommReport).
func (s *Server) hostComms(w http.ResponseWriter, r *http.Request) {
	s.hostSpanJSON(w, r, func(ctx context.Context, host string, span timeline.Span, q *Query) (any, error) {
		return timeline.Comms(ctx, s.source(), host, span, q.Filter.Comm, q.Limit)
	})
}

// hostSpanJSON answers a heavy host view over the span its query names,
// bounded by the server's cell limit before any summary is read.
func (s *Server) hostSpanJSON(w http.ResponseWriter, r *http.Request, view func(ctx context.Context, host string, span timeline.Span, q *Query) (any, error)) {
	host, q, err := hostQuery(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	span := timeline.SpanOf(q)
	span.MaxCells = s.maxCells
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		return view(ctx, host, span, q)
	})
}

// hostHotspots handles GET /api/hosts/{host}/hotspots?session=&measure=&threshold=&min=&limit=&near=:
// the episodes of one recording session (by default the latest, as the
// timeline shows) on one score scale, those ending within near before a
// marker first, each with links to its host range's flame graph and
// differential graph and to its capture's views (timeline.Report).
func (s *Server) hostHotspots(w http.ResponseWriter, r *http.Request) {
	host, q, err := hostQuery(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		ms, err := s.night.Markers(ctx, host, 0, timeline.EndOfTime)
		if err != nil {
			return nil, err
		}
		return timeline.Hotspots(ctx, s.source(), host, timeline.HotOptionsOf(q, ms))
	})
}

// hostMarkers handles GET /api/hosts/{host}/markers?from=&to=: the host's
// markers, each with the window of the 10 s before it when a capture holds
// it (timeline.MarkerList).
func (s *Server) hostMarkers(w http.ResponseWriter, r *http.Request) {
	host, q, err := hostQuery(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	from, to := timeline.MarkerRange(q)
	ms, err := s.night.Markers(r.Context(), host, from, to)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := timeline.Markers(r.Context(), s.source(), host, ms)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, list)
}

// addMarkers handles POST /api/hosts/{host}/markers: a JSON body
// {"markers": [{"time": "2026-11-30T03:12:05Z" or "time_ns": …, "text": …}]},
// or a log as text (dmesg -T, journalctl -o short-iso, ISO or syslog
// timestamps) whose lines matching ?match= become markers. Answers
// {"added": n, "markers": n}; needs the token like uploads.
func (s *Server) addMarkers(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.error(w, r, err)
		return
	}
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxMarkerBody)
	var ms []subsecond.Marker
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		var in struct {
			Markers []struct {
				Time   string `json:"time"`
				TimeNS int64  `json:"time_ns"`
				Text   string `json:"text"`
			} `json:"markers"`
		}
		if err := json.NewDecoder(body).Decode(&in); err != nil {
			var mbe *http.MaxBytesError
			if !errors.As(err, &mbe) {
				err = fmt.Errorf("body: not the JSON {\"markers\": [{\"time\", \"text\"}]}: %w", subsecond.ErrInvalid)
			}
			s.error(w, r, err)
			return
		}
		for i, m := range in.Markers {
			t := m.TimeNS
			if m.Time != "" {
				if t, err = query.ParseWallTime(fmt.Sprintf("markers[%d].time", i), m.Time); err != nil {
					s.error(w, r, err)
					return
				}
			}
			ms = append(ms, subsecond.Marker{Time: t, Text: strings.TrimSpace(m.Text)})
		}
	} else {
		// match is the query table's parameter: checked there (a regular
		// expression, bounded in size) like explain's.
		q, err := query.Parse(r.URL.Query())
		if err != nil {
			s.error(w, r, err)
			return
		}
		opt := markers.Options{}
		if q.Match != "" {
			opt.Match = regexp.MustCompile(q.Match)
		}
		if ms, err = markers.Parse(body, opt); err != nil {
			s.error(w, r, err)
			return
		}
	}
	added, err := s.night.AddMarkers(r.Context(), host, ms)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, map[string]int{"added": added.Added, "dropped": added.Dropped, "markers": len(ms)})
}

// heavyJSON answers with compute's value as JSON, computed in a heavy slot
// (see gate), like every view whose cost grows with the data.
func (s *Server) heavyJSON(w http.ResponseWriter, r *http.Request, compute func(ctx context.Context) (any, error)) {
	s.gatedJSON(w, r, s.heavy.enter, compute)
}

// longJSON is heavyJSON for a long analysis (gate.enterLong).
func (s *Server) longJSON(w http.ResponseWriter, r *http.Request, compute func(ctx context.Context) (any, error)) {
	s.gatedJSON(w, r, s.heavy.enterLong, compute)
}

func (s *Server) gatedJSON(w http.ResponseWriter, r *http.Request, enter func(context.Context) (func(), error), compute func(ctx context.Context) (any, error)) {
	release, err := enter(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	v, err := compute(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, v)
}

// hostsPage handles GET /hosts?per_page=&cursor=: a page of the hosts,
// by name, and the span of their captures, with a link to the next page.
func (s *Server) hostsPage(w http.ResponseWriter, r *http.Request) {
	hosts, next, err := s.hostList(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	page := web.HostsPage{Layout: s.layout("Hosts", web.ViewData{Page: "hosts"}, r), Fleet: s.fleet != nil,
		Next: nextPage(r, next), First: r.URL.Query().Get("cursor") != ""}
	for _, h := range hosts {
		row := web.HostRow{Host: h.Host, Href: link.HostPage.Path(h.Host), Captures: h.Captures, Samples: h.Samples, Without: h.Unanchored,
			Labels: h.Labels}
		row.Wall = hostWall(h)
		page.Hosts = append(page.Hosts, row)
	}
	s.render(w, r, web.Hosts(page))
}

// hostPage handles GET /hosts/{host}?session=&from=&to=&measure=&comm=&tz=:
// the host's night, drawn by the page's script from the host API, with a
// picker of its recording sessions. It reads the host's own profiles and
// labels alone, never the archive's (which it did, every profile and every
// host's labels, for each page).
func (s *Server) hostPage(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	ps, err := s.store.HostProfiles(r.Context(), host)
	if err != nil {
		s.error(w, r, err)
		return
	}
	hs := timeline.Hosts(ps)
	if len(hs) != 1 {
		s.error(w, r, fmt.Errorf("host %q: %w", host, subsecond.ErrNotFound))
		return
	}
	h := hs[0]
	page := web.HostPage{Layout: s.layout(host, web.ViewData{Page: "host", Host: host, API: link.HostAPI.Path(host)}, r),
		Host: host, Captures: h.Captures, Without: h.Unanchored, ExplainHref: link.ExplainPage.With(pick(r.URL.Query(), "session"), host)}
	page.Wall = hostWall(h)
	labels, err := s.labelsOf(r.Context(), []string{host})
	if err != nil {
		s.error(w, r, err)
		return
	}
	page.Labels = labels[host]
	ss, err := timeline.Sessions(r.Context(), s.source(), host)
	if err != nil {
		s.error(w, r, err)
		return
	}
	for _, x := range ss.Sessions {
		page.Sessions = append(page.Sessions, web.SessionOption{Number: x.Number, Captures: x.Captures, Samples: x.Samples,
			Wall: web.WallRange{From: x.Start, To: x.End, Approximate: x.Approximate, Date: true}})
	}
	s.render(w, r, web.Host(page))
}

// hostWall returns the wall-clock span of h's captures, with dates; nil
// when none has a wall clock.
func hostWall(h timeline.Host) *web.WallRange {
	if h.End == 0 {
		return nil
	}
	return &web.WallRange{From: h.Start, To: h.End, Approximate: h.Approximate, Date: true}
}
