package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/engine"
	"github.com/subsecond/subsecond/internal/capturefile"
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

// BenchmarkUploadReal measures what bench/flamescope sets beside
// FlameScope's first pass (issue 24): a real capture's upload (POST
// /api/profiles, its text streamed) through the server's real handler on
// loopback into a database of its own, then its first heatmap. Each
// iteration opens a new SQLite database and server outside the timer, as
// the first upload of a fresh `subsecond serve` (whose compressors are
// warm). It reports the medians: upload-ms, heatmap-ms and their sum,
// first-ms. The captures: the repository's real 5 s and 12 s ones and the
// files named in $SUBSECOND_BENCH_REAL (plain or gzip text).
//
//	go test -run '^$' -bench UploadReal -benchtime 20x ./server
func BenchmarkUploadReal(b *testing.B) {
	paths := append([]string{filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz"),
		filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz")}, strings.Fields(os.Getenv("SUBSECOND_BENCH_REAL"))...)
	store.Warm()
	ctx := context.Background()
	for _, path := range paths {
		text, err := capturefile.Text(path)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".txt"), ".perf")
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var up, heat, first []time.Duration
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			for b.Loop() {
				b.StopTimer()
				st, err := sqlite.OpenStore(ctx, filepath.Join(b.TempDir(), "up.db"), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(New(Config{Store: sqliteStore{st}, Engine: engine.Engine{}}).Handler())
				b.StartTimer()
				t := time.Now()
				req, _ := http.NewRequest("POST", srv.URL+"/api/profiles?name="+name, bytes.NewReader(text))
				req.Header.Set("Accept", "application/json")
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var c created
				err = json.NewDecoder(res.Body).Decode(&c)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusCreated || c.Profile == nil {
					b.Fatalf("upload of %s: %d %v", name, res.StatusCode, err)
				}
				u := time.Since(t)
				res, err = client.Get(srv.URL + "/api/profiles/" + c.Profile.ID + "/heatmap?rows=50")
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("first heatmap of %s: %d %v", name, res.StatusCode, err)
				}
				all := time.Since(t)
				up, heat, first = append(up, u), append(heat, all-u), append(first, all)
				b.StopTimer()
				srv.Close()
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
			b.ReportMetric(ms(median(up)), "upload-ms")
			b.ReportMetric(ms(median(heat)), "heatmap-ms")
			b.ReportMetric(ms(median(first)), "first-ms")
		})
	}
}
