package timeline

import (
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

func TestExpired(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rt := subsecond.WallClock{Source: subsecond.WallRealtime}
	ps := []subsecond.Profile{
		{ID: "old-realtime", End: now.Add(-73 * time.Hour).UnixNano(), Wall: rt, Uploaded: now},
		{ID: "new-realtime", End: now.Add(-71 * time.Hour).UnixNano(), Wall: rt, Uploaded: now.Add(-100 * time.Hour)},
		// perf's boot clock, 10 s in: only the anchor says when that was.
		{ID: "old-boot", End: 10e9, Wall: subsecond.WallClock{Offset: now.Add(-80 * time.Hour).UnixNano(), Source: subsecond.WallCapturedOn, Approximate: true}, Uploaded: now},
		{ID: "no-clock-old-import", End: 10e9, Uploaded: now.Add(-73 * time.Hour)},
		{ID: "no-clock-new-import", End: 10e9, Uploaded: now.Add(-time.Hour)},
	}
	var got []string
	for _, p := range Expired(ps, now.Add(-72*time.Hour)) {
		got = append(got, p.ID)
	}
	want := []string{"old-realtime", "old-boot", "no-clock-old-import"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Expired = %q; want %q", got, want)
	}
}
