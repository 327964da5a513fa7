package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/web"
)

// json writes v as the JSON response body with status code.
func (s *Server) json(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("write response", "err", err)
	}
}

// listProfiles handles GET /api/profiles?per_page=&cursor=: a page of the
// profiles, newest first as the store lists them, each with a summary of
// its events (event_count and the top one alone):
// {"profiles": [...], "next_cursor", "next"}, the last two naming the next
// page while there is one.
func (s *Server) listProfiles(w http.ResponseWriter, r *http.Request) {
	list, next, err := s.listPage(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if list == nil {
		list = []subsecond.Profile{}
	}
	s.json(w, http.StatusOK, subsecond.ProfileList{Profiles: list, NextCursor: next, Next: nextPage(r, next)})
}

// listPage returns the page of the profile list that the request's
// per_page and cursor name, and the next page's cursor ("" for the last).
func (s *Server) listPage(r *http.Request) ([]subsecond.Profile, string, error) {
	q, err := query.Parse(r.URL.Query())
	if err != nil {
		return nil, "", err
	}
	list, next, err := s.store.Page(r.Context(), q.PerPage, q.Cursor)
	if errors.Is(err, subsecond.ErrNotFound) {
		return nil, "", query.Invalidf("cursor", "there is no profile %q to list after (deleted meanwhile?); start again from the first page", q.Cursor)
	}
	return list, next, err
}

// nextPage returns the URL of the request's next page, whose cursor is
// next: the request's own path and parameters with cursor replaced; ""
// when next is.
func nextPage(r *http.Request, next string) string {
	if next == "" {
		return ""
	}
	v := r.URL.Query()
	v.Set("cursor", next)
	return r.URL.Path + "?" + v.Encode()
}

// getProfile handles GET /api/profiles/{id}: the profile's metadata.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) {
	p, err := s.store.Profile(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, p)
}

// maxPatch bounds the body of a PATCH: a name and little else.
const maxPatch = 4 << 10

