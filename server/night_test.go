package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
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
	if hot.Found != 1 || hot.Hotspots[0].CPU != 3 || !strings.HasPrefix(hot.Hotspots[0].Spot.URL, "/p/"+hot.Hotspots[0].Capture+"?cpu=3&start=10") {
		t.Fatalf("hot spots = %+v; want CPU 3's burst with a link at 10 s into its capture", hot)
	}
	// Its flame graph is the host's range, which may cross captures.
	if s := hot.Hotspots[0]; s.FlameURL != "/hosts/node-1/flame?cpu=3&from="+url.QueryEscape(query.FormatWallTime(s.Start))+"&to="+url.QueryEscape(query.FormatWallTime(s.End)) {
		t.Errorf("flame url = %q; want the host's range [%d, %d) on CPU 3", s.FlameURL, s.Start, s.End)
	}
	// The comparison is the diff of the host's ranges from the same place
	// in the first capture (nothing was recorded an hour before).
	s0 := hot.Hotspots[0].Spot
	if want := timeline.HostDiffURL("node-1", s0.Start, s0.End, s0.Start-int64(time.Minute), s0.End-int64(time.Minute), 3); hot.Hotspots[0].CompareURL != want {
		t.Errorf("compare url = %q; want %q", hot.Hotspots[0].CompareURL, want)
	}
	if res, b := e.do("GET", strings.Replace(hot.Hotspots[0].CompareURL, "/hosts/", "/api/hosts/", 1)+"&format=json", nil); res.StatusCode != 200 {
		t.Errorf("the comparison's diff = %d %s", res.StatusCode, b)
	}
	if res, _ := e.do("GET", hot.Hotspots[0].CompareURL, nil); res.StatusCode != 200 {
		t.Errorf("the comparison's page = %d", res.StatusCode)
	}
	// The link's range gives the flame graph of the burst.
	u, _ := url.Parse(hot.Hotspots[0].Spot.URL)
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
	if len(ms.Markers) != 2 || ms.Markers[0].Before == nil {
		t.Fatalf("markers = %+v; want the watchdog first, with its 10 s before", ms.Markers)
	}
	if w, at := ms.Markers[0].Before, mark.UnixNano(); w.From != at-int64(10*time.Second) || w.To != at || w.Missing != 0 ||
		ms.Markers[0].URL != "/hosts/node-1/flame?from="+url.QueryEscape(query.FormatWallTime(w.From))+"&to="+url.QueryEscape(query.FormatWallTime(w.To)) {
		t.Errorf("the watchdog's window = %+v, url %s; want the host's 10 s before it, all recorded", w, ms.Markers[0].URL)
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
	res, b := e.do("GET", "/api/profiles/"+id+"/flamegraph?format=json&from="+from+"&start=3", nil)
	wantError(t, res, b, 400, "from: give the range as from and to")
}

// elementText returns the text of the element that opens with start in
// page (up to the element's end tag, tags removed, table cells apart,
// entities decoded, spaces collapsed).
func elementText(page, start string) string {
	i := strings.Index(page, start)
	if i < 0 {
		return ""
	}
	rest := page[i+len(start):]
	tag := start[1:strings.IndexAny(start, " >")]
	depth, j := 1, 0
	for depth > 0 && j < len(rest) {
		k := strings.Index(rest[j:], "<")
		if k < 0 {
			break
		}
		j += k
		switch {
		case strings.HasPrefix(rest[j:], "</"+tag+">"):
			depth--
		case strings.HasPrefix(rest[j:], "<"+tag+">") || strings.HasPrefix(rest[j:], "<"+tag+" "):
			depth++
		}
		if depth > 0 {
			j++
		}
	}
	text := regexp.MustCompile(`</t[dh]>`).ReplaceAllString(rest[:j], " ")
	text = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, "")
	return strings.Join(strings.Fields(html.UnescapeString(text)), " ")
}

