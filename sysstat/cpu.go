package sysstat

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// columnKinds maps the CPU headers' column names to series kinds; "" is a
// column read past (%guest and %gnice are within %usr and %nice).
var columnKinds = map[string]string{
	"%usr": "cpu.usr", "%user": "cpu.usr",
	"%nice":   "cpu.nice",
	"%sys":    "cpu.sys",
	"%system": "cpu.sys",
	"%iowait": "cpu.iowait",
	"%irq":    "cpu.irq",
	"%soft":   "cpu.soft",
	"%steal":  "cpu.steal",
	"%idle":   "cpu.idle",
	"%guest":  "",
	"%gnice":  "",
}

// maxCPU bounds a row's CPU number (Linux's NR_CPUS is at most 8192).
const maxCPU = 1 << 16

// splitClock splits a line's fields into its time ("23:40:26", or
// "11:40:26 PM" as two fields) and the rest.
func splitClock(fields []string) (clock, ampm string, rest []string) {
	if len(fields) == 0 {
		return "", "", nil
	}
	if len(fields) >= 2 && (fields[1] == "AM" || fields[1] == "PM") {
		return fields[0], fields[1], fields[2:]
	}
	return fields[0], "", fields[1:]
}

// isCPUHeader reports whether the fields after a line's time are a CPU
// header: "CPU" and percentages.
func isCPUHeader(rest []string) bool {
	return len(rest) >= 2 && rest[0] == "CPU" && strings.HasPrefix(rest[1], "%")
}

// cpuHeaderFormat reports whether fields are a CPU header line and, if so,
// whether sar or mpstat printed it.
func cpuHeaderFormat(fields []string) (Format, bool) {
	_, _, rest := splitClock(fields)
	if !isCPUHeader(rest) {
		return 0, false
	}
	irq, steal := -1, -1
	for i, c := range rest {
		switch c {
		case "%user", "%system":
			return Sar, true
		case "%irq":
			irq = i
		case "%steal":
			steal = i
		}
	}
	if steal >= 0 && irq > steal {
		return Sar, true
	}
	return Mpstat, true
}

// seconds returns the second of the day of a printed time, 24-hour or
// 12-hour with ampm "AM" or "PM".
func seconds(clock, ampm string) (int, bool) {
	if len(clock) != 8 || clock[2] != ':' || clock[5] != ':' {
		return 0, false
	}
	h, err1 := strconv.Atoi(clock[0:2])
	m, err2 := strconv.Atoi(clock[3:5])
	s, err3 := strconv.Atoi(clock[6:8])
	if err1 != nil || err2 != nil || err3 != nil || m > 59 || s > 59 || h < 0 || m < 0 || s < 0 {
		return 0, false
	}
	switch ampm {
	case "":
		if h > 23 {
			return 0, false
		}
	case "AM", "PM":
		if h < 1 || h > 12 {
			return 0, false
		}
		h %= 12
		if ampm == "PM" {
			h += 12
		}
	}
	return h*3600 + m*60 + s, true
}

var (
	slashDateRE = regexp.MustCompile(`^(\d\d)/(\d\d)/(\d\d|\d{4})$`)
	isoDateRE   = regexp.MustCompile(`^(\d{4})-(\d\d)-(\d\d)$`)
)

// headerDate returns the date of a "Linux …" line: MM/DD/YY or
// MM/DD/YYYY (the C and en_US locales' %x) or YYYY-MM-DD
// (S_TIME_FORMAT=ISO).
func headerDate(line string) (y int, m time.Month, d int, ok bool) {
	for _, f := range strings.Fields(line) {
		var ys, ms, ds string
		if g := slashDateRE.FindStringSubmatch(f); g != nil {
			ms, ds, ys = g[1], g[2], g[3]
		} else if g := isoDateRE.FindStringSubmatch(f); g != nil {
			ys, ms, ds = g[1], g[2], g[3]
		} else {
			continue
		}
		y, _ = strconv.Atoi(ys)
		if len(ys) == 2 {
			y += 2000
		}
		mi, _ := strconv.Atoi(ms)
		d, _ = strconv.Atoi(ds)
		t := time.Date(y, time.Month(mi), d, 0, 0, 0, 0, time.UTC)
		if t.Year() != y || int(t.Month()) != mi || t.Day() != d {
			return 0, 0, 0, false // 13/01/26: a day-first locale
		}
		return y, time.Month(mi), d, true
	}
	return 0, 0, 0, false
}

