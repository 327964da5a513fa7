package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
	"github.com/subsecond/subsecond/query"
)

// DefaultAnswerCacheSize is the answer cache's default budget in bytes
// (Config.AnswerCacheSize).
const DefaultAnswerCacheSize = 64 << 20

// answerCache keeps the answers of the views of a whole profile (heatmap,
// cores map, hot spots), JSON compressed with gzip, per profile and
// canonical query. A profile never changes once stored, so an answer stays
// valid until the profile is deleted (or renamed: the key holds its name);
// a view asked again is then written from memory, with no heavy slot,
// capture or computation. Each answer is compressed once, when computed,
// instead of at each request.
//
// The cache is bounded by its budget in bytes: it keeps a profile's answers
// together, least recently used profile out first, and drops them when the
// profile is deleted. A profile keeps at most maxProfileAnswers answers and
// no answer larger than a sixteenth of the budget. A nil *answerCache keeps
// nothing.
type answerCache struct {
	c            *lru.Cache[string, *answers]
	budget       int64
	hits, misses atomic.Int64
}

// answers are one profile's answers by key (answerKey), gzip-compressed.
type answers struct {
	mu    sync.Mutex
	m     map[string][]byte
	bytes atomic.Int64 // of m's keys and values
}

// maxProfileAnswers bounds the answers kept for one profile: a page's
// three views under a few settings of its filters.
const maxProfileAnswers = 64

// answerOverhead is what an answer or a profile's set of them holds beyond
// its bytes: map entries, headers.
const answerOverhead = 128

func newAnswerCache(budget int64) *answerCache {
	if budget < 0 {
		return nil
	}
	if budget == 0 {
		budget = DefaultAnswerCacheSize
	}
	return &answerCache{budget: budget, c: lru.New[string](lru.Options[*answers]{
		Budget:  budget,
		Size:    func(*answers) int64 { return answerOverhead },
		Growing: func(a *answers) int64 { return a.bytes.Load() },
	})}
}

// answerKey identifies the answer of view (heatmap, cpus, hotspots) of
// profile p for q: the parameters the view reads, as parsed, so that
// equivalent queries (col=1 and col=1s) share an answer, and the profile's
// name, which some answers carry.
func answerKey(p *subsecond.Profile, view string, q *Query, views query.View) string {
	return view + "?" + q.ValuesFor(views).Encode() + "#" + p.Name
}

// get returns the gzip-compressed answer of key for profile id, if kept.
func (ac *answerCache) get(id, key string) ([]byte, bool) {
	if ac == nil {
		return nil, false
	}
	if a, ok := ac.c.Peek(id); ok {
		a.mu.Lock()
		gz, ok := a.m[key]
		a.mu.Unlock()
		if ok {
			ac.hits.Add(1)
			return gz, true
		}
	}
	ac.misses.Add(1)
	return nil, false
}

// put keeps gz as the answer of key for profile id.
func (ac *answerCache) put(id, key string, gz []byte) {
	if ac == nil || int64(len(gz)+len(key)) > ac.budget/16 {
		return
	}
	a, _, err := ac.c.Get(context.Background(), id, func(context.Context) (*answers, error) {
		return &answers{m: map[string][]byte{}}, nil
	})
	if err != nil {
		return
	}
	a.mu.Lock()
	if _, ok := a.m[key]; !ok && len(a.m) < maxProfileAnswers {
		a.m[key] = gz
		a.bytes.Add(int64(len(gz) + len(key) + answerOverhead))
	}
	a.mu.Unlock()
}

// drop forgets profile id's answers.
func (ac *answerCache) drop(id string) {
	if ac != nil {
		ac.c.Remove(id)
	}
}

