package server

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
)

func TestRealEngine(t *testing.T) {
	e := newEnv(t, Config{Engine: engine.Engine{}})
	p := e.upload(perfText(2, 100, 3), "web-1") // T0 = 5086 s; samples from 0.05 s to 3.04 s
	api := "/api/profiles/" + p.ID
	getJSON := func(path string, v any) {
		t.Helper()
		res, b := e.do("GET", api+path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, b)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}

	var grid struct {
		T0     int64     `json:"t0_ns"`
		Col    int64     `json:"col_ns"`
		Rows   int       `json:"rows"`
		Cols   int       `json:"cols"`
		Counts [][]int64 `json:"counts"`
		Total  int64     `json:"total"`
	}
	getJSON("/heatmap?rows=10&cpu=1", &grid)
	if grid.T0 != 5086e9 || grid.Col != 1e9 || grid.Rows != 10 || grid.Cols != 4 || grid.Total != 300 {
		t.Errorf("heatmap = t0 %d col %d rows %d cols %d total %d; want 5086e9, 1e9, 10, 4, 300", grid.T0, grid.Col, grid.Rows, grid.Cols, grid.Total)
	}
	// Column 1 is [5087, 5088): 100 samples of CPU 1, 10 per 100 ms row.
	if len(grid.Counts) > 1 && (len(grid.Counts[1]) != 10 || grid.Counts[1][0] != 10) {
		t.Errorf("heatmap column 1 = %v; want 10 samples in each of 10 rows", grid.Counts[1])
	}

	var cores struct {
		CPUs    []int32     `json:"cpus"`
		Buckets int         `json:"buckets"`
		Busy    [][]float64 `json:"busy"`
	}
	getJSON("/cpus?bucket=0.5", &cores)
	if len(cores.CPUs) != 2 || cores.Buckets != 7 || len(cores.Busy) != 2 || cores.Busy[1][2] != 1 {
		t.Errorf("cores = %+v; want 2 CPUs, 7 half-second buckets, CPU 1 fully busy", cores)
	}

	var hs struct {
		Hotspots []subsecond.Hotspot `json:"hotspots"`
	}
	getJSON("/hotspots", &hs)
	found := false
	for _, h := range hs.Hotspots {
		// Flame graphs name frames as stackcollapse-perf.pl does, cutting
		// a symbol at its first parenthesis.
		if h.CPU == 1 && h.Comm == "kubelet" && strings.HasPrefix(hostile, h.Function) && strings.HasPrefix(h.URL, "/p/"+p.ID+"/flame?cpu=1&end=") {
			found = true
		}
	}
	if !found {
		t.Errorf("hot spots = %+v; want CPU 1 busy in kubelet's hostile function, linking to its flame graph", hs.Hotspots)
	}

	var fg struct {
		Total   int64    `json:"total"`
		Strings []string `json:"strings"`
		Name    []int32  `json:"name"`
		Depth   []int32  `json:"depth"`
	}
	getJSON("/flamegraph?start=1&end=2", &fg)
	if fg.Total != 200 || len(fg.Name) < 3 || fg.Strings[fg.Name[0]] != "all" {
		t.Errorf("flame graph of [1, 2) = total %d, %d nodes; want 200 samples under the root all", fg.Total, len(fg.Name))
	}

	res, b := e.do("GET", api+"/flamegraph?start=0&end=1&comm=web&format=folded", nil)
	if want := "web;main.main;do_syscall_64;handle_request 959595950\n"; res.StatusCode != 200 || string(b) != want {
		t.Errorf("folded = %d %q; want %q (95 samples of period 10101010)", res.StatusCode, b, want)
	}

	res, b = e.do("GET", api+"/flamegraph?start=0&end=3.5&cpu=1&format=svg", nil)
	if res.StatusCode != 200 || !bytes.Contains(b, []byte("<svg")) || bytes.Contains(b, []byte("<img")) || !bytes.Contains(b, []byte("&lt;img src=x onerror=alert")) {
		t.Errorf("svg export: status %d; want an SVG with the hostile name escaped", res.StatusCode)
	}

	res, b = e.do("GET", api+"/flamegraph?start=0&end=3.5&format=pprof", nil)
	if res.StatusCode != 200 {
		t.Fatalf("pprof export: %d %s", res.StatusCode, b)
	}
	prof, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("pprof export does not parse: %v", err)
	}
	var n int64
	for _, s := range prof.Sample {
		n += s.Value[0]
	}
	if n != 600 {
		t.Errorf("pprof export holds %d samples; want 600", n)
	}
	if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
		t.Errorf("pprof export is not gzip-compressed: %v", err)
	}

	var diff struct {
		Total     int64   `json:"total"`
		BaseTotal int64   `json:"base_total"`
		BaseN     []int64 `json:"base_n"`
	}
	getJSON("/diff?start2=0&end2=1&start=1&end=3", &diff)
	if diff.Total != 400 || diff.BaseTotal != 190 || len(diff.BaseN) == 0 {
		t.Errorf("diff = total %d base %d (%d base counts); want 400 over 190", diff.Total, diff.BaseTotal, len(diff.BaseN))
	}

	var fns struct {
		Total     int64 `json:"total"`
		BaseTotal int64 `json:"base_total"`
		Functions []struct {
			Name        string  `json:"name"`
			Total       int64   `json:"total"`
			BaseTotal   int64   `json:"base_total"`
			Delta       float64 `json:"total_delta_pts"`
			Significant bool    `json:"significant"`
		} `json:"functions"`
	}
	getJSON("/diff?start2=0&end2=1&start=1&end=3&format=functions", &fns)
	if fns.Total != 400 || fns.BaseTotal != 190 || len(fns.Functions) == 0 {
		t.Errorf("diff function table = total %d base %d, %d rows; want 400 over 190", fns.Total, fns.BaseTotal, len(fns.Functions))
	}
	for _, f := range fns.Functions {
		if want := 100*float64(f.Total)/400 - 100*float64(f.BaseTotal)/190; math.Abs(f.Delta-want) > 1e-9 {
			t.Errorf("function %s: change %v pts; want %v", f.Name, f.Delta, want)
		}
	}
	res, _ = e.do("GET", api+"/flamegraph?start=0&end=1&format=functions", nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Content-Disposition") != "" {
		t.Errorf("function table: status %d, %q, %q; want 200 JSON, not an attachment", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}

	// Reads are compressed for clients that accept it.
	res, b = e.do("GET", api+"/cpus", nil, "Accept-Encoding", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("cores map with Accept-Encoding gzip: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(bytes.NewReader(b)); err != nil || json.NewDecoder(zr).Decode(&cores) != nil || len(cores.CPUs) != 2 {
		t.Errorf("compressed cores map does not decode: %v", err)
	}
	// The standard library reads what klauspost/compress writes, gzip and
	// deflate alike.
	var plain bytes.Buffer
	_, raw := e.do("GET", api+"/flamegraph?start=0&end=3.5", nil, "Accept-Encoding", "identity")
	plain.Write(raw)
	for _, enc := range []string{"gzip", "deflate"} {
		res, b = e.do("GET", api+"/flamegraph?start=0&end=3.5", nil, "Accept-Encoding", enc)
		var r io.Reader
		var err error
		if enc == "gzip" {
			r, err = gzip.NewReader(bytes.NewReader(b))
		} else {
			r = flate.NewReader(bytes.NewReader(b))
		}
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
		}
		if res.Header.Get("Content-Encoding") != enc || err != nil || !bytes.Equal(got, plain.Bytes()) {
			t.Errorf("flame graph with Accept-Encoding %s: Content-Encoding %q, %v; want the plain JSON compressed", enc, res.Header.Get("Content-Encoding"), err)
		}
	}

	// A filter naming only what the capture lacks is refused, naming what
	// it has.
	for _, path := range []string{"/cpus?cpu=7", "/heatmap?cpu=7", "/hotspots?cpu=7", "/flamegraph?cpu=7"} {
		res, b := e.do("GET", api+path, nil)
		var body struct{ Error string }
		if json.Unmarshal(b, &body); res.StatusCode != http.StatusBadRequest || body.Error != "cpu: the capture has no CPU 7; its CPUs are 0-1" {
			t.Errorf("GET %s = %d %s; want 400 naming CPUs 0-1", path, res.StatusCode, b)
		}
	}

	// Ranges past the end are the client's mistake, named as such.
	res, b = e.do("GET", api+"/flamegraph?start=100&end=101", nil)
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("flame graph past the end = %d %s; want 400", res.StatusCode, b)
	}
}

