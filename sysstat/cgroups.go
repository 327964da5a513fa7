package sysstat

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

var (
	epochRE   = regexp.MustCompile(`^(\d{10})(?:\.(\d{1,9}))?$`)
	rfc3339RE = regexp.MustCompile(`^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?$`)
	unixRE    = regexp.MustCompile(`^[A-Z][a-z]{2} +[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d (\S+) \d{4}$`)
	offsetRE  = regexp.MustCompile(`^[+-]\d\d(\d\d)?$`)
)

// parseStamp reads a snapshot's timestamp line: epoch seconds (date +%s,
// or date +%s.%N), RFC 3339 with a dot or comma before the fraction (date
// -Ins, date -Is, with T or a space) or date's default C-locale format
// ("Tue Dec  1 23:41:07 UTC 2026"). A time without a zone, or with a zone
// abbreviation other than UTC and GMT, is in loc. ok reports that s has a
// timestamp's shape; err, that it is nonetheless not a valid one.
func parseStamp(s string, loc *time.Location) (t time.Time, ok bool, err error) {
	if m := epochRE.FindStringSubmatch(s); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		frac := m[2] + strings.Repeat("0", 9-len(m[2]))
		ns, _ := strconv.ParseInt(frac, 10, 64)
		return time.Unix(sec, ns), true, nil
	}
	if m := rfc3339RE.FindStringSubmatch(s); m != nil {
		layout, value := "2006-01-02T15:04:05", m[1]+"T"+m[2]
		if m[3] != "" {
			layout, value = layout+".999999999", value+"."+m[3]
		}
		zone := m[4]
		if zone == "" {
			t, err := time.ParseInLocation(layout, value, loc)
			return t, true, err
		}
		if zone != "Z" && !strings.Contains(zone, ":") {
			if len(zone) == 3 {
				zone += "00" // +01 → +0100
			}
			zone = zone[:3] + ":" + zone[3:] // +0100 → +01:00
		}
		t, err := time.Parse(layout+"Z07:00", value+zone)
		return t, true, err
	}
	if m := unixRE.FindStringSubmatch(s); m != nil {
		abbr := m[1]
		value := strings.Join(strings.Fields(s), " ")
		if offsetRE.MatchString(abbr) { // date prints "+04" for zones without a name
			value = strings.Replace(value, " "+abbr+" ", " ", 1)
			if len(abbr) == 3 {
				abbr += "00"
			}
			t, err := time.Parse("Mon Jan _2 15:04:05 2006 -0700", value+" "+abbr)
			return t, true, err
		}
		t, err := time.ParseInLocation(time.UnixDate, value, loc)
		if err != nil {
			return t, true, err
		}
		if name, _ := t.Zone(); name != abbr || (t.Location() != loc && abbr != "UTC" && abbr != "GMT") {
			return t, true, fmt.Errorf("zone %s is not one of the location's (%s); record with date -Ins", abbr, loc)
		}
		return t, true, nil
	}
	return time.Time{}, false, nil
}

// parseCgroups reads timestamped /proc/cgroups snapshots from sc into acc.
func parseCgroups(sc *bufio.Scanner, opt Options, acc *accumulator) error {
	var (
		t         int64
		stampLine int // the line of the current snapshot's time; 0 before the first
		name, num = -1, -1
		ncols     int
		fields    []string
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		if ts, ok, err := parseStamp(s, opt.Location); ok {
			if err != nil {
				return fmt.Errorf("line %d: bad timestamp %q: %v: %w", n, excerpt(s), err, subsecond.ErrInvalid)
			}
			t, stampLine, name = ts.UnixNano(), n, -1
			continue
		}
		if stampLine == 0 {
			return fmt.Errorf("line %d: expected a timestamp line (date -Ins, date -Is or epoch seconds) before %q: %w", n, excerpt(s), subsecond.ErrInvalid)
		}
		if strings.HasPrefix(s, "#") {
			cols := strings.Fields(strings.TrimPrefix(s, "#"))
			name, num, ncols = -1, -1, len(cols)
			for i, c := range cols {
				switch c {
				case "subsys_name":
					name = i
				case "num_cgroups":
					num = i
				}
			}
			if name < 0 || num < 0 {
				return fmt.Errorf("line %d: expected the /proc/cgroups header (#subsys_name hierarchy num_cgroups enabled), found %q: %w", n, excerpt(s), subsecond.ErrInvalid)
			}
			continue
		}
		if name < 0 {
			return fmt.Errorf("line %d: expected the /proc/cgroups header (#subsys_name hierarchy num_cgroups enabled) after the timestamp of line %d, found %q: %w",
				n, stampLine, excerpt(s), subsecond.ErrInvalid)
		}
		fields = appendFields(fields[:0], s)
		if len(fields) != ncols {
			return fmt.Errorf("line %d: expected %d columns as the /proc/cgroups header has, found %d in %q: %w", n, ncols, len(fields), excerpt(s), subsecond.ErrInvalid)
		}
		label := fields[name]
		if len(label) > subsecond.MaxSeriesLabel {
			return fmt.Errorf("line %d: controller name longer than %d bytes: %w", n, subsecond.MaxSeriesLabel, subsecond.ErrInvalid)
		}
		v, err := strconv.ParseUint(fields[num], 10, 53)
		if err != nil {
			return fmt.Errorf("line %d: expected a count in column num_cgroups, found %q: %w", n, fields[num], subsecond.ErrInvalid)
		}
		key := subsecond.SeriesKey{Name: "cgroups", CPU: subsecond.Unknown, Label: strings.ToValidUTF8(label, "�")}
		if err := acc.add(key, subsecond.Point{Time: t, Value: float64(v)}, n); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}
