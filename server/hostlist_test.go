package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/internal/pgtest"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
	"github.com/subsecond/subsecond/store/sqlite"
	"github.com/subsecond/subsecond/timeline"
)

// TestHostListPages: the host list, API and page, comes a page at a time
// (per_page, cursor: the last host of the page before), by name, each
// page naming the next, each host with its labels; pages put together
// give what the list totalled over every profile gave (timeline.Hosts),
// on SQLite and on PostgreSQL. Before, every answer read every stored
// profile: 42-186 ms at 3,000 profiles, growing with the archive.
func TestHostListPages(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var st *store.Store
			var err error
			if backend == "sqlite" {
				st, err = sqlite.OpenStore(ctx, t.TempDir()+"/test.db", store.Options{})
			} else {
				st, err = postgres.OpenStore(ctx, pgtest.Schema(t), store.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			e := newEnvOn(t, st, Config{})
			e.s.fleet = st
			// Five hosts, one named as no path may hold raw, each with a
			// capture on the boot clock (no wall clock) but the last.
			hosts := []string{"db-1", "db-2", "rack;7", "web-1", "web-2"}
			for i, h := range hosts {
				n := &nightgen.Night{Host: h, CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, i, 0, 0, time.UTC),
					Captures: 2, Length: 20 * time.Second, Unanchored: 0, Boot: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Seed: uint64(i)}
				if i == len(hosts)-1 {
					n.Unanchored = -1
				}
				for c := range n.Captures {
					var b bytes.Buffer
					if err := n.Write(&b, c, nil); err != nil {
						t.Fatal(err)
					}
					res, body := e.do("POST", "/api/profiles?host="+url.QueryEscape(h), &b)
					if res.StatusCode != http.StatusCreated {
						t.Fatalf("upload %s %d = %d %s", h, c, res.StatusCode, body)
					}
				}
				if err := st.SetHostLabels(ctx, h, []subsecond.Label{{Key: "zone", Value: h[:1]}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			list, err := st.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			labels, err := st.HostLabels(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := timeline.Hosts(list)
			timeline.Labelled(want, labels)
			if len(want) != len(hosts) || want[0].Unanchored != 1 || want[4].Unanchored != 0 || want[0].End == 0 {
				t.Fatalf("timeline.Hosts = %+v; want 5 hosts on the wall clock, each but the last with one capture without", want)
			}

			var got []timeline.Host
			next, pages := "/api/hosts?per_page=2", 0
			for ; next != ""; pages++ {
				res, b := e.do("GET", next, nil)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s = %d %s", next, res.StatusCode, b)
				}
				var p timeline.HostList
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatal(err)
				}
				got = append(got, p.Hosts...)
				if wantNext := pages < 2; (p.Next != "") != wantNext || (p.NextCursor != "") != wantNext {
					t.Errorf("page %d: next %q, next_cursor %q; want them on pages 0 and 1 alone", pages, p.Next, p.NextCursor)
				}
				if p.NextCursor != "" && (p.NextCursor != p.Hosts[len(p.Hosts)-1].Host || !strings.Contains(p.Next, "cursor="+url.QueryEscape(p.NextCursor))) {
					t.Errorf("page %d: next %q, next_cursor %q; want the page's last host, escaped in next", pages, p.Next, p.NextCursor)
				}
				next = p.Next
			}
			if pages != 3 || !reflect.DeepEqual(got, want) {
				t.Errorf("%d pages:\n%+v\nwant 3:\n%+v", pages, got, want)
			}

			res, b := e.do("GET", "/api/hosts?per_page=0", nil)
			wantError(t, res, b, http.StatusBadRequest, "per_page: 0 is outside 1 to 1000")
			var last timeline.HostList
			e.getJSON("/api/hosts?cursor=web-2", &last)
			if len(last.Hosts) != 0 || last.Hosts == nil || last.Next != "" {
				t.Errorf("GET /api/hosts?cursor=web-2 = %+v; want an empty list, no next", last)
			}

			// The page links to the next, and the next back to the first.
			_, b = e.do("GET", "/hosts?per_page=3", nil)
			if n := strings.Count(string(b), "<tr data-host="); n != 3 || !strings.Contains(string(b), `rel="next"`) || !strings.Contains(string(b), "zone=d") {
				t.Fatalf("/hosts?per_page=3 lists %d hosts, next link %v; want 3 with their labels and a link to the next page", n, strings.Contains(string(b), `rel="next"`))
			}
			at := strings.Index(string(b), `href="/hosts?`)
			end := strings.Index(string(b)[at+6:], `"`)
			href := strings.ReplaceAll(string(b)[at+6:at+6+end], "&amp;", "&")
			_, b = e.do("GET", href, nil)
			if n := strings.Count(string(b), "<tr data-host="); n != 2 || strings.Contains(string(b), `rel="next"`) || !strings.Contains(string(b), "First page") ||
				!strings.Contains(string(b), `data-host="web-1"`) {
				t.Errorf("GET %s lists %d hosts; want web-1 and web-2, no next link and a link to the first page", href, n)
			}
		})
	}
}