// TestDiffAcrossProfiles compares a range of one profile with a range of
// another: start2 and end2 count from the base profile's T0, and an unknown
// base is the client's mistake.
func TestDiffAcrossProfiles(t *testing.T) {
	e := newEnv(t, Config{Engine: engine.Engine{}})
	target := e.upload(perfText(2, 100, 3), "web-2cpu")
	base := e.upload(perfText(1, 50, 2), "web-1cpu")
	var want struct {
		Total int64 `json:"total"`
	}
	res, b := e.do("GET", "/api/profiles/"+base.ID+"/flamegraph?start=0&end=1", nil)
	if res.StatusCode != 200 || json.Unmarshal(b, &want) != nil || want.Total == 0 {
		t.Fatalf("base flame graph: %d %s", res.StatusCode, b)
	}
	api := "/api/profiles/" + target.ID + "/diff?base=" + base.ID
	res, b = e.do("GET", api+"&start2=0&end2=1&start=1&end=3", nil)
	var diff struct {
		Total     int64    `json:"total"`
		BaseTotal int64    `json:"base_total"`
		Strings   []string `json:"strings"`
		Name      []int32  `json:"name"`
		Depth     []int32  `json:"depth"`
		TotalN    []int64  `json:"total_n"`
		BaseN     []int64  `json:"base_n"`
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &diff) != nil {
		t.Fatalf("diff across profiles: %d %s", res.StatusCode, b)
	}
	if diff.Total != 400 || diff.BaseTotal != want.Total {
		t.Errorf("diff across profiles: totals %d, %d; want 400, %d", diff.Total, diff.BaseTotal, want.Total)
	}
	for i, n := range diff.Name {
		if diff.Depth[i] == 1 && diff.Strings[n] == "kubelet" && (diff.BaseN[i] != 0 || diff.TotalN[i] != 200) {
			t.Errorf("kubelet: base %d, target %d; want 0, 200 (the base has one CPU, running web)", diff.BaseN[i], diff.TotalN[i])
		}
	}
	res, b = e.do("GET", api+"&start2=0&end2=1&start=1&end=3&format=folded", nil)
	if res.StatusCode != 200 || !bytes.Contains(b, []byte("kubelet;main.main;do_syscall_64;")) || !bytes.Contains(b, []byte(" 0 2020202000\n")) {
		t.Errorf("differential folded export across profiles = %d\n%s", res.StatusCode, b)
	}
	// The whole base profile when start2 and end2 are absent.
	res, b = e.do("GET", api+"&start=1&end=3", nil)
	if res.StatusCode != 200 || json.Unmarshal(b, &diff) != nil || diff.BaseTotal != 100 {
		t.Errorf("diff against a whole profile: %d, base total %d; want 200, 100", res.StatusCode, diff.BaseTotal)
	}
	// The flame graph route with a base is the differential graph, as the
	// CLI's flamegraph --start2 is: never the target alone.
	for _, q := range []string{"&start2=0&end2=1&start=1&end=3&format=folded", "&start=1&end=3"} {
		_, d := e.do("GET", api+q, nil)
		res, f := e.do("GET", "/api/profiles/"+target.ID+"/flamegraph?base="+base.ID+q, nil)
		if res.StatusCode != 200 || !bytes.Equal(f, d) {
			t.Errorf("flamegraph?base=…%s = %d\n%.300s\nwant the diff's\n%.300s", q, res.StatusCode, f, d)
		}
	}
	_, d := e.do("GET", "/api/profiles/"+target.ID+"/diff?start2=0&end2=1&start=1&end=3", nil)
	if res, f := e.do("GET", "/api/profiles/"+target.ID+"/flamegraph?start2=0&end2=1&start=1&end=3", nil); res.StatusCode != 200 || !bytes.Equal(f, d) {
		t.Errorf("flamegraph?start2=0&end2=1 = %d\n%.300s\nwant the diff's\n%.300s", res.StatusCode, f, d)
	}
	res, b = e.do("GET", "/api/profiles/"+target.ID+"/diff?base=nosuch&start=1&end=3", nil)
	if res.StatusCode != http.StatusBadRequest || !bytes.Contains(b, []byte(`base: there is no profile`)) {
		t.Errorf("diff against an unknown profile = %d %s; want 400 naming base", res.StatusCode, b)
	}
	res, b = e.do("GET", api+"&start2=5&end2=6&start=1&end=3", nil)
	if res.StatusCode != http.StatusBadRequest || !bytes.Contains(b, []byte("start2: 5 s is past the end of the capture (2.03")) {
		t.Errorf("diff with a base range past the base's end = %d %s; want 400 measuring start2 against the base", res.StatusCode, b)
	}
	res, b = e.do("GET", "/p/"+target.ID+"/diff?base="+base.ID+"&start2=0&end2=1&start=1&end=3", nil)
	// Its sides: host, capture and range of each.
	if got := elementText(string(b), `<tr data-testid="diff-base">`); res.StatusCode != 200 || !strings.HasPrefix(got, "Baseline "+base.Host+" web-1cpu 0–1 s (1 s)") {
		t.Errorf("diff page across profiles = %d, its baseline %q; want the base's host, name and range", res.StatusCode, got)
	}
	if got := elementText(string(b), `<tr data-testid="diff-target">`); !strings.HasPrefix(got, "Target "+target.Host+" "+target.Name+" 1–3 s (2 s)") {
		t.Errorf("diff page across profiles: its target %q; want the target's host, name and range", got)
	}
}

