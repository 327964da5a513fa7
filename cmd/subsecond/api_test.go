package main

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestCLIMatchesAPI checks that each command's --format json prints what
// the API serves for the same stored profile and parameters, byte for
// byte: the hot-spot report (with each episode's link), the list of
// profiles, a profile, the heatmap, the cores map, a flame graph and a
// differential one, as JSON and folded; and of a host's night, the hosts,
// the timeline, the hot spots across the night and the markers.
func TestCLIMatchesAPI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	importNight(t, db)
	file := viewCapture(t)
	out, _, err := runStoreCmd(t, "", "import", "--db", db, file)
	if err != nil {
		t.Fatal(err)
	}
	id := idRE.FindString(strings.TrimSpace(out))
	if id == "" {
		t.Fatalf("import printed no ID: %q", out)
	}
	base, _, stop := startServe(t, "serve", "--db", db, "--addr", "127.0.0.1:0")
	defer stop()

	for _, tc := range []struct {
		cli  []string
		path string
	}{
		{[]string{"hotspots", id}, "/api/profiles/" + id + "/hotspots"},
		{[]string{"hotspots", id, "--min", "1500ms", "--cpu", "4", "--limit", "0", "--cells", "3"},
			"/api/profiles/" + id + "/hotspots?min=1.5&cpu=4&limit=0&cells=3"},
		{[]string{"hotspots", id, "--measure", "system", "--only", "kernel", "--threshold", "0.9"},
			"/api/profiles/" + id + "/hotspots?measure=system&only=kernel&threshold=0.9"},
		{[]string{"hotspots", id, "--system", "--comm", "node-agent"}, "/api/profiles/" + id + "/hotspots?measure=system&comm=node-agent"},
		{[]string{"hotspots", id, "--start", "5", "--end", "10", "--cpu", "4"}, "/api/profiles/" + id + "/hotspots?start=5&end=10&cpu=4"},
		{[]string{"list"}, "/api/profiles"},
		{[]string{"info", id}, "/api/profiles/" + id},
		{[]string{"heatmap", id, "--rows", "10", "--col", "500ms"}, "/api/profiles/" + id + "/heatmap?rows=10&col=0.5"},
		{[]string{"cpus", id, "--bucket", "0.25", "--comm", "node-agent"}, "/api/profiles/" + id + "/cpus?bucket=250ms&comm=node-agent"},
		{[]string{"flamegraph", id, "--start", "3s", "--end", "7"}, "/api/profiles/" + id + "/flamegraph?start=3&end=7000ms&format=json"},
		{[]string{"flamegraph", id, "--start2", "0", "--end2", "3", "--start", "3s", "--end", "7"}, "/api/profiles/" + id + "/diff?start2=0&end2=3&start=3&end=7"},
		{[]string{"flamegraph", id, "--start2", "0", "--end2", "3", "--format", "folded"}, "/api/profiles/" + id + "/diff?start2=0&end2=3&format=folded"},
		{[]string{"flamegraph", "--host", "node-1", "--from", "2026-11-30T03:00:55Z", "--to", "2026-11-30T03:01:05Z"},
			"/api/hosts/node-1/flamegraph?from=2026-11-30T03:00:55Z&to=1796007665&format=json"},
		{[]string{"flamegraph", "--host", "node-1", "--from", "2026-11-30T03:00:55Z", "--to", "2026-11-30T03:01:05Z", "--from2", "2026-11-30T03:03:50Z", "--to2", "2026-11-30T03:04:10Z", "--cpu", "1"},
			"/api/hosts/node-1/diff?from2=2026-11-30T03:03:50Z&to2=2026-11-30T03:04:10Z&from=2026-11-30T03:00:55Z&to=2026-11-30T03:01:05Z&cpu=1"},
		{[]string{"flamegraph", "--host", "node-1", "--from", "2026-11-30T03:04:15Z", "--to", "2026-11-30T03:05:15Z", "--format", "folded", "--comm", "kubelet"},
			"/api/hosts/node-1/flamegraph?from=2026-11-30T03:04:15Z&to=2026-11-30T03:05:15Z&format=folded&comm=kubelet"},
		{[]string{"hosts"}, "/api/hosts"},
		{[]string{"hosts", "node-1"}, "/api/hosts/node-1/captures"},
		{[]string{"timeline", "--host", "node-1"}, "/api/hosts/node-1/timeline"},
		{[]string{"timeline", "--host", "node-1", "--from", "2026-11-30T03:01:00Z", "--to", "1796007780", "--bucket", "5s"},
			"/api/hosts/node-1/timeline?from=1796007660&to=2026-11-30T03:03:00Z&bucket=5000ms"},
		{[]string{"hotspots", "--host", "node-1"}, "/api/hosts/node-1/hotspots"},
		{[]string{"hotspots", "--host", "node-1", "--measure", "system", "--threshold", "0.8", "--min", "2s", "--limit", "1", "--near", "5"},
			"/api/hosts/node-1/hotspots?measure=system&threshold=0.8&min=2&limit=1&near=5s"},
		{[]string{"markers", "list", "--host", "node-1"}, "/api/hosts/node-1/markers"},
		{[]string{"markers", "list", "--host", "node-1", "--from", "2026-11-30T03:05:00Z"}, "/api/hosts/node-1/markers?from=2026-11-30T03:05:00Z"},
	} {
		cmd := 1 // the command's words: "markers list" takes two
		if tc.cli[0] == "markers" {
			cmd = 2
		}
		args := slices.Concat(tc.cli[:cmd], []string{"--db", db, "--format", "json"}, tc.cli[cmd:])
		cli, _, err := runStoreCmd(t, "", args...)
		if err != nil {
			t.Errorf("subsecond %s: %v", strings.Join(args, " "), err)
			continue
		}
		res, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		api, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("GET %s = %d %s", tc.path, res.StatusCode, api)
			continue
		}
		if !bytes.Equal([]byte(cli), api) {
			t.Errorf("subsecond %s and GET %s differ:\ncli %.600s\napi %.600s", strings.Join(args, " "), tc.path, cli, api)
		}
	}

	// The report's links lead to the flame graph page of each episode.
	var rep subsecond.HotspotReport
	getJSON(t, base+"/api/profiles/"+id+"/hotspots?cpu=4", &rep)
	if len(rep.Spots) != 1 || !strings.HasPrefix(rep.Spots[0].URL, "/p/"+id+"/flame?cpu=4&end=") {
		t.Fatalf("hot spots of CPU 4 = %+v; want one with a link to its flame graph", rep.Spots)
	}
	// A range narrows the search: CPU 4 is pegged from 3.1 s to 7.1 s.
	for _, tc := range []struct {
		query      string
		start, end int64 // the episode's, from T0; 0 for none
	}{
		{"start=5&end=10", 5e9, 7.1e9},
		{"start=3&end=6", 3.1e9, 6e9},
		{"start=8&end=12", 0, 0},
	} {
		var in subsecond.HotspotReport
		getJSON(t, base+"/api/profiles/"+id+"/hotspots?cpu=4&"+tc.query, &in)
		if tc.start == 0 && len(in.Spots) != 0 || tc.start != 0 && (len(in.Spots) != 1 || in.Spots[0].Start-in.T0 != tc.start || in.Spots[0].End-in.T0 != tc.end) {
			t.Errorf("hot spots of CPU 4 with %s = %+v; want [%d, %d) ns", tc.query, in.Spots, tc.start, tc.end)
		}
		if in.Start == 0 || in.End == 0 {
			t.Errorf("hot spots with %s: the report gives no range (%d, %d)", tc.query, in.Start, in.End)
		}
		for _, c := range in.Cells {
			if c.Start < in.Start || c.End > in.End {
				t.Errorf("hot spots with %s: cell [%d, %d) outside [%d, %d)", tc.query, c.Start, c.End, in.Start, in.End)
			}
		}
	}
	res, err := http.Get(base + "/api/profiles/" + id + "/hotspots?start=9&end=3")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(body), "end") {
		t.Errorf("hot spots of an empty range: %d %s; want 400 naming end", res.StatusCode, body)
	}
	u, _ := url.Parse(base + rep.Spots[0].URL)
	if res, err := http.Get(u.String()); err != nil || res.StatusCode != 200 {
		t.Errorf("GET %s: %v %v", u, err, res)
	} else {
		res.Body.Close()
	}
}