// bytes returns the bytes of the answers kept, as last measured.
func (ac *answerCache) size() int64 {
	if ac == nil {
		return 0
	}
	return ac.c.Bytes()
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, h := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(h, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// writeAnswer writes gz, a gzip-compressed JSON answer, as the 200
// response: as is to a client that takes gzip, decompressed to another.
func (s *Server) writeAnswer(w http.ResponseWriter, r *http.Request, gz []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		w.Write(gz)
		return
	}
	w.WriteHeader(http.StatusOK)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err == nil {
		_, err = io.Copy(w, zr)
	}
	if err != nil {
		s.log.Debug("write response", "err", err)
	}
}

// answerJSON writes v as the JSON answer that s.json would, keeping it
// compressed in the answer cache under profile id and key.
func (s *Server) answerJSON(w http.ResponseWriter, r *http.Request, id, key string, v any) {
	if s.answers == nil {
		s.json(w, http.StatusOK, v)
		return
	}
	_, gz, err := gzipJSON(v)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.answers.put(id, key, gz)
	s.writeAnswer(w, r, gz)
}

// gzipJSON returns v as JSON, as s.json writes it, and that JSON
// compressed with gzip at gzipLevel, as the answer cache keeps it.
func gzipJSON(v any) (plain, gz []byte, err error) {
	var pb, gb bytes.Buffer
	if err := json.NewEncoder(&pb).Encode(v); err != nil {
		return nil, nil, err
	}
	zw, _ := gzip.NewWriterLevel(&gb, gzipLevel)
	zw.Write(pb.Bytes())
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return pb.Bytes(), gb.Bytes(), nil
}

// fleetAnswers keeps the fleet's answers (its map, searches and
// contrasts) in the answer cache, by request path and query, while what
// they read is unchanged: until the store changes it (Changes: a capture
// imported or deleted, labels set, markers added) and for at most
// fleetAnswerAge, which bounds how long a change made by another process
// (a second server on the same database, `subsecond import` beside
// `serve`) goes unseen. The fleet's questions are asked again and again
// of the same data (the fleet page reloaded, a dashboard polling) and
// each reads the index of every capture in its range. A nil
// *fleetAnswers keeps nothing.
type fleetAnswers struct {
	ac      *answerCache
	changes func() uint64
	mu      sync.Mutex
	id      string // the current epoch's id in ac
}

// fleetAnswerAge is the most time a fleet answer is kept.
var fleetAnswerAge = 5 * time.Second

// newFleetAnswers returns the fleet's answers in ac, unless ac keeps
// nothing or src does not count its changes.
func newFleetAnswers(ac *answerCache, src any) *fleetAnswers {
	c, ok := src.(interface{ Changes() uint64 })
	if ac == nil || !ok {
		return nil
	}
	return &fleetAnswers{ac: ac, changes: c.Changes}
}

// epoch returns the id, in the answer cache, of the answers computed now,
// dropping those of the epoch before.
func (f *fleetAnswers) epoch() string {
	id := fmt.Sprintf("\x00fleet %d %d", f.changes(), time.Now().UnixNano()/int64(fleetAnswerAge))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.id != id {
		if f.id != "" {
			f.ac.drop(f.id)
		}
		f.id = id
	}
	return id
}

// fleetKey is the key of r's answer: its path and its query, sorted.
func fleetKey(r *http.Request) string { return r.URL.Path + "?" + r.URL.Query().Encode() }

// cachedFleet writes the kept answer to r and reports whether there was
// one.
func (s *Server) cachedFleet(w http.ResponseWriter, r *http.Request) bool {
	if s.fleetAnswers == nil {
		return false
	}
	gz, ok := s.answers.get(s.fleetAnswers.epoch(), fleetKey(r))
	if ok {
		s.writeAnswer(w, r, gz)
	}
	return ok
}

// fleetJSON is heavyJSON for a fleet answer, which it keeps when nothing
// changed while it was computed.
func (s *Server) fleetJSON(w http.ResponseWriter, r *http.Request, compute func(ctx context.Context) (any, error)) {
	if s.fleetAnswers == nil {
		s.heavyJSON(w, r, compute)
		return
	}
	id := s.fleetAnswers.epoch()
	s.heavyJSON(w, r, func(ctx context.Context) (any, error) {
		v, err := compute(ctx)
		if err != nil {
			return nil, err
		}
		plain, gz, err := gzipJSON(v)
		if err != nil {
			return nil, err
		}
		if s.fleetAnswers.epoch() == id {
			s.answers.put(id, fleetKey(r), gz)
		}
		return json.RawMessage(plain), nil
	})
}
