package hoststate

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
)

// File names as errors cite them, whatever Options.Root is.
const (
	fileStat       = "/proc/stat"
	fileCgroups    = "/proc/cgroups"
	fileCgroupStat = "cgroup.stat"
	fileInterrupts = "/proc/interrupts"
	fileSoftirqs   = "/proc/softirqs"
	fileMeminfo    = "/proc/meminfo"
	fileLoadavg    = "/proc/loadavg"
)

// invalid returns an error naming file, line (1-based; 0 for the file as a
// whole) and what was expected, wrapping subsecond.ErrInvalid.
func invalid(file string, line int, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if line == 0 {
		return fmt.Errorf("%s: %s: %w", file, what, subsecond.ErrInvalid)
	}
	return fmt.Errorf("%s line %d: %s: %w", file, line, what, subsecond.ErrInvalid)
}

// lines iterates over the lines of b without their newlines.
type lines struct {
	b []byte
	n int
}

// next returns the next line and true, or false at the end of b.
func (l *lines) next() ([]byte, bool) {
	if len(l.b) == 0 {
		return nil, false
	}
	l.n++
	i := bytes.IndexByte(l.b, '\n')
	if i < 0 {
		line := l.b
		l.b = nil
		return line, true
	}
	line := l.b[:i]
	l.b = l.b[i+1:]
	return line, true
}