// cpuParser holds the state of an mpstat or sar report.
type cpuParser struct {
	loc *time.Location
	// The date of the "Linux …" line, and the days since it.
	y    int
	m    time.Month
	d    int
	days int
	// prev is the time of the last timestamped line, Unix ns; valid when
	// dated is set and any line has been timed since the "Linux …" one.
	prev     int64
	havePrev bool
	dated    bool
	// header is the current CPU header's fields after its time, kinds
	// their series kinds ("" for none) and cpu the CPU column's index;
	// headerLine is its line number, 0 before the first.
	header     []string
	kinds      []string
	cpu        int
	headerLine int
	// cache holds the series of each kind, indexed by CPU+1.
	cache map[string][]*subsecond.Series
}

// instant returns the time of the second of the day sec printed after the
// previous timestamped line: on the current day, unless that is earlier
// than the previous line (then on the next day). A wall-clock time the
// Location repeats when its clocks go back is the earliest occurrence not
// before the previous line.
func (p *cpuParser) instant(sec int) int64 {
	at := func() int64 {
		t := time.Date(p.y, p.m, p.d+p.days, sec/3600, sec/60%60, sec%60, 0, p.loc)
		cands := []int64{t.UnixNano()}
		_, before := t.Add(-3 * time.Hour).Zone()
		_, after := t.Add(3 * time.Hour).Zone()
		if before != after {
			shift := time.Duration(before-after) * time.Second
			for _, u := range []time.Time{t.Add(-shift), t.Add(shift)} {
				if u.In(p.loc).Format(time.DateTime) == t.Format(time.DateTime) {
					cands = append(cands, u.UnixNano()) // the same wall clock
				}
			}
		}
		var best int64
		for i, c := range cands {
			ok := !p.havePrev || c >= p.prev
			bestOK := !p.havePrev || best >= p.prev
			if i == 0 || (ok && !bestOK) || (ok == bestOK && c < best) {
				best = c
			}
		}
		return best
	}
	t := at()
	if p.havePrev && t < p.prev {
		p.days++
		t = at()
	}
	p.prev, p.havePrev = t, true
	return t
}

