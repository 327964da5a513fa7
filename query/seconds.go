package query

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSeconds parses a decimal number of seconds such as "5086.2" into
// integer nanoseconds exactly, without floating point. Values whose
// nanoseconds do not fit in an int64 are refused. Errors wrap ErrInvalid and
// name the parameter.
func ParseSeconds(name, s string) (int64, error) {
	bad := Invalidf(name, "%q is not a number of seconds like 1.25", s)
	in := s
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > 9 {
		return 0, bad
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, bad
		}
	}
	whole = strings.TrimLeft(whole, "0")
	var w, f int64
	if whole != "" && len(whole) <= 10 {
		w, _ = strconv.ParseInt(whole, 10, 64)
	}
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	// Check the range before multiplying: ten whole digits can overflow.
	if len(whole) > 10 || w > (math.MaxInt64-f)/1e9 {
		return 0, Invalidf(name, "%q is out of range: seconds must lie within ±%s", in, FormatSeconds(math.MaxInt64))
	}
	ns := w*1e9 + f
	if neg {
		ns = -ns
	}
	return ns, nil
}

// FormatSeconds writes nanoseconds as decimal seconds without trailing
// zeros, the inverse of ParseSeconds: 5086200000000 is "5086.2".
func FormatSeconds(ns int64) string { return decimalSeconds(ns, 9) }

// DisplaySeconds writes an offset of ns nanoseconds for people: decimal
// seconds rounded to the millisecond (halves away from zero), without
// trailing zeros: 119998950001 is "119.999", 30250000001 is "30.25",
// -5000000000 is "-5", 400 is "0". What goes back into a URL or a
// parameter is written with FormatSeconds, which is exact. The pages'
// script writes the same (displaySeconds in web/src/format.ts;
// TestDisplayScript in package web holds them to it).
func DisplaySeconds(ns int64) string { return decimalSeconds(roundMillis(ns), 3) }

// DisplayDuration writes a duration of d nanoseconds for people, rounded to
// the millisecond as DisplaySeconds rounds: below a minute in seconds,
// "0.85 s", "59.999 s"; from a minute on as Go writes a time.Duration,
// "1m0s", "1m59.999s", "2h0m5.5s". A duration shorter than half a
// millisecond but not zero is "<0.001 s"; a negative one (an end before
// its start) has "-" first.
func DisplayDuration(d int64) string {
	ms := roundMillis(d)
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	switch {
	case ms == 0 && d != 0:
		return "<0.001 s"
	case ms < 60_000:
		return sign + decimalSeconds(ms, 3) + " s"
	}
	s := sign
	if h := ms / 3_600_000; h > 0 {
		s += strconv.FormatInt(h, 10) + "h"
	}
	return s + strconv.FormatInt(ms/60_000%60, 10) + "m" + decimalSeconds(ms%60_000, 3) + "s"
}

// DisplayRange writes the half-open range [start, end) of offsets in
// nanoseconds for people: its bounds as DisplaySeconds writes them and its
// length as DisplayDuration does, "0–119.999 s (1m59.999s)",
// "-5–0.25 s (5.25 s)". The length is end-start rounded, not the
// difference of the rounded bounds.
func DisplayRange(start, end int64) string {
	return DisplaySeconds(start) + "–" + DisplaySeconds(end) + " s (" + DisplayDuration(end-start) + ")"
}

// roundMillis returns ns nanoseconds in whole milliseconds, halves rounded
// away from zero; no overflow near the int64 limits.
func roundMillis(ns int64) int64 {
	const ms = 1_000_000
	r := ns / ms
	if rem := ns % ms; rem >= ms/2 {
		r++
	} else if rem <= -ms/2 {
		r--
	}
	return r
}

// decimalSeconds writes n units of 10^-digits seconds as decimal seconds
// without trailing zeros.
func decimalSeconds(n int64, digits int) string {
	sign, u := "", uint64(n)
	if n < 0 {
		sign, u = "-", -u // the magnitude, math.MinInt64's too
	}
	unit := uint64(1)
	for range digits {
		unit *= 10
	}
	s := fmt.Sprintf("%s%d.%0*d", sign, u/unit, digits, u%unit)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatWallTime writes Unix nanoseconds as an RFC 3339 time in UTC,
// exactly, as a from or to parameter is written: the inverse of
// ParseWallTime. 1796008325500000000 is "2026-11-30T03:12:05.5Z".
func FormatWallTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// DisplayWallTime writes Unix nanoseconds for people as an RFC 3339 time in
// UTC, rounded to the millisecond as DisplaySeconds rounds, without
// trailing zeros: "2026-11-30T00:16:59Z", "2025-03-11T02:12:07.501Z".
func DisplayWallTime(ns int64) string {
	return time.UnixMilli(roundMillis(ns)).UTC().Format("2006-01-02T15:04:05.999Z07:00")
}
