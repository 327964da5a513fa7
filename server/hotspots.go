package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/subsecond/subsecond"
)

// hotCache remembers hot-spot lists per profile and query. Finding hot spots
// takes a pass over the whole capture and a flame graph per episode, and the
// same list is asked for twice in a row: by the profile page and then by its
// script when the filters change back. A computation runs once; later
// requests for the same key wait for it. Profiles never change, so entries
// stay valid; the oldest are dropped beyond maxHotEntries.
type hotCache struct {
	mu    sync.Mutex
	m     map[string]*hotEntry
	order []string
}

type hotEntry struct {
	done chan struct{}
	hs   []Hotspot
	err  error
}

const maxHotEntries = 32

// get returns the entry for key, starting compute in its own goroutine when
// there is none. The computation outlives the request that started it, so a
// page that stops waiting leaves the result for the next request.
func (hc *hotCache) get(key string, compute func() ([]Hotspot, error)) *hotEntry {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if e, ok := hc.m[key]; ok {
		return e
	}
	if hc.m == nil {
		hc.m = map[string]*hotEntry{}
	}
	e := &hotEntry{done: make(chan struct{})}
	hc.m[key] = e
	hc.order = append(hc.order, key)
	if len(hc.order) > maxHotEntries {
		delete(hc.m, hc.order[0])
		hc.order = hc.order[1:]
	}
	go func() {
		defer close(e.done)
		e.hs, e.err = compute()
		if e.err != nil {
			// Failures are not remembered: the next request tries again.
			hc.mu.Lock()
			if hc.m[key] == e {
				delete(hc.m, key)
			}
			hc.mu.Unlock()
		}
	}()
	return e
}

// errPending reports hot spots still being computed when the page stopped
// waiting. Only the profile page waits with a limit, and it shows the list
// as pending instead of an error.
var errPending = errors.New("hot spots are still being computed")

// hotspotList returns the hot spots of the request's profile for q, each
// with the link to its flame graph, waiting at most wait (0: until done or
// the request ends).
func (s *Server) hotspotList(r *http.Request, q *Query, wait time.Duration) ([]Hotspot, error) {
	id := chi.URLParam(r, "id")
	p, err := s.store.Profile(r.Context(), id)
	if err != nil {
		return nil, err
	}
	e := s.hot.get(hotKey(id, r.URL.Query()), func() ([]Hotspot, error) {
		// The capture is loaded in the background too: a cold load is
		// part of what a page may not wait for.
		c, err := s.store.Capture(context.Background(), id)
		if err != nil {
			return nil, err
		}
		return s.engine.Hotspots(c, q)
	})
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-e.done:
	case <-timeout:
		return nil, errPending
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	hs := make([]Hotspot, len(e.hs))
	copy(hs, e.hs)
	for i := range hs {
		hs[i].URL = hotspotLink(p, &hs[i], r.URL.Query())
	}
	return hs, nil
}

// hotKey identifies a hot-spot list: the profile and the parameters the
// engine reads for it.
func hotKey(id string, v url.Values) string {
	k := url.Values{}
	names := []string{"threshold", "min", "bucket"}
	for _, p := range subsecond.FilterParams() {
		names = append(names, p.Name)
	}
	for _, n := range names {
		if s := v.Get(n); s != "" {
			k.Set(n, s)
		}
	}
	return id + "?" + k.Encode()
}
