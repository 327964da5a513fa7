package query

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestQueryWallClockRange: from and to give a range as wall-clock times,
// converted with the profile's anchor; without one, or beside start and
// end, they are refused by name.
func TestQueryWallClockRange(t *testing.T) {
	boot := subsecond.Profile{ID: "b", Start: 300_250_000_000, End: 419_900_000_000,
		Wall: subsecond.WallClock{Offset: 1796058358_958776000, Source: subsecond.WallReference}}
	rt := subsecond.Profile{ID: "r", Start: 1796058664_974380046, End: 1796058784_000000000, Wall: subsecond.WallClock{Source: subsecond.WallRealtime}}
	// Anchored by "# captured on: Tue Mar 11 02:14:07 2025" (1741659247 s).
	approx := subsecond.Profile{ID: "a", Start: 5086_001_000_000, End: 5206_000_000_000,
		Wall: subsecond.WallClock{Offset: 1741659247_500_000_000 - 5206_000_000_000, Source: subsecond.WallCapturedOn, Approximate: true}}
	for _, tt := range []struct {
		p     subsecond.Profile
		query string
		want  subsecond.Range
		err   string
	}{
		{rt, "from=2026-11-30T17:11:10Z&to=2026-11-30T17:11:12.5Z", subsecond.Range{Start: 1796058670e9, End: 1796058672_500000000}, ""},
		{rt, "from=1796058670.25", subsecond.Range{Start: 1796058670_250000000, End: rt.End + 1}, ""},
		// 17:11:00 UTC is 1796058660, 301.041224 s on the boot clock.
		{boot, "from=2026-11-30T17:11:00Z&to=2026-11-30T17:11:01Z", subsecond.Range{Start: 1796058660e9 - boot.Wall.Offset, End: 1796058661e9 - boot.Wall.Offset}, ""},
		{subsecond.Profile{ID: "n", Start: 1e9, End: 2e9}, "from=2026-11-30T17:11:00Z", subsecond.Range{}, "from: this capture has no wall-clock time"},
		{rt, "from=2026-11-30T17:11:10Z&start=3", subsecond.Range{}, "from: give the range as from and to, or as start and end, not both"},
		{rt, "to=yesterday", subsecond.Range{}, `to: "yesterday" is neither an RFC 3339 time`},
		// A range outside the capture is refused by the name it was given
		// with, in wall-clock time, with the capture's wall-clock span.
		{rt, "from=2026-11-30T18:00:00Z", subsecond.Range{}, "from: 2026-11-30T18:00:00Z is after the capture, which ran from 2026-11-30T17:11:04.974380046Z to 2026-11-30T17:13:04Z"},
		{rt, "to=2026-11-30T17:11:04.97438Z", subsecond.Range{}, "to: 2026-11-30T17:11:04.97438Z is before the capture, which ran from 2026-11-30T17:11:04.974380046Z to 2026-11-30T17:13:04Z"},
		{rt, "from=2026-11-30T17:12:00Z&to=2026-11-30T17:11:59.5Z", subsecond.Range{}, "to: the range [2026-11-30T17:12:00Z, 2026-11-30T17:11:59.5Z) is empty; to must be after from"},
		{approx, "from=2026-11-30T00:16:59Z", subsecond.Range{}, "from: 2026-11-30T00:16:59Z is after the capture, which ran from ≈2025-03-11T02:12:07.501Z to ≈2025-03-11T02:14:07.5Z"},
		// Bounds far outside it are clamped, as offsets are.
		{rt, "from=0&to=9000000000", subsecond.Range{Start: 1796058664e9, End: rt.End + 1}, ""},
		{rt, "from=0001-01-01T00:00:00Z", subsecond.Range{}, `from: "0001-01-01T00:00:00Z" is outside the years 1678 to 2261`},
	} {
		v, _ := url.ParseQuery(tt.query)
		q, err := Parse(v)
		if err == nil {
			err = q.Resolve(&tt.p)
		}
		switch {
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err) || !errors.Is(err, subsecond.ErrInvalid)):
			t.Errorf("%s: error %v; want %q", tt.query, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.query, err)
		case tt.err == "" && q.Range != tt.want:
			t.Errorf("%s: range %v; want %v", tt.query, q.Range, tt.want)
		}
	}
}