// archiveCounter is the server's store, counting the reads that cost
// what the whole archive holds (List) and the hosts whose profiles were
// read.
type archiveCounter struct {
	sqliteStore
	mu    sync.Mutex
	lists int
	hosts []string
}

func (c *archiveCounter) List(ctx context.Context) ([]subsecond.Profile, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.sqliteStore.List(ctx)
}

func (c *archiveCounter) HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error) {
	c.mu.Lock()
	c.hosts = append(c.hosts, host)
	c.mu.Unlock()
	return c.sqliteStore.HostProfiles(ctx, host)
}

// TestHostViewsReadTheHost: a host's page and its API (captures,
// sessions, timeline, hot spots, comms) read that host's profiles alone,
// by a query of the host's rows, and never the whole archive's list.
// Before, each of them read every stored profile (store.List) and kept
// those of the host: their cost grew with every other host's captures.
func TestHostViewsReadTheHost(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, t.TempDir()+"/test.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	counter := &archiveCounter{sqliteStore: sqliteStore{st}}
	e := newEnvOn(t, st, Config{})
	s := New(Config{Store: counter, Engine: e.s.engine, Night: sqliteNight{st}, State: st})
	s.fleet = st
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e.srv = srv

	for i, h := range []string{"db-1", "rack;7", "web-1"} {
		n := &nightgen.Night{Host: h, CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, i, 0, 0, time.UTC),
			Captures: 2 + i, Length: 20 * time.Second, Boot: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Seed: uint64(i)}
		for c := range n.Captures {
			var b bytes.Buffer
			if err := n.Write(&b, c, nil); err != nil {
				t.Fatal(err)
			}
			if res, body := e.do("POST", "/api/profiles?host="+url.QueryEscape(h), &b); res.StatusCode != http.StatusCreated {
				t.Fatalf("upload %s %d = %d %s", h, c, res.StatusCode, body)
			}
		}
	}
	if err := st.SetHostLabels(ctx, "rack;7", []subsecond.Label{{Key: "zone", Value: "r"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHostLabels(ctx, "web-1", []subsecond.Label{{Key: "zone", Value: "w"}}, nil); err != nil {
		t.Fatal(err)
	}
	counter.lists, counter.hosts = 0, nil

	page := "/hosts/" + url.PathEscape("rack;7")
	res, b := e.do("GET", page, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", page, res.StatusCode, b)
	}
	if !strings.Contains(string(b), "zone=r") || strings.Contains(string(b), "zone=w") {
		t.Errorf("GET %s: want the host's label zone=r and no other host's", page)
	}
	var caps timeline.CaptureList
	e.getJSON("/api/hosts/"+url.PathEscape("rack;7")+"/captures", &caps)
	if len(caps.Captures) != 2 || caps.Unanchored != 1 {
		t.Errorf("captures of rack;7: %d placed, %d without a wall clock; want its 3: 2 and 1 (nightgen's first on the boot clock)", len(caps.Captures), caps.Unanchored)
	}
	var ss timeline.SessionList
	e.getJSON("/api/hosts/"+url.PathEscape("rack;7")+"/sessions", &ss)
	if len(ss.Sessions) != 1 || ss.Sessions[0].Captures != 2 {
		t.Errorf("sessions of rack;7: %+v; want one of its 2 placed captures", ss.Sessions)
	}
	for _, api := range []string{"timeline", "hotspots", "comms?comm=swapper"} {
		path := "/api/hosts/" + url.PathEscape("rack;7") + "/" + api
		if res, b := e.do("GET", path, nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, res.StatusCode, b)
		}
	}
	if res, b := e.do("GET", "/hosts/nobody", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /hosts/nobody = %d %s; want 404", res.StatusCode, b)
	}
	if counter.lists != 0 {
		t.Errorf("the host's page and API read the whole archive's list %d times; want none", counter.lists)
	}
	for _, h := range counter.hosts {
		if h != "rack;7" && h != "nobody" {
			t.Errorf("read the profiles of host %q for rack;7's views", h)
		}
	}
	if len(counter.hosts) == 0 {
		t.Error("read no host's profiles: the views answered from nothing")
	}
}