// TestWallClockRangeRefused checks that a flame graph range given as
// wall-clock times outside the capture is refused naming from or to, in
// wall-clock time, with the capture's span.
func TestWallClockRangeRefused(t *testing.T) {
	e := newEnv(t, Config{Engine: engine.Engine{}})
	text := strings.Replace(perfText(2, 100, 3), "# hostname", "# captured on    : Mon Nov 30 17:11:08 2026\n# hostname", 1)
	p := e.upload(text, "web-1") // the last sample, at 5089.04 s, is 17:11:08.5 UTC
	api := "/api/profiles/" + p.ID + "/flamegraph?"
	res, b := e.do("GET", api+"from=2026-11-30T18:00:00Z", nil)
	wantError(t, res, b, http.StatusBadRequest, "from: 2026-11-30T18:00:00Z is after the capture, which ran from ≈2026-11-30T17:11:05.51Z to ≈2026-11-30T17:11:08.5Z")
	res, b = e.do("GET", api+"to=2026-11-30T17:00:00Z", nil)
	wantError(t, res, b, http.StatusBadRequest, "to: 2026-11-30T17:00:00Z is before the capture, which ran from ≈2026-11-30T17:11:05.51Z")
	if res, b = e.do("GET", api+"from=2026-11-30T17:11:06Z&to=2026-11-30T17:11:07Z", nil); res.StatusCode != 200 {
		t.Errorf("flamegraph of a second within the capture = %d %s", res.StatusCode, b)
	}
}

