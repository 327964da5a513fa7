package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/timeline"
)

// TestSeriesAPI posts a host's series as the recorder does and reads them
// back as lanes on the cores map's columns.
func TestSeriesAPI(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret"})
	n := importNightgen(t, e)
	start := n.CaptureStart(0)
	var pts []string
	for s := 1; s <= 60; s++ {
		v := 1.5
		if s > 10 && s <= 15 {
			v = 100
		}
		pts = append(pts, fmt.Sprintf(`{"t": %d, "v": %g}`, start.Add(time.Duration(s)*time.Second).UnixNano(), v))
	}
	body := `{"series": [{"name": "cpu.sys", "cpu": 3, "points": [` + strings.Join(pts, ",") + `]},
		{"name": "cgroups", "cpu": -1, "label": "memory", "points": [{"t": ` + fmt.Sprint(start.Add(time.Second).UnixNano()) + `, "v": 68680}]}]}`
	auth := []string{"Authorization", "Bearer s3cret", "Content-Type", "application/json"}
	for i, want := range []string{`{"added":61,"points":61}`, `{"added":0,"points":61}`} {
		res, b := e.do("POST", "/api/hosts/node-1/series", strings.NewReader(body), auth...)
		if res.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != want {
			t.Errorf("POST %d = %d %s; want %s", i+1, res.StatusCode, b, want)
		}
	}
	var l timeline.SeriesLane
	from, to := start.Format(time.RFC3339), start.Add(time.Minute).Format(time.RFC3339)
	e.getJSON("/api/hosts/node-1/series?name=cpu.sys&bucket=5&from="+from+"&to="+to, &l)
	if len(l.Series) != 1 || l.Series[0].CPU != 3 || len(l.Series[0].Values) != 12 {
		t.Fatalf("lane = %+v; want CPU 3 in 12 columns", l)
	}
	var g timeline.Grid
	e.getJSON("/api/hosts/node-1/timeline?bucket=5&from="+from+"&to="+to, &g)
	if g.From != l.From || g.Bucket != l.Bucket || g.Buckets != len(l.Series[0].Values) {
		t.Errorf("lane [%d by %d] × %d; the cores map [%d by %d] × %d", l.From, l.Bucket, len(l.Series[0].Values), g.From, g.Bucket, g.Buckets)
	}
	// Points at 11–15 s cover [10, 15): column 2.
	for b, v := range l.Series[0].Values {
		want := 1.5
		if b == 2 {
			want = 100
		}
		if v == nil || *v != want {
			t.Errorf("column %d = %v; want %v", b, v, want)
		}
	}
	raw, _ := json.Marshal(l)
	if !strings.Contains(string(raw), `"unit":"%"`) || !strings.Contains(string(raw), `"per_cpu":true`) {
		t.Errorf("lane JSON %s; want its unit and per_cpu", raw)
	}

	var mv struct {
		Of     struct{ Series string }
		Moving []struct{ Rho float64 }
	}
	e.getJSON("/api/hosts/node-1/moves?name=cpu.sys&series_cpu=3&from="+from+"&to="+to, &mv)
	if mv.Of.Series != "cpu.sys" {
		t.Errorf("moves = %+v; want what moves with cpu.sys", mv)
	}

	for _, c := range []struct {
		method, path, body string
		hdr                []string
		want               int
	}{
		{"POST", "/api/hosts/node-1/series", body, []string{"Content-Type", "application/json"}, http.StatusUnauthorized},
		{"POST", "/api/hosts/node-1/series", `{"series": [{"name": "cpu.bogus", "cpu": 0, "points": [{"t": 1, "v": 1}]}]}`, auth, http.StatusBadRequest},
		{"POST", "/api/hosts/node-1/series", `{"series": [{"name": "cpu.sys", "cpu": 0, "points": [{"t": 2, "v": 1}, {"t": 1, "v": 1}]}]}`, auth, http.StatusBadRequest},
		{"POST", "/api/hosts/node-1/series", `not json`, auth, http.StatusBadRequest},
		{"GET", "/api/hosts/node-1/series?name=cpu.bogus", "", nil, http.StatusBadRequest},
		{"GET", "/api/hosts/nobody/series?name=cpu.sys", "", nil, http.StatusNotFound},
	} {
		res, b := e.do(c.method, c.path, strings.NewReader(c.body), c.hdr...)
		if res.StatusCode != c.want {
			t.Errorf("%s %s %.60s = %d %s; want %d", c.method, c.path, c.body, res.StatusCode, b, c.want)
		}
	}
}

// TestHostSeriesBounded: a host keeps subsecond.MaxHostSeries distinct
// series; a post past them stores its points of the others and names what
// it refused (a probe stored a million IRQ labels on one host before).
func TestHostSeriesBounded(t *testing.T) {
	e := newEnv(t, Config{})
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).UnixNano()
	post := func(from, n int) string {
		t.Helper()
		var b strings.Builder
		b.WriteString(`{"series": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name": "irq", "cpu": 1, "label": "%d:probe", "points": [{"t": %d, "v": 1}]}`, from+i, t0)
		}
		b.WriteString(`]}`)
		res, body := e.do("POST", "/api/hosts/node-s/series", strings.NewReader(b.String()), "Content-Type", "application/json")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %d series = %d %.300s", n, res.StatusCode, body)
		}
		return strings.TrimSpace(string(body))
	}
	if got, want := post(0, subsecond.MaxHostSeries-1), fmt.Sprintf(`{"added":%d,"points":%d}`, subsecond.MaxHostSeries-1, subsecond.MaxHostSeries-1); got != want {
		t.Errorf("the first %d series: %s; want %s", subsecond.MaxHostSeries-1, got, want)
	}
	// Sorted by label, "49999:probe" is kept and "50000:probe" and
	// "50001:probe" refused.
	got := post(subsecond.MaxHostSeries-1, 3)
	want := `{"added":1,"refused":2,"refused_series":[{"name":"irq","cpu":1,"label":"50000:probe"},{"name":"irq","cpu":1,"label":"50001:probe"}],"points":3}`
	if got != want {
		t.Errorf("3 series past the bound: %s; want %s", got, want)
	}
}
