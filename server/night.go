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
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/markers"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// Night is what the host views read beside the Store: each capture's
// per-second summaries (never its samples, for the timeline and comm
// shares) and each host's event markers.
type Night interface {
	Summaries(ctx context.Context, id string) ([]timeline.Summary, error)
	Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error)
	AddMarkers(ctx context.Context, host string, ms []subsecond.Marker) (int, error)
}

// nightSource joins the Store and Night into the timeline's Source.
type nightSource struct {
	Store
	Night
}

func (s *Server) source() timeline.Source { return nightSource{s.store, s.night} }

// maxMarkerBody bounds a POST of markers, in bytes.
const maxMarkerBody = 8 << 20

// hostParam returns the {host} of the URL, checked.
func hostParam(r *http.Request) (string, error) {
	h := chi.URLParam(r, "host")
	if err := subsecond.CheckHost(h); err != nil {
		return "", fmt.Errorf("host %q: %w", h, subsecond.ErrNotFound)
	}
	return h, nil
}

// parseSpan reads from, to (wall-clock times) and bucket (seconds, or a Go
// duration such as 10s or 5m) from v; absent ones are 0.
func parseSpan(v url.Values) (from, to, bucket int64, err error) {
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"from", &from}, {"to", &to}} {
		if s := v.Get(p.name); s != "" {
			if *p.dst, err = subsecond.ParseWallTime(p.name, s); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	if s := v.Get("bucket"); s != "" {
		if bucket, err = parseDuration("bucket", s); err != nil {
			return 0, 0, 0, err
		}
	}
	return from, to, bucket, nil
}

// parseDuration reads seconds ("2", "0.5") or a Go duration ("2s",
// "1500ms", "5m") as nanoseconds.
func parseDuration(name, s string) (int64, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e7 {
		return int64(f * 1e9), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return int64(d), nil
	}
	return 0, fmt.Errorf("%s: %q is not a positive duration such as 10, 10s or 5m: %w", name, s, subsecond.ErrInvalid)
}

// listHosts handles GET /api/hosts: {"hosts": [...]}, each with its
// captures' count, samples and wall-clock span.
func (s *Server) listHosts(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.List(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, map[string]any{"hosts": timeline.Hosts(list)})
}

// hostTimeline handles GET /api/hosts/{host}/timeline?from=&to=&bucket=:
// the cores × time grid of the host's night (timeline.Grid), from the
// captures' summaries.
func (s *Server) hostTimeline(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	from, to, bucket, err := parseSpan(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		return timeline.Timeline(ctx, s.source(), host, from, to, bucket)
	})
}

// hostComms handles GET /api/hosts/{host}/comms?comm=&from=&to=&bucket=&limit=:
// comm's share of the host's CPU over the night, and the commands that
// jump furthest above their baseline (timeline.CommReport).
func (s *Server) hostComms(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	q := r.URL.Query()
	from, to, bucket, err := parseSpan(q)
	if err != nil {
		s.error(w, r, err)
		return
	}
	limit, err := intParam(q, "limit", 10, 1, 1000)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		return timeline.Comms(ctx, s.source(), host, from, to, bucket, q.Get("comm"), limit)
	})
}

// hostHotspots handles GET /api/hosts/{host}/hotspots?measure=busy|system&threshold=&min=&limit=&near=:
// the night's episodes on one score scale, those ending within near
// (default 60 s) before a marker first, each with links to its capture's
// views.
func (s *Server) hostHotspots(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	q := r.URL.Query()
	opt := timeline.HotOptions{}
	switch q.Get("measure") {
	case "", "busy":
	case "system":
		opt.System = true
	default:
		s.error(w, r, fmt.Errorf("measure: %q is not busy or system: %w", q.Get("measure"), subsecond.ErrInvalid))
		return
	}
	if v := q.Get("threshold"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1) {
			s.error(w, r, fmt.Errorf("threshold: %q is not a fraction in (0, 1]: %w", v, subsecond.ErrInvalid))
			return
		}
		opt.Threshold = f
	}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"min", &opt.Min}, {"near", (*int64)(&opt.Near)}} {
		if v := q.Get(p.name); v != "" {
			if *p.dst, err = parseDuration(p.name, v); err != nil {
				s.error(w, r, err)
				return
			}
		}
	}
	if opt.Limit, err = intParam(q, "limit", 20, 1, 1000); err != nil {
		s.error(w, r, err)
		return
	}
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		ms, err := s.night.Markers(ctx, host, 0, 1<<62)
		if err != nil {
			return nil, err
		}
		opt.Markers = ms
		rep, err := timeline.Hotspots(ctx, s.source(), host, opt)
		if err != nil {
			return nil, err
		}
		caps, _, err := timeline.HostCaptures(ctx, s.source(), host)
		if err != nil {
			return nil, err
		}
		type spot struct {
			timeline.Spot
			URL      string `json:"url"`       // the capture's page, zoomed to the episode on its CPU
			FlameURL string `json:"flame_url"` // the episode's flame graph
			// CompareURL is the differential flame graph from the same CPU
			// and place in the previous capture to the episode; "" for the
			// first capture.
			CompareURL string `json:"compare_url,omitempty"`
		}
		out := struct {
			*timeline.Report
			Spots []spot `json:"hotspots"`
		}{Report: rep, Spots: []spot{}}
		for _, sp := range rep.Spots {
			lo, hi := sp.Start-sp.Offset-sp.T0, sp.End-sp.Offset-sp.T0
			qs := fmt.Sprintf("cpu=%d&start=%s&end=%s", sp.CPU, subsecond.FormatSeconds(lo), subsecond.FormatSeconds(hi))
			v := spot{Spot: sp, URL: "/p/" + sp.Capture + "?" + qs, FlameURL: "/p/" + sp.Capture + "/flame?" + qs}
			for i := 1; i < len(caps); i++ {
				if caps[i].ID == sp.Capture {
					prev := caps[i-1]
					v.CompareURL = fmt.Sprintf("/p/%s/diff?%s&base=%s&start2=%s&end2=%s", sp.Capture, qs, prev.ID,
						subsecond.FormatSeconds(lo), subsecond.FormatSeconds(hi))
				}
			}
			out.Spots = append(out.Spots, v)
		}
		return out, nil
	})
}

