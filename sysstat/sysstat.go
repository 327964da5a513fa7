// Package sysstat imports what people already recorded on a host into its
// series: sysstat's mpstat and sar text reports of per-CPU time, and
// timestamped snapshots of /proc/cgroups.
//
//	f, _ := os.Open("mpstat.txt") // mpstat -P ALL 1 > mpstat.txt
//	series, err := sysstat.Parse(f, sysstat.Options{Location: berlin})
//
// Recognised inputs, told apart by their first lines (see Detect):
//
//	mpstat -P ALL 1                 sysstat 12.x, any of its intervals
//	sar -P ALL 1 N                  and sar -u ALL -P ALL, live or
//	sar -P ALL -f /var/log/sysstat/saXX   from a daily file
//	while sleep 1; do date -Ins; cat /proc/cgroups; done > cgroups.log
//
// mpstat and sar print a "Linux 6.1.0-18-amd64 (host) \t11/30/2026
// \t_x86_64_\t(96 CPU)" line whose date is that of the first interval,
// then blocks of a header ("23:40:26 CPU %usr %nice %sys …") and a row per
// CPU, each row stamped with the end of its interval. The date is
// MM/DD/YY or MM/DD/YYYY (the C and en_US locales) or YYYY-MM-DD
// (S_TIME_FORMAT=ISO); other locales' dates (a day-first 30/11/2026, a
// decimal comma) are errors that say to record with LC_ALL=C. Times are
// 24-hour or 12-hour with AM and PM, in Options.Location. A time earlier
// than the line before it is on the next day, unless it is an hour the
// Location repeats as its clocks go back. Only sar's CPU report (-u) is
// read: another report's block is an error. Columns are mapped
// by their header names, so mpstat's, sar's and sar -u ALL's orders all
// work: %usr or %user → cpu.usr, %nice → cpu.nice, %sys or %system →
// cpu.sys, %iowait, %irq, %soft, %steal and %idle to the kinds of the same
// names; %guest and %gnice, already counted in %usr and %nice, are not
// imported. The "all" row is the host as a whole (CPU subsecond.Unknown).
// "Average:" rows and sar's "LINUX RESTART" lines give no points.
//
// A /proc/cgroups snapshot is a timestamp line followed by the file: its
// "#subsys_name hierarchy num_cgroups enabled" header and a row per
// controller. Each row gives a point of the "cgroups" series labelled
// with the controller, its value num_cgroups. The timestamp is epoch
// seconds (date +%s, date +%s.%N), RFC 3339 (date -Ins, date -Is, date
// --rfc-3339=ns) or date's default C-locale format ("Tue Dec  1 23:41:07
// UTC 2026", its zone UTC, GMT, numeric or one of Options.Location's).
package sysstat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Format is a kind of input Parse reads.
type Format uint8

// Formats Detect tells apart.
const (
	// Mpstat is mpstat's text report (mpstat -P ALL 1).
	Mpstat Format = iota + 1
	// Sar is sar's CPU utilisation report (sar -P ALL, with or without
	// -u ALL, live or from a daily file with -f).
	Sar
	// Cgroups is timestamped /proc/cgroups snapshots.
	Cgroups
)

