package subsecond

import (
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
		{"..", "__"},
	} {
		got := hostOf(Metadata{Hostname: tt.hostname})
		if got != tt.want || HostProblem(got) != "" {
			t.Errorf("hostOf(%q) = %q (HostProblem: %q); want %q", tt.hostname, got, HostProblem(got), tt.want)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", "x\n", ".", "..", string(make([]byte, MaxHostLen+1))} {
		if HostProblem(bad) == "" {
			t.Errorf("HostProblem(%q) = \"\"; want a reason", bad)
		}
	}
}