// MarkerView is a marker with its link to "the 10 s before it": the
// capture holding most of that window, zoomed to it.
type MarkerView struct {
	subsecond.Marker
	Before *timeline.Window `json:"before,omitempty"`
	URL    string           `json:"url,omitempty"`
}

// hostMarkers handles GET /api/hosts/{host}/markers?from=&to=: {"markers":
// [...]}, each with the window of the 10 s before it when a capture holds
// it.
func (s *Server) hostMarkers(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	from, to, _, err := parseSpan(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if to == 0 {
		to = 1 << 62
	}
	views, err := s.markerViews(r.Context(), host, from, to)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, map[string]any{"host": host, "markers": views})
}

// markerViews returns host's markers in [from, to) with their windows.
func (s *Server) markerViews(ctx context.Context, host string, from, to int64) ([]MarkerView, error) {
	ms, err := s.night.Markers(ctx, host, from, to)
	if err != nil {
		return nil, err
	}
	caps, _, err := timeline.HostCaptures(ctx, s.source(), host)
	if err != nil && len(ms) == 0 {
		return nil, err
	}
	out := make([]MarkerView, 0, len(ms))
	for _, m := range ms {
		v := MarkerView{Marker: m}
		if win, ok := timeline.Locate(caps, m.Time-int64(10*time.Second), m.Time); ok {
			v.Before = &win
			v.URL = fmt.Sprintf("/p/%s?start=%s&end=%s", win.Capture, subsecond.FormatSeconds(win.Start), subsecond.FormatSeconds(win.End))
		}
		out = append(out, v)
	}
	return out, nil
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
				if t, err = subsecond.ParseWallTime(fmt.Sprintf("markers[%d].time", i), m.Time); err != nil {
					s.error(w, r, err)
					return
				}
			}
			ms = append(ms, subsecond.Marker{Time: t, Text: strings.TrimSpace(m.Text)})
		}
	} else {
		opt := markers.Options{}
		if v := r.URL.Query().Get("match"); v != "" {
			if opt.Match, err = regexp.Compile(v); err != nil {
				s.error(w, r, fmt.Errorf("match: %v: %w", err, subsecond.ErrInvalid))
				return
			}
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
	s.json(w, http.StatusOK, map[string]int{"added": added, "markers": len(ms)})
}

// heavyJSON answers with compute's value as JSON, computed in a heavy slot
// (see gate), like every view whose cost grows with the data.
func (s *Server) heavyJSON(w http.ResponseWriter, r *http.Request, compute func(ctx context.Context) (any, error)) {
	release, err := s.heavy.enter(r.Context())
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

// hostsPage handles GET /hosts: the hosts and the span of their captures.
func (s *Server) hostsPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.List(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	page := web.HostsPage{Layout: s.layout("Hosts", web.ViewData{Page: "hosts"}, r)}
	for _, h := range timeline.Hosts(list) {
		row := web.HostRow{Host: h.Host, Href: "/hosts/" + url.PathEscape(h.Host), Captures: h.Captures, Samples: h.Samples, Without: h.Unanchored}
		row.From, row.To = wallSpan(h.Start, h.End, h.Approximate)
		page.Hosts = append(page.Hosts, row)
	}
	s.render(w, r, web.Hosts(page))
}

// hostPage handles GET /hosts/{host}?from=&to=&measure=&comm=&tz=: the
// host's night, drawn by the page's script from the host API.
func (s *Server) hostPage(w http.ResponseWriter, r *http.Request) {
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	list, err := s.store.List(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	var h *timeline.Host
	for _, x := range timeline.Hosts(list) {
		if x.Host == host {
			h = &x
		}
	}
	if h == nil {
		s.error(w, r, fmt.Errorf("host %q: %w", host, subsecond.ErrNotFound))
		return
	}
	page := web.HostPage{Layout: s.layout(host, web.ViewData{Page: "host", Host: host, API: "/api/hosts/" + url.PathEscape(host)}, r),
		Host: host, Captures: h.Captures, Without: h.Unanchored}
	page.From, page.To = wallSpan(h.Start, h.End, h.Approximate)
	s.render(w, r, web.Host(page))
}

// wallSpan formats a wall-clock span in UTC, "≈" first when approximate,
// or "unknown" when end is 0.
func wallSpan(start, end int64, approx bool) (string, string) {
	if end == 0 {
		return "unknown", "unknown"
	}
	mark := ""
	if approx {
		mark = "≈ "
	}
	f := func(t int64) string { return mark + time.Unix(0, t).UTC().Format("2006-01-02 15:04:05") }
	return f(start), f(end)
}