// String returns the format's name: "mpstat", "sar" or "cgroups".
func (f Format) String() string {
	switch f {
	case Mpstat:
		return "mpstat"
	case Sar:
		return "sar"
	case Cgroups:
		return "cgroups"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// DefaultMax is the number of points Parse allows one input by default.
const DefaultMax = 50_000_000

// MaxLine is the longest line Parse reads; a longer line is an error.
const MaxLine = 64 << 10

// Options configure Parse.
type Options struct {
	// Location is the zone of the times mpstat and sar print, which name
	// none: the local time of the host that ran them (for sar -f, of the
	// host that ran sar, or of the recording host with sar -t); nil for
	// UTC. It is also the zone of a cgroups snapshot's `date` line whose
	// zone abbreviation it defines.
	Location *time.Location
	// Max bounds the points one input may give; 0 for DefaultMax.
	Max int
}

// sniffSize is how much of its input Parse buffers for Detect.
const sniffSize = 64 << 10

// Detect reports the format of br's input from the lines br has buffered
// (at least its first line, and up to br.Size() bytes, which it fills if
// need be), without consuming any. mpstat and sar are told apart by their
// first CPU header: sar's names %user and %system, or puts %steal before
// %irq. Input of no recognised format is an error naming its first line
// that wraps subsecond.ErrInvalid.
func Detect(br *bufio.Reader) (Format, error) {
	buf, err := br.Peek(br.Size())
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return 0, fmt.Errorf("read: %w", err)
	}
	n := 0
	first := true
	for len(buf) > 0 {
		var line []byte
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else if err == nil || err == bufio.ErrBufferFull {
			if first && n == 0 {
				return 0, fmt.Errorf("line 1: longer than %d bytes: expected mpstat/sar output (a \"Linux …\" header) or timestamped /proc/cgroups snapshots: %w",
					len(buf), subsecond.ErrInvalid)
			}
			break // cut by the buffer: not a whole line
		} else {
			line, buf = buf, nil
		}
		n++
		s := strings.TrimSpace(strings.TrimPrefix(string(line), "\ufeff"))
		if s == "" {
			continue
		}
		if first {
			first = false
			if _, ok, _ := parseStamp(s, time.UTC); ok {
				return Cgroups, nil
			}
			if !strings.HasPrefix(s, "Linux ") {
				return 0, fmt.Errorf("line %d: expected mpstat/sar output (a \"Linux …\" header) or timestamped /proc/cgroups snapshots (a date -Ins, date -Is or epoch seconds line), not %q: %w",
					n, excerpt(s), subsecond.ErrInvalid)
			}
			continue
		}
		if f, ok := cpuHeaderFormat(strings.Fields(s)); ok {
			return f, nil
		}
	}
	if first {
		return 0, fmt.Errorf("empty input: expected mpstat/sar output (a \"Linux …\" header) or timestamped /proc/cgroups snapshots: %w", subsecond.ErrInvalid)
	}
	return 0, fmt.Errorf("line 1: a \"Linux …\" header but no mpstat or sar CPU header (\"HH:MM:SS CPU %%usr …\") in the first %d lines: %w", n, subsecond.ErrInvalid)
}

// Parse returns the series of r's input, of any format Detect recognises:
// at most one series per kind, CPU and label, ordered as SeriesKinds lists
// the kinds, then by CPU (the host as a whole first), then by label, each
// series' points in time order. Errors name the line and what was
// expected, and wrap subsecond.ErrInvalid; more than Options.Max points is
// an error wrapping subsecond.ErrTooLarge. Parse returns either every
// point of the input or an error, never a part.
func Parse(r io.Reader, opt Options) ([]subsecond.Series, error) {
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	if opt.Max <= 0 {
		opt.Max = DefaultMax
	}
	br := bufio.NewReaderSize(r, sniffSize)
	f, err := Detect(br)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	acc := &accumulator{max: opt.Max, series: map[subsecond.SeriesKey]*subsecond.Series{}}
	if f == Cgroups {
		err = parseCgroups(sc, opt, acc)
	} else {
		err = parseCPU(sc, opt, acc)
	}
	if err != nil {
		return nil, err
	}
	return acc.result(), nil
}

// accumulator collects points into series and bounds their number.
type accumulator struct {
	max    int
	points int
	series map[subsecond.SeriesKey]*subsecond.Series
}

// add appends a point to the series of key; line is the input line, for
// the error past max.
func (a *accumulator) add(key subsecond.SeriesKey, p subsecond.Point, line int) error {
	return a.push(a.get(key), p, line)
}

// get returns the series of key, made empty if need be.
func (a *accumulator) get(key subsecond.SeriesKey) *subsecond.Series {
	s := a.series[key]
	if s == nil {
		s = &subsecond.Series{Name: key.Name, CPU: key.CPU, Label: key.Label}
		a.series[key] = s
	}
	return s
}

// push appends a point to s, a series of get.
func (a *accumulator) push(s *subsecond.Series, p subsecond.Point, line int) error {
	if a.points == a.max {
		return fmt.Errorf("line %d: more than %d points: %w", line, a.max, subsecond.ErrTooLarge)
	}
	a.points++
	s.Points = append(s.Points, p)
	return nil
}

// result returns the series in Parse's order, each one's points sorted by
// time (inputs concatenated out of order, clocks stepped back).
func (a *accumulator) result() []subsecond.Series {
	rank := map[string]int{}
	for i, k := range subsecond.SeriesKinds {
		rank[k.Name] = i
	}
	out := make([]subsecond.Series, 0, len(a.series))
	for _, s := range a.series {
		ps := s.Points
		if !sort.SliceIsSorted(ps, func(i, j int) bool { return ps[i].Time < ps[j].Time }) {
			sort.SliceStable(ps, func(i, j int) bool { return ps[i].Time < ps[j].Time })
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return rank[a.Name] < rank[b.Name]
		}
		if a.CPU != b.CPU {
			return a.CPU < b.CPU
		}
		return a.Label < b.Label
	})
	return out
}

func excerpt(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}
