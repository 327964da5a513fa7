package server

import (
	"bytes"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
)

// countingEngine counts the whole-profile views it computes.
type countingEngine struct {
	engine.Engine
	n atomic.Int64
}

func (c *countingEngine) Heatmap(cp *subsecond.Capture, q *Query) (any, error) {
	c.n.Add(1)
	return c.Engine.Heatmap(cp, q)
}

func (c *countingEngine) Cores(cp *subsecond.Capture, q *Query) (any, error) {
	c.n.Add(1)
	return c.Engine.Cores(cp, q)
}

func (c *countingEngine) Hotspots(cp *subsecond.Capture, q *Query) (*subsecond.HotspotReport, error) {
	c.n.Add(1)
	return c.Engine.Hotspots(cp, q)
}

// TestAnswerCache: a heatmap, cores map or hot-spot list asked again, or
// asked with equivalent parameters, is the answer computed the first time,
// byte for byte, gzip-compressed or not as the client takes it, and equal
// to the answer of a server that keeps none; the engine computes each view
// once. A rename or a delete drops the profile's answers: a deleted
// profile's views are 404, not the answers kept.
func TestAnswerCache(t *testing.T) {
	ce := &countingEngine{}
	e := newEnv(t, Config{Engine: ce})
	p := e.upload(perfText(2, 100, 3), "web-1")
	off := newEnv(t, Config{AnswerCacheSize: -1})
	ref := off.upload(perfText(2, 100, 3), "web-1")

	views := []struct {
		a, b     string // a request, and an equivalent one
		computed int64  // by the engine
	}{
		{"/heatmap?col=0.5", "/heatmap?col=500ms&rows=50", 1},
		{"/cpus?bucket=0.2", "/cpus?bucket=200ms", 1},
		{"/hotspots?bucket=0.2", "/hotspots?bucket=0.2&threshold=0.7", 1},
		// Another answer, of the report kept by the hot-spot cache.
		{"/hotspots?bucket=0.2&limit=1", "/hotspots?limit=1&bucket=0.2", 0},
	}
	for _, v := range views {
		_, want := off.do("GET", "/api/profiles/"+ref.ID+v.a, nil)
		want = bytes.ReplaceAll(want, []byte(ref.ID), []byte(p.ID))
		before := ce.n.Load()
		for i, path := range []string{v.a, v.b, v.a, v.b} {
			hdr := []string{"Accept-Encoding", "identity"}
			if i%2 == 1 {
				hdr = []string{"Accept-Encoding", "gzip"}
			}
			res, got := e.do("GET", "/api/profiles/"+p.ID+path, nil, hdr...)
			if enc := res.Header.Get("Content-Encoding"); (enc == "gzip") != (i%2 == 1) {
				t.Errorf("GET %s with Accept-Encoding %q: Content-Encoding %q", path, hdr, enc)
			}
			if i%2 == 1 {
				got = gunzip(t, got)
			}
			if res.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
				t.Errorf("GET %s (%d) = %d %.200s; want 200 and the answer of a server keeping none %.200s", path, i, res.StatusCode, got, want)
			}
		}
		if n := ce.n.Load() - before; n != v.computed {
			t.Errorf("%s and %s, twice each: computed %d times; want %d", v.a, v.b, n, v.computed)
		}
	}
	if h, m := e.s.answers.hits.Load(), e.s.answers.misses.Load(); h != 12 || m != 4 {
		t.Errorf("answer cache: %d hits, %d misses; want 12 and 4", h, m)
	}
	if e.s.answers.size() <= 0 {
		t.Errorf("answer cache holds %d bytes; want the answers kept", e.s.answers.size())
	}

	res, b := e.do("PATCH", "/api/profiles/"+p.ID, strings.NewReader(`{"name":"web-2"}`), "Content-Type", "application/json")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d %s", res.StatusCode, b)
	}
	if e.s.answers.size() != 0 {
		t.Errorf("after a rename, the answer cache holds %d bytes; want the profile's answers dropped", e.s.answers.size())
	}
	before := ce.n.Load()
	if res, b := e.do("GET", "/api/profiles/"+p.ID+"/heatmap?col=0.5", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("heatmap after a rename: %d %s", res.StatusCode, b)
	}
	if ce.n.Load() != before+1 {
		t.Errorf("the heatmap after a rename was not computed anew")
	}
	if res, b := e.do("DELETE", "/api/profiles/"+p.ID, nil); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.StatusCode, b)
	}
	if e.s.answers.size() != 0 {
		t.Errorf("after a delete, the answer cache holds %d bytes; want the profile's answers dropped", e.s.answers.size())
	}
	for _, v := range views {
		if res, _ := e.do("GET", "/api/profiles/"+p.ID+v.a, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s of a deleted profile = %d; want 404", v.a, res.StatusCode)
		}
	}
}

// TestAnswerCacheBudget: the answer cache keeps within its budget, the
// least recently used profile's answers out first.
func TestAnswerCacheBudget(t *testing.T) {
	ac := newAnswerCache(64 << 10)
	big := bytes.Repeat([]byte{1}, 3<<10)
	for i := range 100 {
		ac.put(string(rune('a'+i%26))+strings.Repeat("x", i/26), "k", big)
		if ac.size() > 64<<10+4<<10 {
			t.Fatalf("after %d answers the cache holds %d bytes; want about its budget, %d", i+1, ac.size(), 64<<10)
		}
	}
	if _, ok := ac.get("a", "k"); ok {
		t.Errorf("the first profile's answer is still kept after 100 others")
	}
	if _, ok := ac.get("v"+strings.Repeat("x", 3), "k"); !ok {
		t.Errorf("the last profile's answer is not kept")
	}
	ac.put("huge", "k", make([]byte, 8<<10))
	if _, ok := ac.get("huge", "k"); ok {
		t.Errorf("an answer over a sixteenth of the budget is kept")
	}
}