// TestSamplesRoute checks the stack chart's samples against the flame graph
// of the same range and the limit that bounds a response.
func TestSamplesRoute(t *testing.T) {
	e := newEnv(t, Config{Engine: engine.Engine{}})
	p := e.upload(perfText(2, 100, 3), "web-1") // CPU 1 busy at 100 Hz from 0.05 s
	api := "/api/profiles/" + p.ID
	res, b := e.do("GET", api+"/samples?start=1&end=2&cpu=1", nil)
	var s struct {
		Start int64   `json:"start_ns"`
		Nodes int     `json:"nodes"`
		Count int     `json:"count"`
		Time  []int64 `json:"time"`
		CPU   []int32 `json:"cpu"`
		Leaf  []int32 `json:"leaf"`
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &s) != nil {
		t.Fatalf("samples = %d %.200s", res.StatusCode, b)
	}
	res, b = e.do("GET", api+"/flamegraph?start=1&end=2&cpu=1", nil)
	var fg struct {
		Total int64   `json:"total"`
		Name  []int32 `json:"name"`
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &fg) != nil {
		t.Fatalf("flamegraph = %d %.200s", res.StatusCode, b)
	}
	if s.Start != 5087e9 || s.Count != 100 || int64(s.Count) != fg.Total || s.Nodes != len(fg.Name) || len(s.Leaf) != 100 || len(s.Time) != 100 {
		t.Fatalf("samples = start %d, %d samples, %d nodes; want 5087e9, %d samples on the flame graph's %d nodes", s.Start, s.Count, s.Nodes, fg.Total, len(fg.Name))
	}
	for i := range s.Leaf {
		if s.CPU[i] != 1 || s.Leaf[i] <= 0 || int(s.Leaf[i]) >= s.Nodes || s.Time[i] < 0 || s.Time[i] >= 1e9 || (i > 0 && s.Time[i] < s.Time[i-1]) {
			t.Fatalf("sample %d: cpu %d leaf %d at +%d ns; want CPU 1, a node of the graph, in time order within the second", i, s.CPU[i], s.Leaf[i], s.Time[i])
		}
	}
	res, b = e.do("GET", api+"/samples?start=1&end=2&cpu=1&max_samples=99", nil)
	wantError(t, res, b, http.StatusBadRequest, "end: the range 1–2 s (1 s) holds 100 samples of these filters, more than the stack chart's limit of 99")
	// The whole capture ends the instant after its last sample, 3.04 s
	// and a nanosecond from T0: messages and the SVG's subtitle round it to
	// the microsecond.
	res, b = e.do("GET", api+"/samples?cpu=1&max_samples=99", nil)
	wantError(t, res, b, http.StatusBadRequest, "end: the range 0–3.04 s (3.04 s) holds 300 samples")
	if res, b = e.do("GET", api+"/flamegraph?cpu=1&format=svg", nil); res.StatusCode != 200 || !bytes.Contains(b, []byte("0–3.04 s (3.04 s) from T0, 300 samples; cpu=1")) {
		t.Errorf("flamegraph?format=svg = %d; want the subtitle 0–3.04 s (3.04 s) from T0, 300 samples; cpu=1 in\n%.1500s", res.StatusCode, b)
	}
	for _, q := range []string{"max_samples=0", "max_samples=abc", "max_samples=1000001"} {
		res, b = e.do("GET", api+"/samples?"+q, nil)
		wantError(t, res, b, http.StatusBadRequest, "max_samples:")
	}
}
