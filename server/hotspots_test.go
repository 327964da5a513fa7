package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
)

// gatedEngine holds hot spots back until release is closed and counts how
// often they are computed.
type gatedEngine struct {
	engine.Engine
	release chan struct{}
	calls   *atomic.Int32
	spots   int // when > 0, report this many copies of the first spot
}

func (g gatedEngine) Hotspots(c *subsecond.Capture, q *Query) (*subsecond.HotspotReport, error) {
	g.calls.Add(1)
	<-g.release
	rep, err := g.Engine.Hotspots(c, q)
	if err != nil || g.spots == 0 || len(rep.Spots) == 0 {
		return rep, err
	}
	many := make([]subsecond.Hotspot, g.spots)
	for i := range many {
		many[i] = rep.Spots[0]
	}
	rep.Spots, rep.Found = many, g.spots
	return rep, nil
}

func TestHotspotsPending(t *testing.T) {
	eng := gatedEngine{release: make(chan struct{}), calls: new(atomic.Int32)}
	e := newEnv(t, Config{Engine: eng})
	p := e.upload(perfText(2, 100, 3), "x")

	// The page does not wait for slow hot spots: it says they are coming.
	res, b := e.do("GET", "/p/"+p.ID+"?comm=kubelet", nil)
	if res.StatusCode != 200 || !strings.Contains(string(b), `data-testid="hotspots" data-pending`) ||
		!strings.Contains(string(b), `data-testid="hotspots-pending"`) {
		t.Fatalf("page with slow hot spots = %d; want the list marked pending:\n%s", res.StatusCode, b)
	}
	// The API waits for the same computation rather than starting another.
	close(eng.release)
	res, b = e.do("GET", "/api/profiles/"+p.ID+"/hotspots?comm=kubelet", nil)
	var got subsecond.HotspotReport
	if err := json.Unmarshal(b, &got); err != nil || res.StatusCode != 200 || got.Found != 1 || len(got.Spots) != 1 || got.Spots[0].Comm != "kubelet" {
		t.Fatalf("hot spots = %d %s; want kubelet's one episode", res.StatusCode, b)
	}
	// Now the page has them at once, from the same computation.
	_, b = e.do("GET", "/p/"+p.ID+"?comm=kubelet", nil)
	if strings.Contains(string(b), "data-pending") || !strings.Contains(string(b), `<span class="comm">kubelet</span>`) {
		t.Errorf("second page view does not list the computed hot spot:\n%s", b)
	}
	if n := eng.calls.Load(); n != 1 {
		t.Errorf("hot spots computed %d times; want once for the same profile and filters", n)
	}
	// Other filters are another computation.
	e.do("GET", "/api/profiles/"+p.ID+"/hotspots?comm=web", nil)
	if n := eng.calls.Load(); n != 2 {
		t.Errorf("hot spots computed %d times after a second filter; want 2", n)
	}
}

// TestHotspotsPageLarge: the page of a capture above the page's size for
// waiting does not compute its hot spots, so that they never hold back the
// heatmaps its script draws; it marks the list pending for the script, and
// lists it once the API has computed it.
func TestHotspotsPageLarge(t *testing.T) {
	eng := gatedEngine{release: make(chan struct{}), calls: new(atomic.Int32)}
	e := newEnv(t, Config{Engine: eng})
	p := e.upload(perfText(2, 100, 3), "x")
	e.server().pageHotSamples = p.Samples - 1

	res, b := e.do("GET", "/p/"+p.ID+"?comm=kubelet", nil)
	if res.StatusCode != 200 || !strings.Contains(string(b), `data-testid="hotspots" data-pending`) {
		t.Fatalf("page of a large capture = %d; want the list marked pending:\n%s", res.StatusCode, b)
	}
	if n := eng.calls.Load(); n != 0 {
		t.Errorf("the page of a large capture computed hot spots %d times; want none, left to its script", n)
	}
	close(eng.release)
	e.do("GET", "/api/profiles/"+p.ID+"/hotspots?comm=kubelet", nil)
	_, b = e.do("GET", "/p/"+p.ID+"?comm=kubelet", nil)
	if strings.Contains(string(b), "data-pending") || !strings.Contains(string(b), `<span class="comm">kubelet</span>`) {
		t.Errorf("page of a large capture after the API computed its hot spots does not list them:\n%s", b)
	}
	if n := eng.calls.Load(); n != 1 {
		t.Errorf("hot spots computed %d times; want once", n)
	}
}