// parseCPU reads an mpstat or sar report from sc into acc.
func parseCPU(sc *bufio.Scanner, opt Options, acc *accumulator) error {
	p := &cpuParser{loc: opt.Location, cache: map[string][]*subsecond.Series{}}
	var fields []string
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		fields = appendFields(fields[:0], line)
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "Linux":
			y, m, d, ok := headerDate(line)
			if !ok {
				return fmt.Errorf("line %d: expected a date (MM/DD/YY, MM/DD/YYYY or YYYY-MM-DD; record with LC_ALL=C or S_TIME_FORMAT=ISO) in the header %q: %w",
					n, excerpt(strings.TrimSpace(line)), subsecond.ErrInvalid)
			}
			p.y, p.m, p.d, p.days, p.havePrev, p.dated = y, m, d, 0, false, true
			p.header, p.headerLine = nil, 0
			continue
		case fields[0] == "Average:":
			continue
		case !p.dated:
			return fmt.Errorf("line %d: expected a \"Linux …\" header line before %q: %w", n, excerpt(line), subsecond.ErrInvalid)
		}
		clock, ampm, rest := splitClock(fields)
		sec, ok := seconds(clock, ampm)
		if !ok {
			return fmt.Errorf("line %d: expected a time (HH:MM:SS, or HH:MM:SS AM or PM) at the start of %q: %w", n, excerpt(line), subsecond.ErrInvalid)
		}
		if len(rest) >= 2 && rest[0] == "LINUX" && rest[1] == "RESTART" {
			p.instant(sec)
			continue
		}
		if isCPUHeader(rest) {
			if err := p.setHeader(rest, n); err != nil {
				return err
			}
			p.instant(sec)
			continue
		}
		if p.header == nil {
			return fmt.Errorf("line %d: expected a CPU header (\"HH:MM:SS CPU %%usr …\") before the row %q: %w", n, excerpt(line), subsecond.ErrInvalid)
		}
		if len(rest) != len(p.header) {
			return fmt.Errorf("line %d: expected %d columns after the time (%s, as the header of line %d), found %d in %q: %w",
				n, len(p.header), strings.Join(p.header, " "), p.headerLine, len(rest), excerpt(line), subsecond.ErrInvalid)
		}
		cpu := subsecond.Unknown
		if c := rest[p.cpu]; c != "all" {
			v, err := strconv.ParseUint(c, 10, 32)
			if err != nil || v >= maxCPU {
				return fmt.Errorf("line %d: expected a CPU number or \"all\" in column CPU, found %q (only the CPU report, sar -u, is imported): %w",
					n, c, subsecond.ErrInvalid)
			}
			cpu = int32(v)
		}
		t := p.instant(sec)
		for i, kind := range p.kinds {
			if kind == "" {
				continue
			}
			v, err := strconv.ParseFloat(rest[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				hint := ""
				if strings.Contains(rest[i], ",") {
					hint = " (a decimal comma: record with LC_ALL=C)"
				}
				return fmt.Errorf("line %d: expected a number in column %s, found %q%s: %w", n, p.header[i], rest[i], hint, subsecond.ErrInvalid)
			}
			if err := acc.push(p.series(acc, i, cpu), subsecond.Point{Time: t, Value: v}, n); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// series returns the series of the header's column i and cpu, from a
// cache that spares a map look-up per value.
func (p *cpuParser) series(acc *accumulator, i int, cpu int32) *subsecond.Series {
	kind := p.kinds[i]
	byCPU := p.cache[kind]
	if int(cpu+1) >= len(byCPU) {
		byCPU = append(byCPU, make([]*subsecond.Series, int(cpu+2)-len(byCPU))...)
		p.cache[kind] = byCPU
	}
	s := byCPU[cpu+1]
	if s == nil {
		s = acc.get(subsecond.SeriesKey{Name: kind, CPU: cpu})
		byCPU[cpu+1] = s
	}
	return s
}

// setHeader makes rest, the fields after a header line's time, the
// columns of the rows that follow.
func (p *cpuParser) setHeader(rest []string, n int) error {
	if len(p.header) == len(rest) && strings.Join(p.header, " ") == strings.Join(rest, " ") {
		p.headerLine = n
		return nil
	}
	kinds := make([]string, len(rest))
	seen := map[string]bool{}
	for i, c := range rest[1:] {
		k, ok := columnKinds[c]
		if !ok {
			return fmt.Errorf("line %d: unknown column %q in the CPU header; expected mpstat's or sar -u's (%%usr or %%user, %%nice, %%sys or %%system, %%iowait, %%irq, %%soft, %%steal, %%guest, %%gnice, %%idle): %w",
				n, c, subsecond.ErrInvalid)
		}
		if k != "" && seen[k] {
			return fmt.Errorf("line %d: two columns of %s in the CPU header: %w", n, k, subsecond.ErrInvalid)
		}
		seen[k] = true
		kinds[i+1] = k
	}
	p.header = append([]string(nil), rest...)
	p.kinds, p.cpu, p.headerLine = kinds, 0, n
	return nil
}

// appendFields appends the space-separated fields of s to dst, as
// strings.Fields does, without allocating a new slice each line.
func appendFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}
