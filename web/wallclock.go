package web

import (
	"time"

	"github.com/subsecond/subsecond"
)

// Clock writes Unix nanoseconds as a time of day in UTC to the
// millisecond, without trailing zeros ("00:17:05.5", "00:17:07"), with the
// date first when asked ("2026-11-30 00:17:05.5"). The pages' script
// writes the same in the browser's zone when the URL says tz=local
// (web/src/wallclock.ts, fmtClock).
func Clock(ns int64, date bool) string {
	// Rounded to the millisecond, the layout's .999 writes the fraction
	// without trailing zeros, and nothing when it is zero.
	t := time.Unix(0, ns).UTC().Round(time.Millisecond)
	if date {
		return t.Format("2006-01-02 15:04:05.999")
	}
	return t.Format("15:04:05.999")
}

// Datetime writes Unix nanoseconds as the datetime attribute of a <time>
// element: RFC 3339 in UTC, to the millisecond.
func Datetime(ns int64) string {
	return time.Unix(0, ns).UTC().Round(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
}

// WallRange is a range [From, To) of wall-clock Unix nanoseconds to show,
// "≈" first when Approximate, with the date when Date.
type WallRange struct {
	From, To    int64
	Approximate bool
	Date        bool
}

// WallOf returns the wall-clock range of [start, end) on p's clock, or nil
// when p has no wall clock.
func WallOf(p *subsecond.Profile, start, end int64) *WallRange {
	if !p.Wall.Known() || !p.Timed() {
		return nil
	}
	return &WallRange{From: p.Wall.Wall(start), To: p.Wall.Wall(end), Approximate: p.Wall.Approximate}
}

func clockKind(date bool) string {
	if date {
		return "date"
	}
	return "time"
}
