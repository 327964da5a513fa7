package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// form returns one of the real captures in ../testdata/perf, compressed as
// it is stored there.
func form(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "perf", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTracepointFirstCapture uploads a capture whose first sample is a
// sched:sched_switch tracepoint: the views show its cpu-clock samples by
// default, and the page offers both events with their counts.
func TestTracepointFirstCapture(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(form(t, "tracepoint-first.perf.txt.gz"), "tracepoints")
	if len(p.Events) != 2 || p.Events[0].Name != "sched:sched_switch" || p.Events[0].Samples != 282 ||
		p.Events[1].Name != "cpu-clock" || p.Events[1].Samples != 656 || p.DefaultEvent() != 1 {
		t.Fatalf("events %+v; want sched:sched_switch (282) then cpu-clock (656), the default", p.Events)
	}
	var fg struct {
		Total int64 `json:"total"`
	}
	for ev, want := range map[string]int64{"": 656, "cpu-clock": 656, "sched:sched_switch": 282} {
		e.getJSON("/api/profiles/"+p.ID+"/flamegraph?event="+ev, &fg)
		if fg.Total != want {
			t.Errorf("flame graph of event %q: total %d samples; want %d", ev, fg.Total, want)
		}
	}
	res, body := e.do("GET", "/p/"+p.ID, nil)
	page := string(body)
	if res.StatusCode != 200 {
		t.Fatalf("profile page: %d", res.StatusCode)
	}
	for _, want := range []string{
		`<option value="sched:sched_switch">sched:sched_switch (282 samples)</option>`,
		`<option value="" selected>cpu-clock (656 samples, default)</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("profile page lacks %s", want)
		}
	}
}

// TestNoTimeCapture uploads a capture printed by perf script -F
// comm,pid,ip,sym,dso: its flame graph and exports hold every sample, and
// the views that need time answer 400 saying why and how to record them.
func TestNoTimeCapture(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(form(t, "no-time-callchain.perf.txt.gz"), "no time")
	if p.Samples != 242 || p.Timed() {
		t.Fatalf("profile: %d samples, timed %v; want 242 without timestamps", p.Samples, p.Timed())
	}
	api := "/api/profiles/" + p.ID
	var fg struct {
		Total int64 `json:"total"`
	}
	e.getJSON(api+"/flamegraph", &fg)
	if fg.Total != 242 {
		t.Errorf("flame graph total %d; want all 242 samples", fg.Total)
	}
	for _, format := range []string{"folded", "svg", "pprof"} {
		if res, body := e.do("GET", api+"/flamegraph?format="+format, nil); res.StatusCode != 200 || len(body) == 0 {
			t.Errorf("flame graph as %s: %d %.200s", format, res.StatusCode, body)
		}
	}
	for _, path := range []string{"/heatmap", "/cpus", "/hotspots", "/flamegraph?start=1", "/flamegraph?end=2", "/diff?start2=0&end2=1", "/samples"} {
		res, body := e.do("GET", api+path, nil)
		if res.StatusCode != 400 || !strings.Contains(string(body), "no timestamps") || !strings.Contains(string(body), "-F comm,pid,tid,cpu,time") || strings.Contains(string(body), "invalid") {
			t.Errorf("GET %s = %d %s; want 400 saying the capture has no timestamps and how to record them", path, res.StatusCode, body)
		}
	}
	if _, body := e.do("GET", "/p/"+p.ID, nil); !strings.Contains(string(body), `data-testid="no-time"`) {
		t.Errorf("the profile page does not say the capture has no timestamps in its metadata")
	}
	for _, path := range []string{"/p/" + p.ID, "/p/" + p.ID + "/flame"} {
		res, body := e.do("GET", path, nil)
		if res.StatusCode != 200 || !strings.Contains(string(body), "no timestamps") {
			t.Errorf("GET %s = %d; want the page, saying the capture has no timestamps:\n%.300s", path, res.StatusCode, body)
		}
	}
}

// TestPeggedCoreHotspots uploads the capture of a core pegged mostly in the
// kernel: measure=system finds it in the API and on the page, every
// episode carries its busy, system and user shares, and a filter that
// hides it says so in the answer and on the page.
func TestPeggedCoreHotspots(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(form(t, "dd-pegged-cpu1.perf.txt.zst"), "dd")
	api := "/api/profiles/" + p.ID + "/hotspots"
	var rep subsecond.HotspotReport
	e.getJSON(api+"?measure=system", &rep)
	if rep.Measure != "system" || len(rep.Spots) != 1 || rep.Spots[0].CPU != 1 || rep.Spots[0].Comm != "dd" {
		t.Fatalf("measure=system: %+v; want dd's episode on CPU 1 alone", rep)
	}
	if s := rep.Spots[0]; s.System < 0.75 || s.Busy < 0.95 || s.User <= 0 || s.URL == "" {
		t.Errorf("dd's episode: busy %.2f system %.2f user %.2f url %q", s.Busy, s.System, s.User, s.URL)
	}
	e.getJSON(api+"?only=kernel&threshold=0.9", &rep)
	if len(rep.Hidden) == 0 || !strings.Contains(rep.Note, "hidden by only=kernel") {
		t.Errorf("only=kernel, threshold 0.9: hidden %v note %q; want CPU 1 named as hidden", rep.Hidden, rep.Note)
	}

	_, body := e.do("GET", "/p/"+p.ID+"?only=kernel&threshold=0.9", nil)
	page := string(body)
	if !strings.Contains(page, `data-testid="hotspots-note">`) || !strings.Contains(page, "hidden by only=kernel") ||
		!strings.Contains(page, "≥ 90% busy for 1 s or more") {
		t.Errorf("profile page with only=kernel, threshold 0.9 lacks the note on the hidden core")
	}
	_, body = e.do("GET", "/p/"+p.ID+"?measure=system", nil)
	page = string(body)
	if !strings.Contains(page, "≥ 70% in the kernel (system time) for 1 s or more") || !strings.Contains(page, `<span class="comm">dd</span>`) ||
		!strings.Contains(page, `system)</span>`) || strings.Contains(page, `data-testid="hotspots-note"`) {
		t.Errorf("profile page with measure=system: want dd's episode with its system share and no note")
	}
}