// field returns the first space-separated field of b and the rest of b
// after it; field is empty when b holds only spaces.
func field(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// parseUint parses a decimal uint64 of digits only.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// CPUTimes is one "cpu" line of /proc/stat: the time a CPU (or, for CPU
// subsecond.Unknown, all of them together) spent in each state since boot,
// in USER_HZ ticks (jiffies). User and Nice include Guest and GuestNice.
// Kernels that print fewer columns leave the rest zero.
type CPUTimes struct {
	CPU                                   int32
	User, Nice, System, Idle, IOWait      uint64
	IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// ParseStat appends the cpu lines of /proc/stat content b to dst, the
// "cpu" total first with CPU subsecond.Unknown, then one per online CPU,
// and returns the extended slice. Other lines are skipped. A cpu line with
// fewer than four numbers, or a number that is not one, is an error naming
// the line.
func ParseStat(dst []CPUTimes, b []byte) ([]CPUTimes, error) {
	l := lines{b: b}
	for {
		line, ok := l.next()
		if !ok {
			return dst, nil
		}
		if !bytes.HasPrefix(line, []byte("cpu")) {
			continue
		}
		name, rest := field(line)
		t := CPUTimes{CPU: subsecond.Unknown}
		if len(name) > 3 {
			n, ok := parseUint(name[3:])
			if !ok || n > math.MaxInt32 {
				return dst, invalid(fileStat, l.n, "want cpu or cpu<N>, got %q", name)
			}
			t.CPU = int32(n)
		}
		cols := [...]*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal, &t.Guest, &t.GuestNice}
		got := 0
		for {
			var f []byte
			f, rest = field(rest)
			if len(f) == 0 {
				break
			}
			n, ok := parseUint(f)
			if !ok {
				return dst, invalid(fileStat, l.n, "want a count of jiffies in column %d of %s, got %q", got+1, name, f)
			}
			if got < len(cols) {
				*cols[got] = n
			}
			got++
		}
		if got < 4 {
			return dst, invalid(fileStat, l.n, "want at least 4 counts (user nice system idle) after %s, got %d", name, got)
		}
		dst = append(dst, t)
	}
}

// CgroupCount is one row of /proc/cgroups. Name aliases the parsed bytes.
type CgroupCount struct {
	Name []byte
	// Cgroups is num_cgroups: the controller's cgroups in its hierarchy.
	Cgroups uint64
	Enabled bool
}

// ParseCgroups appends the rows of /proc/cgroups content b to dst and
// returns the extended slice. The "#subsys_name" header and blank lines are
// skipped; a row must have the four columns subsys_name hierarchy
// num_cgroups enabled.
func ParseCgroups(dst []CgroupCount, b []byte) ([]CgroupCount, error) {
	l := lines{b: b}
	for {
		line, ok := l.next()
		if !ok {
			return dst, nil
		}
		name, rest := field(line)
		if len(name) == 0 || name[0] == '#' {
			continue
		}
		var f [3][]byte
		for i := range f {
			f[i], rest = field(rest)
		}
		if len(f[2]) == 0 {
			return dst, invalid(fileCgroups, l.n, "want 4 columns (subsys_name hierarchy num_cgroups enabled)")
		}
		_, ok1 := parseUint(f[0])
		n, ok2 := parseUint(f[1])
		en, ok3 := parseUint(f[2])
		if !ok1 || !ok2 || !ok3 {
			return dst, invalid(fileCgroups, l.n, "want numbers after %s, got %q %q %q", name, f[0], f[1], f[2])
		}
		dst = append(dst, CgroupCount{Name: name, Cgroups: n, Enabled: en != 0})
	}
}

// CgroupStat is what the cgroup v2 root's cgroup.stat counts.
type CgroupStat struct {
	// Descendants is nr_descendants: live cgroups below the root.
	Descendants uint64
	// Dying is nr_dying_descendants: removed cgroups still held.
	Dying uint64
}

// ParseCgroupStat parses a cgroup v2 cgroup.stat file. Both
// nr_descendants and nr_dying_descendants must be present; other keys are
// skipped.
func ParseCgroupStat(b []byte) (CgroupStat, error) {
	var s CgroupStat
	var have, dying bool
	l := lines{b: b}
	for {
		line, ok := l.next()
		if !ok {
			break
		}
		key, rest := field(line)
		var dst *uint64
		switch string(key) {
		case "nr_descendants":
			dst, have = &s.Descendants, true
		case "nr_dying_descendants":
			dst, dying = &s.Dying, true
		default:
			continue
		}
		v, _ := field(rest)
		n, ok := parseUint(v)
		if !ok {
			return s, invalid(fileCgroupStat, l.n, "want a count after %s, got %q", key, v)
		}
		*dst = n
	}
	if !have || !dying {
		return s, invalid(fileCgroupStat, 0, "want nr_descendants and nr_dying_descendants")
	}
	return s, nil
}

// ParseMemAvailable returns MemAvailable of /proc/meminfo content b, in
// bytes. The line must be present (Linux 3.14 and later) and in kB.
func ParseMemAvailable(b []byte) (uint64, error) {
	l := lines{b: b}
	for {
		line, ok := l.next()
		if !ok {
			return 0, invalid(fileMeminfo, 0, "want a MemAvailable line")
		}
		key, rest := field(line)
		if string(key) != "MemAvailable:" {
			continue
		}
		v, rest := field(rest)
		unit, _ := field(rest)
		n, ok := parseUint(v)
		if !ok || string(unit) != "kB" || n > math.MaxUint64/1024 {
			return 0, invalid(fileMeminfo, l.n, "want MemAvailable: <n> kB")
		}
		return n * 1024, nil
	}
}

// Loadavg is the load averages of /proc/loadavg.
type Loadavg struct{ Load1, Load5, Load15 float64 }

// ParseLoadavg parses the first three columns of /proc/loadavg content b.
func ParseLoadavg(b []byte) (Loadavg, error) {
	var a Loadavg
	rest := b
	for _, dst := range []*float64{&a.Load1, &a.Load5, &a.Load15} {
		var f []byte
		f, rest = field(rest)
		v, err := strconv.ParseFloat(string(f), 64)
		if err != nil || v < 0 {
			return a, invalid(fileLoadavg, 1, "want three load averages, got %q", bytes.TrimSpace(b))
		}
		*dst = v
	}
	return a, nil
}

// ParseCounter parses a file holding one decimal counter and a newline, as
// each file of /sys/class/net/<dev>/statistics does; file names it in
// errors.
func ParseCounter(file string, b []byte) (uint64, error) {
	n, ok := parseUint(bytes.TrimSpace(b))
	if !ok {
		return 0, invalid(file, 1, "want one decimal counter, got %q", bytes.TrimSpace(b))
	}
	return n, nil
}

// CounterTable scans a table of per-CPU counters, /proc/interrupts or
// /proc/softirqs: a header naming the CPUs ("CPU0 CPU1 …", only the online
// ones in /proc/interrupts), then a row per counter, "NAME: n n n …"
// followed, in /proc/interrupts, by a description. Use it like a
// bufio.Scanner:
//
//	var t hoststate.CounterTable
//	t.Reset("/proc/interrupts", b)
//	for t.Scan() {
//		use(t.Label(), t.Counts()) // Counts()[i] was counted on CPUs()[i]
//	}
//	if err := t.Err(); err != nil { … }
//
// A row may have fewer counts than the header has CPUs (ERR and MIS of
// x86 have one, a host-wide total). The slices it returns alias its
// buffers and b, valid until the next Scan or Reset.
type CounterTable struct {
	file   string
	l      lines
	cpus   []int32
	counts []uint64
	name   []byte
	label  []byte
	err    error
}

// Reset starts scanning b, the content of file, and reads its header. An
// error is kept for Err and ends the scan.
func (t *CounterTable) Reset(file string, b []byte) {
	t.file, t.l, t.err = file, lines{b: b}, nil
	t.cpus = t.cpus[:0]
	header, ok := t.l.next()
	if !ok {
		t.err = invalid(file, 0, "empty, want a header of CPUs")
		return
	}
	for rest := header; ; {
		var f []byte
		f, rest = field(rest)
		if len(f) == 0 {
			break
		}
		n, ok := uint64(0), false
		if bytes.HasPrefix(f, []byte("CPU")) {
			n, ok = parseUint(f[3:])
		}
		if !ok || n > math.MaxInt32 {
			t.err = invalid(file, 1, "want a header of CPU<N> columns, got %q", f)
			return
		}
		t.cpus = append(t.cpus, int32(n))
	}
	if len(t.cpus) == 0 {
		t.err = invalid(file, 1, "want a header of CPU<N> columns")
	}
}

// CPUs returns the CPUs of the header's columns, in their order.
func (t *CounterTable) CPUs() []int32 { return t.cpus }

// Scan advances to the next row and reports whether there is one. Blank
// lines are skipped.
func (t *CounterTable) Scan() bool {
	if t.err != nil {
		return false
	}
	for {
		line, ok := t.l.next()
		if !ok {
			return false
		}
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			t.err = invalid(t.file, t.l.n, "want NAME: followed by counts")
			return false
		}
		t.name = bytes.TrimLeft(line[:i], " \t")
		if len(t.name) == 0 || bytes.ContainsAny(t.name, " \t") {
			t.err = invalid(t.file, t.l.n, "want NAME: followed by counts, got name %q", t.name)
			return false
		}
		rest := line[i+1:]
		t.counts = t.counts[:0]
		for len(t.counts) < len(t.cpus) {
			f, r := field(rest)
			n, ok := parseUint(f)
			if !ok {
				break
			}
			t.counts = append(t.counts, n)
			rest = r
		}
		if len(t.counts) == 0 {
			f, _ := field(rest)
			t.err = invalid(t.file, t.l.n, "want counts after %s:, got %q", t.name, f)
			return false
		}
		t.label = append(t.label[:0], t.name...)
		if numeric(t.name) {
			if dev := irqDevice(rest); len(dev) > 0 {
				t.label = append(t.label, ':')
				t.label = append(t.label, dev...)
			}
		}
		t.label = cut(t.label, subsecond.MaxSeriesLabel)
		return true
	}
}

