package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/flame"
)

// TestHostRangeAPI checks the flame graph, diff, samples and exports of a
// host's range across a rotation point, the range's bound and the pages.
func TestHostRangeAPI(t *testing.T) {
	e := newEnv(t, Config{})
	n := importNightgen(t, e)
	rot := n.CaptureStart(1)
	wall := func(d time.Duration) string { return rot.Add(d).UTC().Format(time.RFC3339Nano) }
	span := "from=" + wall(-5*time.Second) + "&to=" + wall(5*time.Second)

	var g, one, two flame.Graph
	e.getJSON("/api/hosts/node-1/flamegraph?idle=1&"+span, &g)
	// The same range as two capture views, one on each side of the rotation.
	e.getJSON("/api/hosts/node-1/flamegraph?idle=1&from="+wall(-5*time.Second)+"&to="+wall(0), &one)
	e.getJSON("/api/hosts/node-1/flamegraph?idle=1&from="+wall(0)+"&to="+wall(5*time.Second), &two)
	if g.Total == 0 || g.Total != one.Total+two.Total {
		t.Errorf("10 s across the rotation: %d samples; its halves %d + %d", g.Total, one.Total, two.Total)
	}
	if want := int64(10 * 4 * 49); g.Total < want-8 || g.Total > want+8 {
		t.Errorf("10 s of 4 CPUs at 49 Hz: %d samples; want about %d", g.Total, want)
	}
	if g.Unrecorded != 0 || g.Start != rot.Add(-5*time.Second).UnixNano() || g.End != rot.Add(5*time.Second).UnixNano() {
		t.Errorf("graph [%d, %d) with %d ns unrecorded; want the range asked for, all recorded", g.Start, g.End, g.Unrecorded)
	}

	// Past the last capture: the part after it is said.
	var tail flame.Graph
	end := n.CaptureStart(2).Add(time.Minute)
	e.getJSON("/api/hosts/node-1/flamegraph?from="+end.Add(-4*time.Second).Format(time.RFC3339)+"&to="+end.Add(6*time.Second).Format(time.RFC3339), &tail)
	if d := time.Duration(tail.Unrecorded); d < 5*time.Second || d > 6*time.Second {
		t.Errorf("6 s past the last capture: %v unrecorded; want about 6 s", d)
	}

	// The diff of two host ranges: its sides are the two graphs.
	var d flame.Graph
	e.getJSON("/api/hosts/node-1/diff?idle=1&"+span+"&from2="+wall(-65*time.Second)+"&to2="+wall(-55*time.Second), &d)
	var base flame.Graph
	e.getJSON("/api/hosts/node-1/flamegraph?idle=1&from="+wall(-65*time.Second)+"&to="+wall(-55*time.Second), &base)
	if d.Total != g.Total || d.BaseTotal != base.Total || d.BaseUnrecorded != base.Unrecorded {
		t.Errorf("diff totals %d vs %d; the ranges' graphs %d vs %d", d.Total, d.BaseTotal, g.Total, base.Total)
	}

	// Every export answers.
	for _, f := range flame.Formats() {
		res, b := e.do("GET", "/api/hosts/node-1/flamegraph?"+span+"&format="+f.Name, nil)
		if res.StatusCode != http.StatusOK || len(b) == 0 {
			t.Errorf("format %s: %d %.200s", f.Name, res.StatusCode, b)
		}
	}
	var samples flame.Samples
	e.getJSON("/api/hosts/node-1/samples?idle=1&"+span, &samples)
	if int64(samples.Count) != g.Total || samples.Nodes != g.Len() {
		t.Errorf("samples: %d over %d nodes; the graph has %d over %d", samples.Count, samples.Nodes, g.Total, g.Len())
	}

	// Offsets mean nothing on a host; a range with no capture, or of a CPU
	// none has, holds nothing.
	for path, want := range map[string]int{
		"/api/hosts/node-1/flamegraph?start=1&end=2":                                                          400,
		"/api/hosts/node-1/diff?" + span:                                                                      400,
		"/api/hosts/node-1/flamegraph?from=2026-11-29T00:00:00Z&to=2026-11-29T00:00:10Z":                      400,
		"/api/hosts/nobody/flamegraph?" + span:                                                                404,
		"/api/hosts/node-1/flamegraph?from=" + wall(5*time.Second) + "&to=" + wall(-5*time.Second):            400,
		"/api/hosts/node-1/flamegraph?from=" + wall(-5*time.Second) + "&to=" + wall(5*time.Second) + "&cpu=9": 400,
	} {
		if res, b := e.do("GET", path, nil); res.StatusCode != want {
			t.Errorf("GET %s = %d %s; want %d", path, res.StatusCode, b, want)
		}
	}

	// The page heads the range with its host, time and captures.
	res, b := e.do("GET", "/hosts/node-1/flame?"+span, nil)
	if res.StatusCode != 200 || !strings.Contains(string(b), "node-1 · 2026-11-30T03:00:55Z – 2026-11-30T03:01:05Z (10s) · 2 captures") {
		t.Errorf("host flame page = %d; want its heading:\n%.2000s", res.StatusCode, b)
	}
	for _, kind := range []string{"stacks", "diff"} {
		q := span
		if kind == "diff" {
			q += "&from2=" + wall(-65*time.Second) + "&to2=" + wall(-55*time.Second)
		}
		if res, b := e.do("GET", "/hosts/node-1/"+kind+"?"+q, nil); res.StatusCode != 200 {
			t.Errorf("host %s page = %d %.300s", kind, res.StatusCode, b)
		}
	}
	res, b = e.do("GET", "/hosts/node-1/flame?from="+end.Add(-4*time.Second).Format(time.RFC3339)+"&to="+end.Add(6*time.Second).Format(time.RFC3339), nil)
	if res.StatusCode != 200 || !strings.Contains(string(b), "s of this range were not recorded") {
		t.Errorf("host flame page past the last capture = %d; want it to say what was not recorded", res.StatusCode)
	}
}

// TestHostRangeBound checks that a host range holding more samples than
// the server's limit, by the captures' summaries, is refused before any
// capture is loaded, with 413 naming how to narrow it.
func TestHostRangeBound(t *testing.T) {
	e := newEnv(t, Config{MaxRangeSamples: 1000})
	importNightgen(t, e)
	res, b := e.do("GET", "/api/hosts/node-1/flamegraph", nil)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "limit of 1000") || !strings.Contains(string(b), "cpu") {
		t.Errorf("the whole night past a 1,000-sample limit = %d %s; want 413 naming the limit, from, to and cpu", res.StatusCode, b)
	}
	if e.s.ranges.Bytes() != 0 {
		t.Errorf("a refused range left %d bytes in the range cache", e.s.ranges.Bytes())
	}
	// Five seconds of one CPU fit.
	res, b = e.do("GET", "/api/hosts/node-1/flamegraph?cpu=1&from=2026-11-30T03:00:10Z&to=2026-11-30T03:00:15Z", nil)
	if res.StatusCode != http.StatusOK {
		t.Errorf("5 s of one CPU = %d %s; want 200", res.StatusCode, b)
	}
}
