package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// TestMetricsOff checks that without Config.Metrics there is no /metrics.
func TestMetricsOff(t *testing.T) {
	e := newEnv(t, Config{})
	if res, _ := e.do("GET", "/metrics", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics with metrics off: %d; want 404", res.StatusCode)
	}
}

// TestMetricsToken checks that a metrics token is needed, as a bearer
// token, to read the metrics, and that the upload token is not it.
func TestMetricsToken(t *testing.T) {
	e := newEnv(t, Config{Metrics: true, MetricsToken: "scrape-secret", Token: "upload-secret"})
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer upload-secret", http.StatusUnauthorized},
		{"Basic scrape-secret", http.StatusUnauthorized},
		{"Bearer scrape-secret", http.StatusOK},
	} {
		var hdr []string
		if tc.auth != "" {
			hdr = []string{"Authorization", tc.auth}
		}
		res, body := e.do("GET", "/metrics", nil, hdr...)
		if res.StatusCode != tc.want {
			t.Errorf("GET /metrics with Authorization %q: %d; want %d", tc.auth, res.StatusCode, tc.want)
		}
		if res.StatusCode == http.StatusOK && !bytes.Contains(body, []byte("subsecond_http_requests_total")) {
			t.Errorf("GET /metrics with the token: no subsecond_http_requests_total in\n%s", body)
		}
		if res.StatusCode != http.StatusOK && bytes.Contains(body, []byte("subsecond_")) {
			t.Errorf("GET /metrics with Authorization %q: %d, yet the body holds metrics", tc.auth, res.StatusCode)
		}
	}
}

// TestMetrics checks the series the metrics hold after an upload, a few
// reads and a read that the database fails.
func TestMetrics(t *testing.T) {
	e := newEnv(t, Config{Metrics: true, MaxHeavy: 3})
	text := perfText(1, 20, 1)
	p := e.upload(text, "small")
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/profiles", http.StatusOK},
		{"/api/profiles/" + p.ID + "/heatmap", http.StatusOK},
		{"/api/profiles/" + p.ID + "/heatmap", http.StatusOK},
		{"/api/profiles/nosuchprofile", http.StatusNotFound},
		{"/no/such/page", http.StatusNotFound},
	} {
		if res, body := e.do("GET", tc.path, nil); res.StatusCode != tc.want {
			t.Fatalf("GET %s: %d; want %d\n%s", tc.path, res.StatusCode, tc.want, body)
		}
	}
	// A database that has gone away: the list fails with 500.
	e.st.Close()
	if res, _ := e.do("GET", "/api/profiles", nil); res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("GET /api/profiles with the database closed: %d; want 500", res.StatusCode)
	}

	mf := scrape(t, e)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"subsecond_http_requests_total", map[string]string{"method": "POST", "route": "/api/profiles", "status": "2xx"}, 1},
		{"subsecond_http_requests_total", map[string]string{"method": "GET", "route": "/api/profiles", "status": "2xx"}, 1},
		{"subsecond_http_requests_total", map[string]string{"method": "GET", "route": "/api/profiles", "status": "5xx"}, 1},
		{"subsecond_http_requests_total", map[string]string{"method": "GET", "route": "/api/profiles/{id}/heatmap", "status": "2xx"}, 2},
		{"subsecond_http_requests_total", map[string]string{"method": "GET", "route": "/api/profiles/{id}", "status": "4xx"}, 1},
		{"subsecond_http_requests_total", map[string]string{"method": "GET", "route": "other", "status": "4xx"}, 1},
		{"subsecond_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/api/profiles/{id}/heatmap"}, 2},
		{"subsecond_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/profiles"}, 1},
		{"subsecond_imports_total", map[string]string{"outcome": "created"}, 1},
		{"subsecond_import_bytes_total", map[string]string{"outcome": "created"}, float64(len(text))},
		{"subsecond_import_samples_total", nil, float64(p.Samples)},
		{"subsecond_import_duration_seconds", nil, 1},
		// The second heatmap is the answer kept from the first.
		{"subsecond_capture_cache_hits_total", nil, 1},
		{"subsecond_answer_cache_hits_total", nil, 1},
		{"subsecond_answer_cache_misses_total", nil, 1},
		{"subsecond_answer_cache_budget_bytes", nil, DefaultAnswerCacheSize},
		{"subsecond_capture_cache_misses_total", nil, 0},
		{"subsecond_capture_cache_budget_bytes", nil, 512 << 20},
		{"subsecond_heavy_request_slots", nil, 3},
		{"subsecond_heavy_requests_running", nil, 0},
		{"subsecond_heavy_requests_waiting", nil, 0},
		{"subsecond_heavy_requests_total", nil, 1}, // the first heatmap
		{"subsecond_database_errors_total", nil, 1},
	} {
		if got := value(t, mf, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %g; want %g", tc.name, tc.labels, got, tc.want)
		}
	}
	if got := value(t, mf, "subsecond_heavy_held_seconds_total", nil); got <= 0 {
		t.Errorf("subsecond_heavy_held_seconds_total = %g; want the time the heatmap held its slot", got)
	}
	if got := value(t, mf, "subsecond_answer_cache_bytes", nil); got <= 0 {
		t.Errorf("subsecond_answer_cache_bytes = %g; want the bytes of the heatmap kept", got)
	}
	if got := value(t, mf, "subsecond_capture_cache_bytes", nil); got <= 0 {
		t.Errorf("subsecond_capture_cache_bytes = %g; want the bytes of the capture kept", got)
	}
	// Raw paths never become labels: only route patterns do.
	for _, m := range mf["subsecond_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && (strings.Contains(l.GetValue(), p.ID) || strings.Contains(l.GetValue(), "nosuch")) {
				t.Errorf("route label %q holds a raw path", l.GetValue())
			}
		}
	}
}