// TestProfilePageWallClock: a profile's page names its host, linked to the
// host's night, and says when its samples were taken, marking an estimate.
func TestProfilePageWallClock(t *testing.T) {
	e := newEnv(t, Config{})
	var ids []string
	for _, tt := range []struct{ file, want, datetime string }{
		{"realtime-2cpu-1s.perf.txt.gz", "2026-11-30 17:11:05.039–17:11:06.019 UTC (realtime)", "2026-11-30T17:11:05.039Z"},
		{"boot-a-2cpu-1s.perf.txt.gz", "≈ 2026-11-30 17:11:07.511–17:11:08.5 UTC (captured-on, approximate)", "2026-11-30T17:11:07.511Z"},
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
		if got := elementText(string(page), `<dd data-testid="profile-wall">`); got != tt.want || !strings.Contains(string(page), `href="/hosts/vm"`) {
			t.Errorf("%s: the page's wall clock reads %q; want %q, and its host link", tt.file, got, tt.want)
		}
		// Its times are <time> elements that the script can show in the
		// browser's zone.
		if !strings.Contains(string(page), `<time datetime="`+tt.datetime+`" data-clock="date">`) {
			t.Errorf("%s: no <time datetime=%q> on the page", tt.file, tt.datetime)
		}
		if !strings.Contains(string(page), `<select data-testid="tz"`) {
			t.Errorf("%s: the page has no Times toggle", tt.file)
		}
		ids = append(ids, up.Profile.ID)
	}
	// A flame graph's heading gives its range on the wall clock too; a
	// differential one its base's, on the base profile's clock.
	_, page := e.do("GET", "/p/"+ids[0]+"/flame?start=0.2&end=0.7", nil)
	if got := elementText(string(page), `<span class="wall" data-testid="range-wall">`); got != "17:11:05.2–17:11:05.7 UTC" {
		t.Errorf("flame heading's wall clock = %q; want 17:11:05.2–17:11:05.7 UTC", got)
	}
	_, page = e.do("GET", "/p/"+ids[0]+"/diff?start=0.2&end=0.7&base="+ids[1]+"&start2=0&end2=0.5", nil)
	// boot-a's T0, 308 s on its clock, is ≈ 17:11:06.693 on the wall.
	if got := elementText(string(page), `<span class="wall" data-testid="range2-wall">`); got != "≈ 2026-11-30 17:11:06.693–17:11:07.193 UTC" {
		t.Errorf("diff heading's base wall clock = %q; want ≈ 2026-11-30 17:11:06.693–17:11:07.193 UTC", got)
	}
}

