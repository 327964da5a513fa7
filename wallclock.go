package subsecond

import (
	"strings"
	"time"
)

// UnknownHost is the host of a profile whose capture names none and whose
// import gave none.
const UnknownHost = "unknown"

// Sources of a profile's wall-clock anchor, from the most to the least
// exact.
const (
	// WallRealtime: the samples were recorded with perf record -k
	// CLOCK_REALTIME ("# clockid: realtime"), so their times are Unix
	// nanoseconds already.
	WallRealtime = "realtime"
	// WallReference: perf's "# reference time" header line ties the
	// capture's clock to the time of day, to the microsecond.
	WallReference = "reference"
	// WallTOD: the samples carry perf script's tod field (-F +tod), read as
	// UTC, to the microsecond.
	WallTOD = "tod"
	// WallBoot: the capture has no anchor of its own but shares its boot
	// clock with an anchored capture of the same host.
	WallBoot = "boot"
	// WallCapturedOn: estimated from "# captured on" (when perf finished
	// writing the capture, to the second, read as UTC) anchored on the last
	// sample; approximate.
	WallCapturedOn = "captured-on"
)

// WallClock ties a profile's sample times to the wall clock: a sample taken
// at time t (as perf printed it) was taken at Unix time t+Offset
// nanoseconds. The zero WallClock means the wall-clock time is unknown.
type WallClock struct {
	Offset int64  `json:"offset_ns"`
	Source string `json:"source,omitempty"` // one of the Wall* constants; "" when unknown
	// Approximate is set when the anchor is an estimate, good to about a
	// second, that every view showing it must mark as such.
	Approximate bool `json:"approximate,omitempty"`
}

// Known reports whether the wall-clock time of the samples is known, exactly
// or approximately.
func (w WallClock) Known() bool { return w.Source != "" }

// Wall returns the Unix time in nanoseconds of the sample time t.
func (w WallClock) Wall(t int64) int64 { return t + w.Offset }

// Anchor returns the wall-clock anchor that a capture's own metadata gives,
// with last the time of its last sample: realtime timestamps, perf's
// reference time, the tod field of the first sample, or else an estimate
// from "# captured on". It returns the zero WallClock when none of them is
// there, and when last is NoTime: samples without timestamps were taken at
// no known time, whatever clock perf recorded them with. Captures of one
// host that share a boot clock can be anchored more closely together than
// one by one; the timeline package does that.
func Anchor(m Metadata, last int64) WallClock {
	switch {
	case last == NoTime:
		return WallClock{}
	case m.Clock == "realtime":
		return WallClock{Source: WallRealtime}
	case m.RefClockNS != 0 || m.RefTODNS != 0:
		return WallClock{Offset: m.RefTODNS - m.RefClockNS, Source: WallReference}
	case m.TODOffsetNS != 0:
		return WallClock{Offset: m.TODOffsetNS, Source: WallTOD}
	}
	if t, ok := ParseCapturedOn(m.CapturedOn); ok {
		// perf prints the file's modification time truncated to the second:
		// the capture ended somewhere in [t, t+1 s), so the middle of that
		// second is the estimate with the smallest worst-case error.
		return WallClock{Offset: t + int64(time.Second)/2 - last, Source: WallCapturedOn, Approximate: true}
	}
	return WallClock{}
}

// Anchor returns the wall-clock anchor of p's own metadata (the function
// Anchor with p's last sample); the zero WallClock when p has no
// timestamps.
func (p *Profile) Anchor() WallClock {
	last := p.End
	if !p.Timed() {
		last = NoTime
	}
	return Anchor(p.Meta, last)
}

// ParseCapturedOn parses the value of perf's "# captured on" header line
// ("Mon Nov 30 17:11:08 2026", C's ctime format) as UTC and returns it in
// Unix nanoseconds.
func ParseCapturedOn(s string) (int64, bool) {
	// ctime pads the day with a space ("Nov  1"); joining the fields with
	// single spaces makes "Nov 1", which time.ANSIC's "_2" also reads.
	t, err := time.Parse(time.ANSIC, strings.Join(strings.Fields(s), " "))
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}
