package server

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// TestHostSessions: the bundled sample (gpu-node-17, March 2025) and a
// night of the same host name months later are two recording sessions;
// the host's views open on the night, the sample is session 1.
func TestHostSessions(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	sample, _, err := e.st.Import(ctx, sampledata.IncidentCompressed(), store.ImportOptions{Name: "incident"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: sample.Host, CPUs: 4, Hz: 49, Start: start, Captures: 3, Length: time.Minute, Unanchored: -1, Seed: 5}
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := e.st.Import(ctx, pr, store.ImportOptions{FileName: "c"}); err != nil {
			t.Fatal(err)
		}
	}

	var list timeline.SessionList
	e.getJSON("/api/hosts/"+sample.Host+"/sessions", &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Captures != 1 || list.Sessions[0].Samples != sample.Samples ||
		list.Sessions[1].Number != 2 || list.Sessions[1].Captures != 3 || subsecond.FloorSecond(list.Sessions[1].Start) != start.UnixNano() {
		t.Fatalf("sessions of %s = %+v; want the sample, then 3 captures from %v", sample.Host, list.Sessions, start)
	}

	var g timeline.Grid
	e.getJSON("/api/hosts/"+sample.Host+"/timeline", &g)
	if g.From != start.UnixNano() || g.To != list.Sessions[1].End || g.Bucket != int64(time.Second) || len(g.Captures) != 3 || len(g.CPUs) != 4 {
		t.Errorf("timeline = [%d, %d) in %d ns buckets, %d captures, %d CPUs; want the night from %v in 1 s buckets, 3 captures, 4 CPUs",
			g.From, g.To, g.Bucket, len(g.Captures), len(g.CPUs), start)
	}
	e.getJSON("/api/hosts/"+sample.Host+"/timeline?session=1", &g)
	if len(g.Captures) != 1 || g.Captures[0].ID != sample.ID || len(g.CPUs) != 96 {
		t.Errorf("timeline of session 1: %d captures, %d CPUs; want the sample's one with 96", len(g.Captures), len(g.CPUs))
	}
	if res, b := e.do("GET", "/api/hosts/"+sample.Host+"/timeline?session=3", nil); res.StatusCode != 400 || !strings.Contains(string(b), "2 sessions") {
		t.Errorf("session=3 = %d %s; want 400 saying the host has 2 sessions", res.StatusCode, b)
	}
	// The hot spots are those of the session shown: the night's (which has
	// none), or with session=1 the sample's.
	var hot timeline.Report
	e.getJSON("/api/hosts/"+sample.Host+"/hotspots?measure=system", &hot)
	if hot.Session != 2 || hot.Found != 0 {
		t.Errorf("hot spots by default: session %d, %d found (%+v); want the night's, none", hot.Session, hot.Found, hot.Spots)
	}
	e.getJSON("/api/hosts/"+sample.Host+"/hotspots?measure=system&session=1", &hot)
	if hot.Session != 1 || hot.Found == 0 || hot.Spots[0].Capture != sample.ID {
		t.Errorf("hot spots of session 1: session %d, %d found (%+v); want the sample's", hot.Session, hot.Found, hot.Spots)
	}
	if res, b := e.do("GET", "/api/hosts/"+sample.Host+"/hotspots?session=3", nil); res.StatusCode != 400 || !strings.Contains(string(b), "2 sessions") {
		t.Errorf("hot spots of session 3 = %d %s; want 400 saying the host has 2 sessions", res.StatusCode, b)
	}
	if res, _ := e.do("GET", "/api/hosts/nosuch/sessions", nil); res.StatusCode != 404 {
		t.Errorf("sessions of an unknown host = %d; want 404", res.StatusCode)
	}

	// The page offers both in its picker.
	res, b := e.do("GET", "/hosts/"+sample.Host, nil)
	page := string(b)
	if res.StatusCode != 200 || !strings.Contains(page, `data-testid="night-session"`) || strings.Count(page, "<option value=\"") < 2 ||
		!strings.Contains(page, ">2: 2026-11-30 03:00:00–03:03:00.021 UTC, 3 captures<") {
		t.Errorf("host page = %d without a picker of both sessions:\n%s", res.StatusCode, elementText(page, `<select id="night-session"`))
	}
}