// Name returns the row's name: the IRQ number ("45"), or the name of a
// named row ("LOC", "NET_RX").
func (t *CounterTable) Name() []byte { return t.name }

// Label returns the row's series label: for a numbered IRQ line
// "<irq>:<device>" ("45:mlx5_comp3@pci:0000:3b:00.0"), the number alone
// when the line names no device, else the row's name; at most
// subsecond.MaxSeriesLabel bytes.
func (t *CounterTable) Label() []byte { return t.label }

// Counts returns the row's counts: Counts()[i] is CPUs()[i]'s, and a row
// may have fewer counts than CPUs.
func (t *CounterTable) Counts() []uint64 { return t.counts }

// Err returns the error that ended the scan, or nil.
func (t *CounterTable) Err() error { return t.err }

// numeric reports whether b is digits only.
func numeric(b []byte) bool {
	_, ok := parseUint(b)
	return ok
}

// irqDevice returns the device names of a numbered /proc/interrupts line,
// given what follows its counts: the chip ("IR-PCI-MSI"), the hardware IRQ
// and flow ("31981568-edge", or on ARM "27 Level"), then the handlers'
// names ("mlx5_comp3@pci:0000:3b:00.0", "ehci_hcd:usb1, uhci_hcd:usb3").
// Old kernels print the flow in the chip ("IO-APIC-edge timer").
func irqDevice(rest []byte) []byte {
	_, rest = field(rest) // chip
	f, r := field(rest)
	if hwirq(f) {
		rest = r
		f, r = field(rest)
		if flow(f) {
			rest = r
		}
	}
	return bytes.TrimSpace(rest)
}

// hwirq reports whether f is a hardware IRQ number, optionally with its
// flow ("5-edge", "0-fasteoi", "27").
func hwirq(f []byte) bool {
	if len(f) == 0 || f[0] < '0' || f[0] > '9' {
		return false
	}
	i := bytes.IndexByte(f, '-')
	if i < 0 {
		return numeric(f)
	}
	return numeric(f[:i]) && i+1 < len(f)
}

// flow reports whether f is a flow type printed apart from the hardware
// IRQ, as ARM's GIC does ("27 Level").
func flow(f []byte) bool {
	return bytes.EqualFold(f, []byte("level")) || bytes.EqualFold(f, []byte("edge"))
}

// cut returns b shortened to at most max bytes without splitting a UTF-8
// sequence.
func cut(b []byte, max int) []byte {
	if len(b) <= max {
		return b
	}
	b = b[:max]
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return b
}