// TestMetricsApart checks that two servers in one process count apart, on
// registries of their own.
func TestMetricsApart(t *testing.T) {
	a, b := newEnv(t, Config{Metrics: true}), newEnv(t, Config{Metrics: true})
	a.do("GET", "/api/profiles", nil)
	b.do("GET", "/no/such/page", nil)
	labels := map[string]string{"method": "GET", "route": "/api/profiles", "status": "2xx"}
	if got := value(t, scrape(t, a), "subsecond_http_requests_total", labels); got != 1 {
		t.Errorf("first server's count = %g; want 1", got)
	}
	if got := value(t, scrape(t, b), "subsecond_http_requests_total", labels); got != 0 {
		t.Errorf("second server's count = %g; want 0", got)
	}
}

// scrape reads e's metrics and parses their text exposition.
func scrape(t *testing.T, e *testEnv) map[string]*dto.MetricFamily {
	t.Helper()
	res, body := e.do("GET", "/metrics", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", res.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return mf
}

// value returns the value of the series of family name whose labels
// include labels: a counter's or gauge's value, a histogram's count; 0
// when there is no such series.
func value(t *testing.T, mf map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f, ok := mf[name]
	if !ok {
		t.Errorf("no metric %s", name)
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// failingIndex is a backend whose first fleet index write fails.
type failingIndex struct {
	store.Backend
	failed atomic.Bool
}

func (b *failingIndex) WriteIndex(ctx context.Context, id string, ix *store.Index) (bool, error) {
	if !b.failed.Swap(true) {
		return false, errors.New("disk on fire")
	}
	return b.Backend.WriteIndex(ctx, id, ix)
}

// TestIndexMetrics: the fleet index writes that follow uploads are
// counted, a failed one too, and none is left pending once the fleet's
// views have read the index (which writes the failed one again).
func TestIndexMetrics(t *testing.T) {
	b, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(&failingIndex{Backend: b}, store.Options{})
	t.Cleanup(func() { st.Close() })
	e := newEnvOn(t, st, Config{Metrics: true, Fleet: st})
	for i := range 2 {
		text := strings.Replace(perfText(2, 100, i+1), "# hostname", "# captured on    : Mon Nov 30 17:11:08 2026\n# hostname", 1)
		e.upload(text, fmt.Sprintf("wall-%d", i))
	}
	if res, body := e.do("GET", "/api/fleet", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/fleet: %d\n%s", res.StatusCode, body)
	}
	mf := scrape(t, e)
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"subsecond_fleet_index_pending", 0},
		{"subsecond_fleet_index_writes_total", 1},
		{"subsecond_fleet_index_failures_total", 1},
	} {
		if got := value(t, mf, tc.name, nil); got != tc.want {
			t.Errorf("%s = %g; want %g", tc.name, got, tc.want)
		}
	}
	ids, err := b.Unindexed(context.Background())
	if err != nil || len(ids) != 0 {
		t.Errorf("captures left without an index after a fleet view: %v, %v", ids, err)
	}
}