// patchProfile handles PATCH /api/profiles/{id} with the JSON body
// {"name": "…"}: renames the profile and answers it. It needs the token,
// when one is set, and is refused in read-only mode, as deletes are.
func (s *Server) patchProfile(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.error(w, r, err)
		return
	}
	var body struct {
		Name *string `json:"name"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPatch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = query.Invalidf("name", "the request body is longer than %d bytes", maxPatch)
		} else {
			err = query.Invalidf("name", `the body is not JSON like {"name": "web-1 incident"}: %v`, err)
		}
		s.error(w, r, err)
		return
	}
	if body.Name == nil {
		s.error(w, r, query.Invalidf("name", `the body names nothing to change; send {"name": "…"}`))
		return
	}
	id := chi.URLParam(r, "id")
	err := s.store.Rename(r.Context(), id, strings.TrimSpace(*body.Name))
	s.answers.drop(id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p, err := s.store.Profile(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, p)
}

// deleteProfile handles DELETE /api/profiles/{id}: 204 when deleted.
func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.error(w, r, err)
		return
	}
	err := s.store.Delete(r.Context(), chi.URLParam(r, "id"))
	s.answers.drop(chi.URLParam(r, "id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// load returns the capture of the request's profile and the parsed query,
// holding a heavy slot that the caller gives back with release. The query
// and its cost (check, when not nil, and the samples it reads) are checked
// against the profile's metadata first, so that a bad or too costly
// request loads nothing and waits for no slot. A capture the store holds
// in memory carries that metadata, which is then not read again. A view of
// q.Range alone (window) may be given only that range's seconds of a
// capture too large to read whole (viewCapture).
func (s *Server) load(r *http.Request, check func(*subsecond.Profile, *Query) error, window bool) (c *subsecond.Capture, q *Query, release func(), err error) {
	id := chi.URLParam(r, "id")
	c, cached, err := s.store.CachedCapture(r.Context(), id)
	if err != nil {
		return nil, nil, nil, err
	}
	var p *subsecond.Profile
	if cached {
		p = &c.Profile
	} else if p, err = s.store.Profile(r.Context(), id); err != nil {
		return nil, nil, nil, err
	}
	if q, err = parseQuery(p, r.URL.Query()); err != nil {
		return nil, nil, nil, err
	}
	if check != nil {
		if err := check(p, q); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := s.checkViewSamples(r.Context(), p, q, window); err != nil {
		return nil, nil, nil, err
	}
	if release, err = s.heavy.enter(r.Context()); err != nil {
		return nil, nil, nil, err
	}
	if cached {
		return c, q, release, nil
	}
	if c, err = s.viewCapture(r.Context(), p, q, window); err != nil {
		release()
		return nil, nil, nil, err
	}
	return c, q, release, nil
}

// namesBase reports whether a request names the base of a differential
// graph: a range (start2, end2, or on the wall clock from2, to2) or another
// profile (base).
func namesBase(v url.Values) bool {
	return v.Has("start2") || v.Has("end2") || v.Has("from2") || v.Has("to2") || v.Get("base") != ""
}

// needBase checks that a differential request names its base.
func needBase(v url.Values) error {
	if !namesBase(v) {
		return fmt.Errorf("start2: the base range start2, end2 is missing: %w", subsecond.ErrInvalid)
	}
	return nil
}

// baseCapture returns the base capture of a differential request: c itself
// unless q.Base names another profile, whose capture it loads after
// reading q.Range2 against that profile.
func (s *Server) baseCapture(r *http.Request, c *subsecond.Capture, q *Query) (*subsecond.Capture, error) {
	if q.Base == "" {
		return c, nil
	}
	bp, err := s.baseProfile(r.Context(), q, r.URL.Query())
	if err != nil {
		return nil, err
	}
	if err := s.checkViewSamples(r.Context(), bp, q, false); err != nil {
		return nil, err
	}
	return s.store.Capture(r.Context(), bp.ID)
}

// baseProfile looks up the profile q.Base names and reads q.Range2 against
// it. An unknown base is the client's mistake, named as such.
func (s *Server) baseProfile(ctx context.Context, q *Query, v url.Values) (*subsecond.Profile, error) {
	bp, err := s.store.Profile(ctx, q.Base)
	if errors.Is(err, subsecond.ErrNotFound) {
		return nil, fmt.Errorf("base: there is no profile %q: %w", q.Base, subsecond.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	if err := q.ResolveBase(bp); err != nil {
		return nil, err
	}
	return bp, nil
}

// heatmap handles GET /api/profiles/{id}/heatmap?rows=&col=&<filters>: the
// offset heatmap.
func (s *Server) heatmap(w http.ResponseWriter, r *http.Request) {
	s.view(w, r, "heatmap", query.ViewHeatmap, s.checkHeatmapCost, s.engine.Heatmap)
}

// cores handles GET /api/profiles/{id}/cpus?bucket=&<filters>: the cores map.
func (s *Server) cores(w http.ResponseWriter, r *http.Request) {
	s.view(w, r, "cpus", query.ViewCores, s.checkCoresCost, s.engine.Cores)
}

// view answers with the JSON of a view of the request's capture: the
// answer kept in the answer cache for the profile and the parameters of
// views the view (name) reads, else the profile and query are loaded,
// check bounds the view's cost before the samples are, and compute draws
// it.
func (s *Server) view(w http.ResponseWriter, r *http.Request, name string, views query.View, check func(*subsecond.Profile, *Query) error,
	compute func(*subsecond.Capture, *Query) (any, error)) {
	var key string
	if s.answers != nil {
		p, q, err := s.pageProfile(r.Context(), r)
		if err != nil {
			s.error(w, r, err)
			return
		}
		key = answerKey(p, name, q, views)
		if gz, ok := s.answers.get(p.ID, key); ok {
			s.writeAnswer(w, r, gz)
			return
		}
	}
	c, q, release, err := s.load(r, check, false)
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	v, err := compute(c, q)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if key == "" || key != answerKey(&c.Profile, name, q, views) {
		s.json(w, http.StatusOK, v)
		return
	}
	s.answerJSON(w, r, c.Profile.ID, key, v)
}

// hotspots handles GET /api/profiles/{id}/hotspots?threshold=&min=&bucket=&limit=&cells=&<filters>:
// the hot-spot report, as `subsecond hotspots --format json` prints it:
// {"t0_ns", "found", "hotspots": [...], "cells": [...]}, the first limit
// (default 50, 0 for all) episodes, highest score first, each with the URL
// of its flame graph page, and "what", the sentence the profile page
// heads them with (web.HotspotList).
func (s *Server) hotspots(w http.ResponseWriter, r *http.Request) {
	p, q, err := s.pageProfile(r.Context(), r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	key := answerKey(p, "hotspots", q, query.ViewHotspots)
	if gz, ok := s.answers.get(p.ID, key); ok {
		s.writeAnswer(w, r, gz)
		return
	}
	rep, err := s.hotspotList(r, q, 0)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if q.Limit > 0 && len(rep.Spots) > q.Limit {
		rep.Spots = rep.Spots[:q.Limit]
	}
	s.answerJSON(w, r, p.ID, key, web.NewHotspotList(rep))
}

// flamegraph handles GET /api/profiles/{id}/flamegraph?start=&end=&<filters>&format=:
// the flame graph of a range as JSON (default), folded stacks, SVG or pprof.
// A request that names a base (start2, end2 or base) gets the differential
// graph, as from /diff and as `subsecond flamegraph --start2` prints it.
func (s *Server) flamegraph(w http.ResponseWriter, r *http.Request) {
	s.graph(w, r, namesBase(r.URL.Query()))
}

// diff handles GET /api/profiles/{id}/diff?start2=&end2=&start=&end=&base=&<filters>&format=:
// the differential flame graph from the base range [start2, end2) to
// [start, end), the base taken from profile base when given (start2 and
// end2 then count from its T0, and default to its whole capture).
func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	s.graph(w, r, true)
}

// samples handles GET /api/profiles/{id}/samples?start=&end=&<filters>&max_samples=:
// the stack chart's samples of a range in time order, each with its leaf
// node in the range's flame graph (flame.Samples). A range holding more
// than max_samples samples of the filters is refused with a 400 naming end.
func (s *Server) samples(w http.ResponseWriter, r *http.Request) {
	c, q, release, err := s.load(r, nil, true)
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	v, n, err := s.engine.Samples(c, q, q.MaxSamples)
	if err == nil && v == nil {
		t0 := c.Profile.T0()
		err = query.Invalidf("end", "the range %s holds %d samples of these filters, more than the stack chart's limit of %d; choose a shorter range, fewer CPUs or max_samples up to %d",
			query.DisplayRange(q.Range.Start-t0, q.Range.End-t0), n, q.MaxSamples, query.MaxMaxSamples)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, v)
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request, isDiff bool) {
	ft, err := flame.LookupFormat(r.URL.Query().Get("format"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	if isDiff {
		if err := needBase(r.URL.Query()); err != nil {
			s.error(w, r, err)
			return
		}
	}
	c, q, release, err := s.load(r, nil, !isDiff)
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	var g Graph
	if isDiff {
		var bc *subsecond.Capture
		if bc, err = s.baseCapture(r, c, q); err == nil {
			g, err = s.engine.Diff(c, bc, q)
		}
	} else {
		g, err = s.engine.Flame(c, q)
	}
	kind := "flame"
	if isDiff {
		kind = "diff"
	}
	t0 := c.Profile.T0()
	name := fmt.Sprintf("%s-%s-%s-%s.%s", c.Profile.ID, kind, query.FormatSeconds(q.Range.Start-t0), query.FormatSeconds(q.Range.End-t0), ft.Ext)
	s.writeGraph(w, r, g, err, ft, name)
}

// writeGraph writes g, computed with error err, in format ft, as an
// attachment called name when ft is saved as a file; the graph's size is
// checked against the server's node limit first.
func (s *Server) writeGraph(w http.ResponseWriter, r *http.Request, g Graph, err error, ft flame.Format, name string) {
	if err == nil {
		err = s.checkNodes(g.Len(), ft.Name)
	}
	if err == nil {
		// The graph is built; its export is the costly part, not worth
		// doing for a client that has gone.
		err = r.Context().Err()
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ft.MediaType)
	h.Set("Cache-Control", "no-store")
	if ft.Attachment {
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	}
	cw := &countingWriter{w: w}
	if err := g.Export(cw, ft.Name); err != nil {
		if cw.n == 0 {
			h.Del("Content-Disposition")
			s.error(w, r, err)
			return
		}
		// The response has begun: cut it short so that the client sees a
		// broken transfer rather than a truncated file; the request's log
		// line says why.
		noteError(r, fmt.Errorf("export %s: %w", ft.Name, err))
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
