package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/subsecond/subsecond/engine"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// BenchmarkServe measures what a browser waits for on the production-scale
// incident (96 CPUs × 120 s × 49 Hz, about 565k samples) over real HTTP with
// a warm capture cache: the profile page (with its hot spots), the heatmap,
// the cores map, the hot spots, and flame graphs. Each case reports p50 and
// p95 latency in ms.
//
//	go test -run '^$' -bench Serve -benchtime 20x ./server
func BenchmarkServe(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, b.TempDir()+"/bench.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	pr, pw := io.Pipe()
	go func() {
		_, err := sampledata.Generate(pw, sampledata.DefaultConfig())
		pw.CloseWithError(err)
	}()
	start := time.Now()
	p, _, err := st.Import(ctx, pr, store.ImportOptions{Name: "incident"})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated and imported %d samples in %v", p.Samples, time.Since(start).Round(time.Millisecond))
	srv := httptest.NewServer(New(Config{Store: sqliteStore{st}, Engine: engine.Engine{}}).Handler())
	defer srv.Close()

	api := srv.URL + "/api/profiles/" + p.ID
	for _, bc := range []struct{ name, url string }{
		{"profile-page", srv.URL + "/p/" + p.ID},
		{"flame-page", srv.URL + "/p/" + p.ID + "/flame?start=40&end=50"},
		{"heatmap", api + "/heatmap"},
		{"heatmap-cpu39", api + "/heatmap?cpu=39"},
		{"cores", api + "/cpus"},
		{"hotspots", api + "/hotspots"},
		{"flamegraph-1s", api + "/flamegraph?start=40&end=41"},
		{"flamegraph-10s", api + "/flamegraph?start=40&end=50"},
		{"flamegraph-10s-cpu39", api + "/flamegraph?start=40&end=50&cpu=39"},
		{"flamegraph-all", api + "/flamegraph"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			get(b, bc.url) // warm the capture cache
			lat := make([]time.Duration, 0, b.N)
			var bytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				bytes = get(b, bc.url)
				lat = append(lat, time.Since(t))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*95)/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(bytes), "resp-bytes")
		})
	}
}

// get fetches url as a browser would (accepting gzip) and returns the size
// of the body as sent.
func get(b *testing.B, url string) int64 {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return n
}
