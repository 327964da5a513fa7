// Package markers reads event markers out of a host's logs: each line that
// matches a regular expression and starts with a timestamp becomes a
// subsecond.Marker at that wall-clock time.
//
//	ms, err := markers.Parse(f, markers.Options{Match: regexp.MustCompile(`NETDEV WATCHDOG|reset`)})
//
// Recognised timestamps, at the start of a line:
//
//	[Mon Nov 30 03:12:05 2026] …          dmesg -T
//	2026-11-30T03:12:05+0000 host kernel: …  journalctl -o short-iso (and -precise, RFC 3339)
//	2026-11-30 03:12:05.123 …             ISO 8601 with a space
//	Nov 30 03:12:05 host kernel: …        syslog (the year from Options.Year)
//
// A time without a zone is in Options.Location (UTC by default): dmesg -T
// and syslog print the host's local time.
package markers

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Options configure Parse.
type Options struct {
	// Match selects the lines that are markers; nil takes every line.
	Match *regexp.Regexp
	// Year is the year of syslog timestamps, which print none; 0 for the
	// current year.
	Year int
	// Location is the zone of timestamps that print none; nil for UTC.
	Location *time.Location
	// Max bounds how many markers one input may give; 0 for 100,000.
	Max int
}

// MaxLine is the longest line Parse reads; longer lines are cut.
const MaxLine = 64 << 10

// Parse returns the markers of r's matching lines, in input order, each
// with its line's text after the timestamp (cut to
// subsecond.MaxMarkerText). A matching line with no recognised timestamp
// is an error naming its line number and what was expected, as is more
// than Options.Max markers; errors wrap subsecond.ErrInvalid.
func Parse(r io.Reader, opt Options) ([]subsecond.Marker, error) {
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	if opt.Year == 0 {
		opt.Year = time.Now().In(opt.Location).Year()
	}
	if opt.Max == 0 {
		opt.Max = 100_000
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var out []subsecond.Marker
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || (opt.Match != nil && !opt.Match.MatchString(line)) {
			continue
		}
		t, rest, ok := stamp(line, opt)
		if !ok {
			return nil, fmt.Errorf("line %d: expected a timestamp (dmesg -T's [Mon Nov 30 03:12:05 2026], ISO 2026-11-30T03:12:05Z or syslog's Nov 30 03:12:05) at the start of %q: %w",
				n, excerpt(line), subsecond.ErrInvalid)
		}
		if len(out) == opt.Max {
			return nil, fmt.Errorf("line %d: more than %d markers: %w", n, opt.Max, subsecond.ErrInvalid)
		}
		text := strings.ToValidUTF8(strings.TrimSpace(rest), "�")
		if len(text) > subsecond.MaxMarkerText {
			text = strings.ToValidUTF8(text[:subsecond.MaxMarkerText], "")
		}
		if text == "" {
			text = "(empty)"
		}
		out = append(out, subsecond.Marker{Time: t.UnixNano(), Text: text})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return out, nil
}

var (
	dmesgRE  = regexp.MustCompile(`^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]`)
	isoRE    = regexp.MustCompile(`^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)(Z|[+-]\d\d:?\d\d)?`)
	syslogRE = regexp.MustCompile(`^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d(?:\.\d{1,9})?)`)
)

// stamp reads the timestamp at the start of line and returns the rest.
func stamp(line string, opt Options) (time.Time, string, bool) {
	if m := dmesgRE.FindStringSubmatch(line); m != nil {
		t, err := time.ParseInLocation(time.ANSIC, strings.Join(strings.Fields(m[1]), " "), opt.Location)
		return t, line[len(m[0]):], err == nil
	}
	if m := isoRE.FindStringSubmatch(line); m != nil {
		clock := strings.Replace(m[2], ",", ".", 1)
		zone := m[3]
		if zone != "" && zone != "Z" && !strings.Contains(zone, ":") {
			zone = zone[:3] + ":" + zone[3:] // +0000 → +00:00
		}
		if zone == "" {
			t, err := time.ParseInLocation("2006-01-02T15:04:05", m[1]+"T"+clock, opt.Location)
			return t, line[len(m[0]):], err == nil
		}
		t, err := time.Parse(time.RFC3339Nano, m[1]+"T"+clock+zone)
		return t, line[len(m[0]):], err == nil
	}
	if m := syslogRE.FindStringSubmatch(line); m != nil {
		t, err := time.ParseInLocation("2006 Jan 2 15:04:05", fmt.Sprintf("%d %s %s %s", opt.Year, m[1], m[2], m[3]), opt.Location)
		return t, line[len(m[0]):], err == nil
	}
	return time.Time{}, "", false
}

func excerpt(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