func TestHotspotsLimit(t *testing.T) {
	eng := gatedEngine{release: make(chan struct{}), calls: new(atomic.Int32), spots: 250}
	close(eng.release)
	e := newEnv(t, Config{Engine: eng})
	p := e.upload(perfText(2, 100, 3), "x")

	for _, tc := range []struct {
		query     string
		want, all int
	}{{"", 50, 250}, {"?limit=7", 7, 250}, {"?limit=1000", 250, 250}, {"?limit=0", 250, 250}} {
		res, b := e.do("GET", "/api/profiles/"+p.ID+"/hotspots"+tc.query, nil)
		var got subsecond.HotspotReport
		if err := json.Unmarshal(b, &got); err != nil || res.StatusCode != 200 || len(got.Spots) != tc.want || got.Found != tc.all {
			t.Errorf("hotspots%s = %d, %d listed of %d; want %d of %d", tc.query, res.StatusCode, len(got.Spots), got.Found, tc.want, tc.all)
		}
	}
	res, b := e.do("GET", "/api/profiles/"+p.ID+"/hotspots?limit=-1", nil)
	wantError(t, res, b, http.StatusBadRequest, "limit")

	_, page := e.do("GET", "/p/"+p.ID, nil)
	if n := strings.Count(string(page), `<span class="busy">`); n != pageHotspots {
		t.Errorf("profile page lists %d hot spots; want the first %d", n, pageHotspots)
	}
	wantMarkup(t, "profile", page, `data-testid="hotspots-more"`, `…and 230 more`, `/api/profiles/`+p.ID+`/hotspots?limit=250`)
}

// TestHotCacheBudget keeps hot-spot lists of 300 KB each in a cache of
// 1 MB: the oldest go as new ones are kept, the newest stays even when it
// alone is over the budget, and what is kept is counted. Bounded only by
// their number (32), the lists of a soak's profiles held 76 MB.
func TestHotCacheBudget(t *testing.T) {
	hc := &hotCache{budget: 1 << 20}
	report := func(kb int) *subsecond.HotspotReport {
		spots := make([]subsecond.Hotspot, kb)
		for i := range spots {
			spots[i].Stack = strings.Repeat("x", 1000) // a deep stack, joined
		}
		return &subsecond.HotspotReport{Spots: spots}
	}
	compute := func(kb int) func(context.Context) (*subsecond.HotspotReport, error) {
		return func(context.Context) (*subsecond.HotspotReport, error) { return report(kb), nil }
	}
	kept := func() (keys []string, bytes int64) {
		hc.mu.Lock()
		defer hc.mu.Unlock()
		for _, k := range hc.order {
			if e := hc.m[k]; e != nil && isDone(e) {
				keys = append(keys, k)
				bytes += e.rep.Bytes()
			}
		}
		return keys, bytes
	}
	for i := range 6 {
		e := hc.join(fmt.Sprint("p", i), compute(300))
		<-e.done
		hc.leave(e)
	}
	keys, bytes := kept()
	if bytes > 1<<20 || !slices.Equal(keys, []string{"p3", "p4", "p5"}) {
		t.Errorf("kept %v, %d bytes; want the newest three lists of 300 KB (within 1 MB)", keys, bytes)
	}
	if hc.bytes != bytes {
		t.Errorf("the cache counts %d bytes; its lists hold %d", hc.bytes, bytes)
	}
	e := hc.join("big", compute(2000))
	<-e.done
	hc.leave(e)
	if keys, bytes = kept(); !slices.Equal(keys, []string{"big"}) || hc.bytes != bytes {
		t.Errorf("after a 2 MB list: kept %v, counting %d bytes of %d; want the big one alone", keys, hc.bytes, bytes)
	}
	if !hc.computed("big") || hc.computed("p5") {
		t.Error("computed: want the big list kept and p5 dropped")
	}
}

// TestHotCacheFailureForgotten: a list whose computation failed leaves no
// trace, so that its key, asked again and kept, is counted and dropped
// once.
func TestHotCacheFailureForgotten(t *testing.T) {
	hc := &hotCache{budget: 1 << 20}
	fail := hc.join("p0", func(context.Context) (*subsecond.HotspotReport, error) { return nil, errors.New("no") })
	<-fail.done
	hc.leave(fail)
	for i := range 5 {
		e := hc.join(fmt.Sprint("p", i), func(context.Context) (*subsecond.HotspotReport, error) {
			return &subsecond.HotspotReport{Spots: make([]subsecond.Hotspot, 10)}, nil
		})
		<-e.done
		hc.leave(e)
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	var bytes int64
	for _, e := range hc.m {
		bytes += e.size
	}
	if len(hc.order) != len(hc.m) || hc.bytes != bytes || bytes > 1<<20 {
		t.Errorf("order %v for %d lists, counting %d bytes of %d; want each key once, within 1 MB", hc.order, len(hc.m), hc.bytes, bytes)
	}
}