// TestWallClockRangeInPages: a capture's page given its range on the wall
// clock (from, to; a differential graph's base range from2, to2, on the
// base profile's clock) is sent to the same page with the range as offsets
// from T0, which its script, links and exports read; the API reads from2
// and to2 as it reads start2 and end2.
func TestWallClockRangeInPages(t *testing.T) {
	e := newEnv(t, Config{})
	n := importNightgen(t, e)
	var list subsecond.ProfileList
	e.getJSON("/api/profiles", &list)
	c0, c1 := list.Profiles[len(list.Profiles)-1], list.Profiles[len(list.Profiles)-2] // the first two captures
	wall := func(i int, d time.Duration) string { return n.CaptureStart(i).Add(d).Format(time.RFC3339Nano) }
	// off is the offset from p's T0 of d after capture i's start.
	off := func(p subsecond.Profile, i int, d time.Duration) string {
		return query.FormatSeconds(n.CaptureStart(i).Add(d).UnixNano() - p.Wall.Offset - p.T0())
	}
	from, to := wall(1, 10*time.Second), wall(1, 12500*time.Millisecond)
	start, end := off(c1, 1, 10*time.Second), off(c1, 1, 12500*time.Millisecond)
	from2, to2 := wall(0, 10*time.Second), wall(0, 12500*time.Millisecond)
	start2, end2 := off(c0, 0, 10*time.Second), off(c0, 0, 12500*time.Millisecond)
	esc := url.QueryEscape
	for _, tt := range []struct{ path, want string }{
		{"/p/" + c1.ID + "?cpu=3&from=" + esc(from) + "&to=" + esc(to) + "&tz=local",
			"/p/" + c1.ID + "?cpu=3&end=" + end + "&start=" + start + "&tz=local"},
		{"/p/" + c1.ID + "/flame?from=" + esc(from) + "&to=" + esc(to) + "&search=mem",
			"/p/" + c1.ID + "/flame?end=" + end + "&search=mem&start=" + start},
		{"/p/" + c1.ID + "/stacks?from=" + esc(from),
			"/p/" + c1.ID + "/stacks?start=" + start},
		{"/p/" + c1.ID + "/diff?from=" + esc(from) + "&to=" + esc(to) + "&base=" + c0.ID + "&from2=" + esc(from2) + "&to2=" + esc(to2),
			"/p/" + c1.ID + "/diff?base=" + c0.ID + "&end=" + end + "&end2=" + end2 + "&start=" + start + "&start2=" + start2},
	} {
		res, b := e.do("GET", tt.path, nil)
		if got := res.Header.Get("Location"); res.StatusCode != http.StatusFound || got != tt.want {
			t.Errorf("GET %s = %d, Location %q (%s); want 302 to %s", tt.path, res.StatusCode, got, b, tt.want)
			continue
		}
		if res, b := e.do("GET", tt.want, nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s", tt.want, res.StatusCode, b)
		}
	}
	// The profile page, whose maps show the whole capture, says what range
	// its link gave and links to that range's views.
	_, page := e.do("GET", "/p/"+c1.ID+"?cpu=3&end="+end+"&start="+start, nil)
	if got, want := elementText(string(page), `<p class="linked-range" data-testid="linked-range">`),
		"The link's range: CPU 3 · 10–12.5 s (2.5 s) 03:01:10–03:01:12.5 UTC — its flame graph, its stack chart"; got != want {
		t.Errorf("the profile page's linked range reads %q; want %q", got, want)
	}
	if want := `href="/p/` + c1.ID + `/flame?cpu=3&amp;end=12.5&amp;start=10" data-testid="linked-flame"`; !strings.Contains(string(page), want) {
		t.Errorf("the profile page lacks the link %s", want)
	}
	if _, page := e.do("GET", "/p/"+c1.ID+"?cpu=3", nil); strings.Contains(string(page), "linked-range") {
		t.Error("a profile page without a range in its link names one")
	}

	// The API: the base range on the wall clock is the one by offsets.
	var byWall, byOffset struct {
		Total     int64
		BaseTotal int64 `json:"base_total"`
	}
	e.getJSON("/api/profiles/"+c1.ID+"/flamegraph?format=json&idle=1&from="+esc(from)+"&to="+esc(to)+"&base="+c0.ID+"&from2="+esc(from2)+"&to2="+esc(to2), &byWall)
	e.getJSON("/api/profiles/"+c1.ID+"/diff?format=json&idle=1&start="+start+"&end="+end+"&base="+c0.ID+"&start2="+start2+"&end2="+end2, &byOffset)
	if byWall.BaseTotal == 0 || byWall != byOffset {
		t.Errorf("differential graph by wall clock holds %+v samples, by offsets %+v; want equal and not 0", byWall, byOffset)
	}
	res, b := e.do("GET", "/api/profiles/"+c1.ID+"/diff?format=json&base="+c0.ID+"&from2="+esc(from2)+"&start2=1", nil)
	wantError(t, res, b, 400, "from2: give the range as from2 and to2, or as start2 and end2, not both")
	res, b = e.do("GET", "/api/profiles/"+c1.ID+"/diff?base="+c0.ID+"&from2="+esc(wall(1, 30*time.Second)), nil)
	wantError(t, res, b, 400, "from2: "+query.DisplayWallTime(n.CaptureStart(1).Add(30*time.Second).UnixNano())+" is after the capture")
}

// TestHostNamesRoundTrip: a host whose name holds characters that a path
// escapes (';', ',', '%', '?', '#') is reached by the links the server
// builds for it, on its page and every host API.
func TestHostNamesRoundTrip(t *testing.T) {
	e := newEnv(t, Config{})
	for _, host := range []string{"rack;7,a", "100%", "q?x#y", "plain-host"} {
		n := &nightgen.Night{Host: host, CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
			Captures: 1, Length: 10 * time.Second, Unanchored: -1, Seed: 5}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, 0, nil)) }()
		if _, _, err := e.st.Import(context.Background(), pr, store.ImportOptions{FileName: "c", Host: host}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{link.HostPage.Path(host), link.TimelineAPI.Path(host), link.CapturesAPI.Path(host),
			link.HostHotspotAPI.Path(host), link.CommsAPI.Path(host), link.MarkersAPI.Path(host)} {
			if res, b := e.do("GET", path, nil); res.StatusCode != http.StatusOK {
				t.Errorf("GET %s (host %q) = %d %.200s; want 200", path, host, res.StatusCode, b)
			}
		}
		var caps struct {
			Host string `json:"host"`
		}
		e.getJSON(link.CapturesAPI.Path(host), &caps)
		if caps.Host != host {
			t.Errorf("GET %s names host %q; want %q", link.CapturesAPI.Path(host), caps.Host, host)
		}
	}
}

