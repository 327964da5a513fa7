package timeline

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/query"
)

func TestSessionsOf(t *testing.T) {
	const m = int64(time.Minute)
	caps := []Capture{
		{ID: "a", Start: 0, End: 10 * m, Samples: 1},
		{ID: "b", Start: 10 * m, End: 20 * m, Samples: 2},
		{ID: "c", Start: 50 * m, End: 60 * m, Samples: 4},   // a pause of exactly SessionGap: the same session
		{ID: "d", Start: 90*m + 1, End: 95 * m, Samples: 8}, // 1 ns longer: a new one
		{ID: "e", Start: 91 * m, End: 92 * m, Samples: 16},  // inside d
	}
	numberSessions(caps)
	var got []int
	for _, c := range caps {
		got = append(got, c.Session)
	}
	if want := []int{1, 1, 1, 2, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("numberSessions = %v; want %v", got, want)
	}
	ss := SessionsOf(caps)
	want := []Session{{Number: 1, Start: 0, End: 60 * m, Captures: 3, Samples: 7}, {Number: 2, Start: 90*m + 1, End: 95 * m, Captures: 2, Samples: 24}}
	if !reflect.DeepEqual(ss, want) {
		t.Errorf("SessionsOf = %+v; want %+v", ss, want)
	}
}

func TestDefaultRange(t *testing.T) {
	const s = int64(time.Second)
	day := 24 * 3600 * s
	caps := []Capture{{Start: 100 * s, End: 200 * s}, {Start: 200 * s, End: 300*s + 5}, {Start: 90 * day, End: 90*day + 60*s}}
	numberSessions(caps)
	for _, tt := range []struct {
		want     Span
		from, to int64
	}{
		{Span{}, 90 * day, 90*day + 60*s},                                             // the latest session
		{Span{Session: 1}, 100 * s, 300*s + 5},                                        // the first
		{Span{Session: 1, From: 150 * s}, 150 * s, 300*s + 5},                         // from given: it stays
		{Span{From: 250 * s}, 250 * s, 300*s + 5},                                     // to: the end of from's session
		{Span{From: 1000 * s}, 1000 * s, 90*day + 60*s},                               // from in a pause: the next session's end
		{Span{To: 90*day + 30*s}, 90 * day, 90*day + 30*s},                            // from: the start of to's session
		{Span{To: 50 * day}, 100 * s, 50 * day},                                       // to in a pause: the session before
		{Span{From: 1, To: 2}, 1, 2},                                                  // both given
		{Span{Session: 2, From: 90*day + 1500*1e6}, 90*day + 1500*1e6, 90*day + 60*s}, // no rounding of a given bound
	} {
		from, to, err := defaultRange(caps, tt.want)
		if err != nil || from != tt.from || to != tt.to {
			t.Errorf("defaultRange(%+v) = %d, %d, %v; want %d, %d", tt.want, from, to, err, tt.from, tt.to)
		}
	}
	_, _, err := defaultRange(caps, Span{Session: 3})
	var pe *query.ParamError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "2 sessions") {
		t.Errorf("defaultRange(session 3) = %v; want a ParamError saying the host has 2 sessions", err)
	}
}

