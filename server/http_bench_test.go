package server

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/subsecond/subsecond/engine"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// BenchmarkHTTPDeep measures what lies between the socket and the views'
// code (issue 24): the flame graph JSON of 1 s, 10 s and the whole of a
// real capture with deep stacks, and its first heatmap, through the
// server's real handler over a SQLite store holding the capture, warm. Each
// request is made twice: "handler" calls the handler in-process with a
// recorder (ns/op and B/op are the server's own), and "loopback" asks a
// loopback httptest.Server with a real http.Client, as curl does
// (no compression), timing the first byte (ttfb-ms, the median) and the
// whole answer (ns/op). bench/flame's in-process figures are the flame
// code's alone; the difference is the HTTP overhead.
//
// SUBSECOND_DEEP_CAPTURE names the capture (perf script text, .gz
// allowed); without it the committed 12 s real capture is used.
//
//	go test -run '^$' -bench HTTPDeep -benchmem -benchtime 200x ./server
func BenchmarkHTTPDeep(b *testing.B) {
	name := os.Getenv("SUBSECOND_DEEP_CAPTURE")
	if name == "" {
		name = filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz")
	}
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, b.TempDir()+"/bench.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p, _, err := st.Import(ctx, f, store.ImportOptions{Name: "deep"})
	if err != nil {
		b.Fatal(err)
	}
	h := New(Config{Store: sqliteStore{st}, Engine: engine.Engine{}}).Handler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	api := "/api/profiles/" + p.ID
	for _, bc := range []struct{ name, path string }{
		{"flame-1s", api + "/flamegraph?start=5&end=6"},
		{"flame-10s", api + "/flamegraph?start=1&end=11"},
		{"flame-whole", api + "/flamegraph"},
		{"heatmap", api + "/heatmap"},
	} {
		b.Run(bc.name+"/handler", func(b *testing.B) {
			serve := func() int {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", bc.path, nil)
				req.Host = "localhost"
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", bc.path, rec.Code, rec.Body)
				}
				return rec.Body.Len()
			}
			n := serve() // warm: the capture cache, the flame index
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
			b.ReportMetric(float64(n), "resp-bytes")
		})
		for _, enc := range []string{"identity", "gzip"} {
			b.Run(bc.name+"/loopback-"+enc, func(b *testing.B) {
				get := func() (time.Duration, int64) {
					req, _ := http.NewRequest("GET", srv.URL+bc.path, nil)
					req.Header.Set("Accept-Encoding", enc)
					t := time.Now()
					res, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					ttfb := time.Since(t)
					var body io.Reader = res.Body
					if res.Header.Get("Content-Encoding") == "gzip" {
						if body, err = gzip.NewReader(res.Body); err != nil {
							b.Fatal(err)
						}
					}
					n, err := io.Copy(io.Discard, body)
					res.Body.Close()
					if err != nil || res.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %d %v", bc.path, res.StatusCode, err)
					}
					return ttfb, n
				}
				_, n := get()
				var ttfb []time.Duration
				for b.Loop() {
					d, _ := get()
					ttfb = append(ttfb, d)
				}
				b.ReportMetric(float64(median(ttfb).Microseconds())/1e3, "ttfb-ms")
				b.ReportMetric(float64(n), "resp-bytes")
			})
		}
	}
}

// median returns the median of d, which it sorts.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