// TestHostCapturesPaged: a host's capture list comes a page at a time, in
// time order; the pages' next links, followed, list every capture once, as
// the whole list does; a cursor that names no capture of the host is 400.
func TestHostCapturesPaged(t *testing.T) {
	e := newEnv(t, Config{})
	n := &nightgen.Night{Host: "node-p", CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
		Captures: 5, Length: 10 * time.Second, Unanchored: -1, Seed: 7}
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := e.st.Import(context.Background(), pr, store.ImportOptions{FileName: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	var whole timeline.CaptureList
	e.getJSON(link.CapturesAPI.Path("node-p"), &whole)
	if len(whole.Captures) != 5 || whole.Next != "" || whole.NextCursor != "" {
		t.Fatalf("the whole list holds %d captures, next %q; want 5 and no next page", len(whole.Captures), whole.Next)
	}
	var ids []string
	var pages int
	for next := link.CapturesAPI.Path("node-p") + "?per_page=2"; next != ""; pages++ {
		var page timeline.CaptureList
		e.getJSON(next, &page)
		if len(page.Captures) > 2 || page.Host != "node-p" {
			t.Fatalf("GET %s: %d captures of host %q; want at most 2 of node-p", next, len(page.Captures), page.Host)
		}
		if page.Next != "" && page.NextCursor != page.Captures[len(page.Captures)-1].ID {
			t.Errorf("GET %s: next cursor %q; want the page's last capture %q", next, page.NextCursor, page.Captures[len(page.Captures)-1].ID)
		}
		for _, c := range page.Captures {
			ids = append(ids, c.ID)
		}
		next = page.Next
	}
	var want []string
	for i, c := range whole.Captures {
		want = append(want, c.ID)
		if i > 0 && c.Start < whole.Captures[i-1].Start {
			t.Errorf("capture %d starts at %d, before capture %d's %d", i, c.Start, i-1, whole.Captures[i-1].Start)
		}
	}
	if pages != 3 || !slices.Equal(ids, want) {
		t.Errorf("%d pages listed %v; want 3 pages listing %v", pages, ids, want)
	}
	res, b := e.do("GET", link.CapturesAPI.Path("node-p")+"?per_page=2&cursor=nosuch", nil)
	wantError(t, res, b, 400, `cursor: host "node-p" has no capture "nosuch" on its night to list after`)
	res, b = e.do("GET", link.CapturesAPI.Path("node-p")+"?per_page=1001", nil)
	wantError(t, res, b, 400, "per_page")
}

// TestHostMarkersBounded: a host keeps its newest subsecond.MaxHostMarkers
// markers; a post past them says how many of the oldest it dropped, and
// the host's marker list holds no more than the limit.
func TestHostMarkersBounded(t *testing.T) {
	e := newEnv(t, Config{})
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).UnixNano()
	post := func(from, n int) map[string]int {
		t.Helper()
		var b strings.Builder
		b.WriteString(`{"markers": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"time_ns": %d, "text": "eth0: link up %d"}`, t0+int64(from+i)*int64(time.Millisecond), from+i)
		}
		b.WriteString(`]}`)
		res, body := e.do("POST", link.MarkersAPI.Path("node-m"), strings.NewReader(b.String()), "Content-Type", "application/json")
		var got map[string]int
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
			t.Fatalf("POST %d markers = %d %.300s", n, res.StatusCode, body)
		}
		return got
	}
	if got := post(0, subsecond.MaxHostMarkers); got["added"] != subsecond.MaxHostMarkers || got["dropped"] != 0 {
		t.Errorf("the first %d markers: %v; want all added, none dropped", subsecond.MaxHostMarkers, got)
	}
	if got := post(subsecond.MaxHostMarkers, 10); got["added"] != 10 || got["dropped"] != 10 || got["markers"] != 10 {
		t.Errorf("10 markers past the limit: %v; want 10 added and the 10 oldest dropped", got)
	}
	var list timeline.MarkerList
	e.getJSON(link.MarkersAPI.Path("node-m"), &list)
	if n := len(list.Markers); n != subsecond.MaxHostMarkers || list.Markers[0].Time != t0+10*int64(time.Millisecond) ||
		list.Markers[n-1].Time != t0+int64(subsecond.MaxHostMarkers+9)*int64(time.Millisecond) {
		t.Errorf("the host's markers: %d from %d; want the newest %d, from the 11th posted", n, list.Markers[0].Time-t0, subsecond.MaxHostMarkers)
	}
}
