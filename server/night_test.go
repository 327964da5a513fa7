package server

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// importNightgen writes a small night of node-1 (4 CPUs, 3 one-minute
// captures, CPU 3 pegged for 5 s in the second) into e's store.
func importNightgen(t *testing.T, e *testEnv) *nightgen.Night {
	t.Helper()
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 3, Length: time.Minute, Unanchored: -1, Seed: 3}
	c1 := n.CaptureStart(1)
	n.Bursts = []nightgen.Burst{{CPU: 3, Start: c1.Add(10 * time.Second), End: c1.Add(15 * time.Second)}}
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := e.st.Import(context.Background(), pr, store.ImportOptions{FileName: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func (e *testEnv) getJSON(path string, v any) {
	e.t.Helper()
	res, b := e.do("GET", path, nil)
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s = %d %s", path, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
}

func TestHostAPI(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret"})
	n := importNightgen(t, e)

	var hosts struct{ Hosts []timeline.Host }
	e.getJSON("/api/hosts", &hosts)
	if len(hosts.Hosts) != 1 || hosts.Hosts[0].Host != "node-1" || hosts.Hosts[0].Captures != 3 ||
		hosts.Hosts[0].Start < n.Start.UnixNano() || hosts.Hosts[0].Start > n.Start.Add(time.Millisecond).UnixNano() {
		t.Fatalf("hosts = %+v; want node-1 with 3 captures from %v", hosts.Hosts, n.Start)
	}

	var g timeline.Grid
	e.getJSON("/api/hosts/node-1/timeline?from=2026-11-30T03:00:00Z&to=2026-11-30T03:03:00Z&bucket=10s", &g)
	if g.Buckets != 18 || len(g.CPUs) != 4 || len(g.Captures) != 3 {
		t.Errorf("timeline: %d buckets, %d CPUs, %d captures; want 18, 4, 3", g.Buckets, len(g.CPUs), len(g.Captures))
	}
	if b := 7; g.Busy[3][b] < 0.5 { // [70 s, 80 s): the burst's 5 s on CPU 3
		t.Errorf("CPU 3's busy share in the burst's bucket = %v; want over 0.5", g.Busy[3][b])
	}

	var hot struct {
		Found    int
		Hotspots []struct {
			timeline.Spot
			URL        string
			FlameURL   string `json:"flame_url"`
			CompareURL string `json:"compare_url"`
		}
	}
	e.getJSON("/api/hosts/node-1/hotspots?measure=system", &hot)
	if hot.Found != 1 || hot.Hotspots[0].CPU != 3 || !strings.HasPrefix(hot.Hotspots[0].FlameURL, "/p/"+hot.Hotspots[0].Capture+"/flame?cpu=3&start=10") {
		t.Fatalf("hot spots = %+v; want CPU 3's burst with a flame link at 10 s into its capture", hot)
	}
	// The comparison is the diff from the same place in the first capture.
	hs, _, _ := timeline.HostCaptures(context.Background(), e.s.source(), "node-1")
	if want := "/p/" + hot.Hotspots[0].Capture + "/diff?cpu=3&start=10&end=15&base=" + hs[0].ID + "&start2=10&end2=15"; hot.Hotspots[0].CompareURL != want {
		t.Errorf("compare url = %q; want %q", hot.Hotspots[0].CompareURL, want)
	}
	if res, b := e.do("GET", strings.Replace(hot.Hotspots[0].CompareURL, "/p/", "/api/profiles/", 1)+"&format=json", nil); res.StatusCode != 200 {
		t.Errorf("the comparison's diff = %d %s", res.StatusCode, b)
	}
	if res, _ := e.do("GET", hot.Hotspots[0].CompareURL, nil); res.StatusCode != 200 {
		t.Errorf("the comparison's page = %d", res.StatusCode)
	}
	// The link's range gives the flame graph of the burst.
	u, _ := url.Parse(hot.Hotspots[0].FlameURL)
	var flame struct{ Total int64 }
	e.getJSON("/api/profiles/"+hot.Hotspots[0].Capture+"/flamegraph?format=json&"+u.RawQuery, &flame)
	if flame.Total < 240 {
		t.Errorf("the hot spot's flame graph holds %d samples; want the burst's 245", flame.Total)
	}

	// Markers: a kernel log posted with a match, then listed with links.
	mark := n.Bursts[0].End.Add(2 * time.Second)
	log := "[" + mark.Format(time.ANSIC) + "] NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out\n" +
		"[" + mark.Format(time.ANSIC) + "] eth0: link up\n"
	res, b := e.do("POST", "/api/hosts/node-1/markers?match=WATCHDOG", strings.NewReader(log))
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("markers without the token = %d %s; want 401", res.StatusCode, b)
	}
	res, b = e.do("POST", "/api/hosts/node-1/markers?match=WATCHDOG", strings.NewReader(log), "Authorization", "Bearer s3cret")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"added":1`) {
		t.Fatalf("POST markers = %d %s; want 1 added", res.StatusCode, b)
	}
	res, b = e.do("POST", "/api/hosts/node-1/markers", strings.NewReader(`{"markers": [{"time": "2026-11-30T03:02:30Z", "text": "deploy"}]}`),
		"Authorization", "Bearer s3cret", "Content-Type", "application/json")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST JSON markers = %d %s", res.StatusCode, b)
	}
	var ms timeline.MarkerList
	e.getJSON("/api/hosts/node-1/markers", &ms)
	if len(ms.Markers) != 2 || ms.Markers[0].Before == nil || ms.Markers[0].Before.Capture != hot.Hotspots[0].Capture {
		t.Fatalf("markers = %+v; want the watchdog first, its 10 s before in the burst's capture", ms.Markers)
	}
	if w := ms.Markers[0].Before; w.Start != int64(7*time.Second) || w.End != int64(17*time.Second) || ms.Markers[0].URL != "/p/"+w.Capture+"?start=7&end=17" {
		t.Errorf("the watchdog's window = %+v, url %s; want 7-17 s of its capture", w, ms.Markers[0].URL)
	}
	// With a marker, the hot spot before it says so.
	e.getJSON("/api/hosts/node-1/hotspots", &hot)
	if hot.Hotspots[0].Marker == nil || hot.Hotspots[0].Before != int64(2*time.Second) {
		t.Errorf("hot spot = %+v; want it 2 s before the watchdog", hot.Hotspots[0].Spot)
	}

	var comms timeline.CommReport
	e.getJSON("/api/hosts/node-1/comms?comm=kubelet&bucket=10", &comms)
	if len(comms.Jumps) == 0 || comms.Jumps[0].Comm != "kubelet" || len(comms.Series) != comms.Buckets {
		t.Errorf("comms = %+v; want kubelet jumping first and its series", comms)
	}

	for path, want := range map[string]int{
		"/api/hosts/nobody/timeline":                        404,
		"/api/hosts/node-1/timeline?bucket=0.1":             400,
		"/api/hosts/node-1/timeline?from=yesterday":         400,
		"/api/hosts/node-1/hotspots?measure=idle":           400,
		"/api/hosts/node-1/comms?limit=-1":                  400,
		"/api/hosts/node-1/hotspots?min=0.5":                400,
		"/api/hosts/node-1/hotspots?near=0":                 400,
		"/api/hosts/node-1/timeline?bucket=1&from=0&to=1e9": 400,
	} {
		if res, b := e.do("GET", path, nil); res.StatusCode != want {
			t.Errorf("GET %s = %d %s; want %d", path, res.StatusCode, b, want)
		}
	}
	res, b = e.do("POST", "/api/hosts/node-1/markers", strings.NewReader("no time here WATCHDOG\n"), "Authorization", "Bearer s3cret")
	if res.StatusCode != 400 || !strings.Contains(string(b), "line 1") {
		t.Errorf("a log line without time = %d %s; want 400 naming line 1", res.StatusCode, b)
	}
}

// TestHostCostBounds: a host timeline (or comm shares) whose columns ×
// CPUs pass the server's cell limit is refused before any summary is read,
// naming bucket and a width that fits; without a bucket, the columns are
// chosen to fit.
func TestHostCostBounds(t *testing.T) {
	e := newEnv(t, Config{MaxCells: 200})
	importNightgen(t, e)
	// 3 one-minute captures of 4 CPUs from 03:00:00: 180.02 s.
	for _, path := range []string{"/api/hosts/node-1/timeline?bucket=1", "/api/hosts/node-1/comms?bucket=1s"} {
		res, b := e.do("GET", path, nil)
		wantError(t, res, b, http.StatusBadRequest, "bucket: 1 s makes 181 columns × 4 CPUs = 724 cells, more than this server's limit of 200; use bucket ≥ 3.7 s")
	}
	var g timeline.Grid
	e.getJSON("/api/hosts/node-1/timeline", &g)
	if g.Buckets*len(g.CPUs) > 200 || g.Bucket%int64(time.Second) != 0 || g.Buckets < 40 {
		t.Errorf("timeline without a bucket: %d columns of %v × %d CPUs; want whole seconds making at most 200 cells, and not far fewer",
			g.Buckets, time.Duration(g.Bucket), len(g.CPUs))
	}
	e.getJSON("/api/hosts/node-1/timeline?bucket=3.7", &g)
}

// TestWallClockRangeInURLs: a realtime capture's flame graph for a range
// given as wall-clock times equals the one given as offsets from T0.
func TestWallClockRangeInURLs(t *testing.T) {
	e := newEnv(t, Config{})
	n := importNightgen(t, e)
	var hosts struct{ Hosts []timeline.Host }
	e.getJSON("/api/hosts", &hosts)
	var list struct{ Profiles []struct{ ID string } }
	e.getJSON("/api/profiles", &list)
	id := list.Profiles[len(list.Profiles)-1].ID // the first capture, 03:00:00-03:01:00
	from := n.Start.Add(10 * time.Second).Format(time.RFC3339)
	to := n.Start.Add(12500 * time.Millisecond).Format(time.RFC3339Nano)
	var byWall, byOffset struct{ Total int64 }
	e.getJSON("/api/profiles/"+id+"/flamegraph?format=json&idle=1&from="+from+"&to="+to, &byWall)
	e.getJSON("/api/profiles/"+id+"/flamegraph?format=json&idle=1&start=10&end=12.5", &byOffset)
	if byWall.Total == 0 || byWall.Total != byOffset.Total {
		t.Errorf("flame graph by wall clock holds %d samples, by offsets %d; want equal and not 0", byWall.Total, byOffset.Total)
	}
	if res, _ := e.do("GET", "/p/"+id+"/flame?from="+from+"&to="+to, nil); res.StatusCode != 200 {
		t.Errorf("the flame page by wall clock = %d", res.StatusCode)
	}
	res, b := e.do("GET", "/api/profiles/"+id+"/flamegraph?format=json&from="+from+"&start=3", nil)
	wantError(t, res, b, 400, "from: give the range as from and to")
}

// TestProfilePageWallClock: a profile's page names its host, linked to the
// host's night, and says when its samples were taken, marking an estimate.
func TestProfilePageWallClock(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tt := range []struct{ file, want string }{
		{"realtime-2cpu-1s.perf.txt.gz", "2026-11-30 17:11:05.039 – 2026-11-30 17:11:06.018 UTC (realtime)"},
		{"boot-a-2cpu-1s.perf.txt.gz", "≈ 2026-11-30 17:11:07.511 – 2026-11-30 17:11:08.500 UTC (captured-on), approximate"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "wallclock", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		res, body := e.do("POST", "/api/profiles", bytes.NewReader(b))
		var up uploadResponse
		if err := json.Unmarshal(body, &up); err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", tt.file, res.StatusCode, body)
		}
		_, page := e.do("GET", "/p/"+up.Profile.ID, nil)
		if !strings.Contains(string(page), `<dd data-testid="profile-wall">`+html.EscapeString(tt.want)+`</dd>`) ||
			!strings.Contains(string(page), `href="/hosts/vm"`) {
			t.Errorf("%s: the page lacks its wall clock %q or its host link", tt.file, tt.want)
		}
	}
}