// TestSessionMonthsApart: a host whose first capture was recorded months
// before its night (the bundled sample under the night's host name) opens
// on the night, at the night's resolution; session 1 shows the capture.
func TestSessionMonthsApart(t *testing.T) {
	start := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 4, Length: time.Minute,
		Gaps: map[int]time.Duration{1: 150 * 24 * time.Hour, 3: 20 * time.Minute}, Unanchored: -1, Seed: 3}
	src, _, ids := importNight(t, n)
	ctx := context.Background()
	list, err := Sessions(ctx, src, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	night := n.CaptureStart(1).UnixNano()
	if len(list.Sessions) != 2 || list.Sessions[0].Captures != 1 || list.Sessions[1].Captures != 3 ||
		subsecond.FloorSecond(list.Sessions[0].Start) != start.UnixNano() || subsecond.FloorSecond(list.Sessions[1].Start) != night {
		t.Fatalf("Sessions = %+v; want one capture from %v, then three from %v", list.Sessions, start, n.CaptureStart(1))
	}
	g, err := Timeline(ctx, src, "node-1", Span{})
	if err != nil {
		t.Fatal(err)
	}
	if g.From != night || g.To != list.Sessions[1].End || g.Bucket != 2*int64(time.Second) || len(g.Captures) != 3 {
		t.Errorf("Timeline(default) = [%d, %d) in %d ns buckets over %d captures; want the night [%d, %d) in 2 s buckets (23 minutes in at most 1,000) over 3",
			g.From, g.To, g.Bucket, len(g.Captures), night, list.Sessions[1].End)
	}
	g, err = Timeline(ctx, src, "node-1", Span{Session: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Captures) != 1 || g.Captures[0].ID != ids[0] || g.Captures[0].Session != 1 || g.From != start.UnixNano() {
		t.Errorf("Timeline(session 1) = %+v from %d; want capture %s from %d", g.Captures, g.From, ids[0], start.UnixNano())
	}
}

// TestHotspotsOfSession: a host's hot spots are those of one recording
// session, the latest by default, each compared with the same range an
// hour earlier when the host recorded it, else with the same place in the
// capture before.
func TestHotspotsOfSession(t *testing.T) {
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	// Two captures back to back, then one an hour after the first.
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 3, Length: time.Minute,
		Gaps: map[int]time.Duration{2: 58 * time.Minute}, Unanchored: -1, Seed: 3}
	c1, c2 := n.CaptureStart(1), n.CaptureStart(2)
	n.Bursts = []nightgen.Burst{
		{CPU: 1, Start: c1.Add(10 * time.Second), End: c1.Add(15 * time.Second)},
		{CPU: 2, Start: c2.Add(20 * time.Second), End: c2.Add(25 * time.Second)},
	}
	src, _, ids := importNight(t, n)
	ctx := context.Background()
	hour := int64(time.Hour)
	for _, tc := range []struct {
		session, want int
		cpu           int32
		capture       string
		shift         int64 // how far before the spot its baseline lies
	}{
		{0, 2, 2, ids[2], hour},
		{2, 2, 2, ids[2], hour},
		{1, 1, 1, ids[1], int64(time.Minute)}, // the captures start a minute apart
	} {
		rep, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: heatmap.MeasureSystem, Session: tc.session})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Session != tc.want || rep.Found != 1 || len(rep.Spots) != 1 {
			t.Fatalf("session %d: session %d, %d hot spots %+v; want session %d's one burst", tc.session, rep.Session, rep.Found, rep.Spots, tc.want)
		}
		s := rep.Spots[0]
		if s.CPU != tc.cpu || s.Capture != tc.capture {
			t.Errorf("session %d: CPU %d in %s; want CPU %d in %s", tc.session, s.CPU, s.Capture, tc.cpu, tc.capture)
		}
		if want := HostDiffURL("node-1", s.Start, s.End, s.Start-tc.shift, s.End-tc.shift, s.CPU); s.CompareURL != want {
			t.Errorf("session %d: compare url %s; want %s", tc.session, s.CompareURL, want)
		}
	}
	var pe *query.ParamError
	if _, err := Hotspots(ctx, src, "node-1", HotOptions{Session: 3}); !errors.As(err, &pe) || pe.Name != "session" {
		t.Errorf("session 3 of 2: %v; want a session error", err)
	}
	// The first capture's hot spot has no capture before it, and nothing
	// an hour earlier: no comparison.
	n.Bursts = []nightgen.Burst{{CPU: 3, Start: start.Add(5 * time.Second), End: start.Add(10 * time.Second)}}
	src, _, _ = importNight(t, n)
	rep, err := Hotspots(ctx, src, "node-1", HotOptions{Measure: heatmap.MeasureSystem, Session: 1})
	if err != nil || len(rep.Spots) != 1 || rep.Spots[0].CompareURL != "" {
		t.Errorf("a hot spot in the first capture: %v, %+v; want one, with no comparison", err, rep)
	}
}
