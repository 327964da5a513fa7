package subsecond

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestAnchor(t *testing.T) {
	const last = 309_806_709_000 // the last sample, in ns of perf's clock
	tests := []struct {
		name string
		meta Metadata
		want WallClock
	}{
		{"nothing", Metadata{}, WallClock{}},
		{"realtime clock", Metadata{Clock: "realtime", CapturedOn: "Mon Nov 30 17:11:08 2026"}, WallClock{Source: WallRealtime}},
		{"reference time", Metadata{Clock: "monotonic", RefTODNS: 1796058675129022000, RefClockNS: 316170246221, TODOffsetNS: 7},
			WallClock{Offset: 1796058675129022000 - 316170246221, Source: WallReference}},
		{"tod field", Metadata{TODOffsetNS: 1796058358958776000, CapturedOn: "Mon Nov 30 17:11:08 2026"},
			WallClock{Offset: 1796058358958776000, Source: WallTOD}},
		{"captured on", Metadata{CapturedOn: "Mon Nov 30 17:11:08 2026"},
			WallClock{Offset: 1796058668_500_000_000 - last, Source: WallCapturedOn, Approximate: true}},
		{"captured on, unreadable", Metadata{CapturedOn: "yesterday"}, WallClock{}},
	}
	for _, tt := range tests {
		if got := Anchor(tt.meta, last); got != tt.want {
			t.Errorf("%s: Anchor(%+v) = %+v; want %+v", tt.name, tt.meta, got, tt.want)
		}
		// Samples without timestamps were taken at no known time, on
		// whatever clock perf recorded them.
		if got := Anchor(tt.meta, NoTime); got != (WallClock{}) {
			t.Errorf("%s, no timestamps: Anchor(%+v, NoTime) = %+v; want none", tt.name, tt.meta, got)
		}
	}
}

func TestParseCapturedOn(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"Mon Nov 30 17:11:08 2026", time.Date(2026, 11, 30, 17, 11, 8, 0, time.UTC), true},
		{"Sun Nov  1 03:00:59 2026", time.Date(2026, 11, 1, 3, 0, 59, 0, time.UTC), true}, // ctime pads the day
		{" Sun Nov 1 03:00:59 2026 ", time.Date(2026, 11, 1, 3, 0, 59, 0, time.UTC), true},
		{"2026-11-30 17:11:08", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseCapturedOn(tt.in)
		if ok != tt.ok || (ok && got != tt.want.UnixNano()) {
			t.Errorf("ParseCapturedOn(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want.UnixNano(), tt.ok)
		}
	}
}

func TestHosts(t *testing.T) {
	for _, tt := range []struct {
		hostname, want string
	}{
		{"vm", "vm"},
		{"", UnknownHost},
		{"  ", UnknownHost},
		{"web-1.example.com", "web-1.example.com"},
		{"a/b c\x1b[31m", "a_b_c_[31m"},
	} {
		got := hostOf(Metadata{Hostname: tt.hostname})
		if got != tt.want || CheckHost(got) != nil {
			t.Errorf("hostOf(%q) = %q (CheckHost: %v); want %q", tt.hostname, got, CheckHost(got), tt.want)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", "x\n", string(make([]byte, MaxHostLen+1))} {
		if err := CheckHost(bad); err == nil {
			t.Errorf("CheckHost(%q) = nil; want an error", bad)
		}
	}
}

// TestQueryWallClockRange: from and to give a range as wall-clock times,
// converted with the profile's anchor; without one, or beside start and
// end, they are refused by name.
func TestQueryWallClockRange(t *testing.T) {
	boot := Profile{ID: "b", Start: 300_250_000_000, End: 419_900_000_000,
		Wall: WallClock{Offset: 1796058358_958776000, Source: WallReference}}
	rt := Profile{ID: "r", Start: 1796058664_974380046, End: 1796058784_000000000, Wall: WallClock{Source: WallRealtime}}
	// Anchored by "# captured on: Tue Mar 11 02:14:07 2025" (1741659247 s).
	approx := Profile{ID: "a", Start: 5086_001_000_000, End: 5206_000_000_000,
		Wall: WallClock{Offset: 1741659247_500_000_000 - 5206_000_000_000, Source: WallCapturedOn, Approximate: true}}
	for _, tt := range []struct {
		p     Profile
		query string
		want  Range
		err   string
	}{
		{rt, "from=2026-11-30T17:11:10Z&to=2026-11-30T17:11:12.5Z", Range{1796058670e9, 1796058672_500000000}, ""},
		{rt, "from=1796058670.25", Range{1796058670_250000000, rt.End + 1}, ""},
		// 17:11:00 UTC is 1796058660, 301.041224 s on the boot clock.
		{boot, "from=2026-11-30T17:11:00Z&to=2026-11-30T17:11:01Z", Range{1796058660e9 - boot.Wall.Offset, 1796058661e9 - boot.Wall.Offset}, ""},
		{Profile{ID: "n", Start: 1e9, End: 2e9}, "from=2026-11-30T17:11:00Z", Range{}, "from: this capture has no wall-clock time"},
		{rt, "from=2026-11-30T17:11:10Z&start=3", Range{}, "from: give the range as from and to, or as start and end, not both"},
		{rt, "to=yesterday", Range{}, `to: "yesterday" is neither an RFC 3339 time`},
		// A range outside the capture is refused by the name it was given
		// with, in wall-clock time, with the capture's wall-clock span.
		{rt, "from=2026-11-30T18:00:00Z", Range{}, "from: 2026-11-30T18:00:00Z is after the capture, which ran from 2026-11-30T17:11:04.97438Z to 2026-11-30T17:13:04Z"},
		{rt, "to=2026-11-30T17:11:04.97438Z", Range{}, "to: 2026-11-30T17:11:04.97438Z is before the capture, which ran from 2026-11-30T17:11:04.97438Z to 2026-11-30T17:13:04Z"},
		{rt, "from=2026-11-30T17:12:00Z&to=2026-11-30T17:11:59.5Z", Range{}, "to: the range [2026-11-30T17:12:00Z, 2026-11-30T17:11:59.5Z) is empty; to must be after from"},
		{approx, "from=2026-11-30T00:16:59Z", Range{}, "from: 2026-11-30T00:16:59Z is after the capture, which ran from ≈2025-03-11T02:12:07.501Z to ≈2025-03-11T02:14:07.5Z"},
		// Bounds far outside it are clamped, as offsets are.
		{rt, "from=0&to=9000000000", Range{1796058664e9, rt.End + 1}, ""},
		{rt, "from=0001-01-01T00:00:00Z", Range{}, `from: "0001-01-01T00:00:00Z" is outside the years 1678 to 2261`},
	} {
		v, _ := url.ParseQuery(tt.query)
		q, err := ParseQuery(v)
		if err == nil {
			err = q.Resolve(&tt.p)
		}
		switch {
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err) || !errors.Is(err, ErrInvalid)):
			t.Errorf("%s: error %v; want %q", tt.query, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.query, err)
		case tt.err == "" && q.Range != tt.want:
			t.Errorf("%s: range %v; want %v", tt.query, q.Range, tt.want)
		}
	}
}
