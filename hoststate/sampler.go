package hoststate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/subsecond/subsecond"
)

// Interval bounds of Options.Interval.
const (
	MinInterval     = 100 * time.Millisecond
	MaxInterval     = 10 * time.Second
	DefaultInterval = time.Second
)

// Options configure a Sampler.
type Options struct {
	// Root is the directory holding proc and sys; "" for "/". Tests point
	// it at a fixture tree.
	Root string
	// Interval is how often Run samples, between MinInterval and
	// MaxInterval; 0 for DefaultInterval.
	Interval time.Duration
	// Now returns the time a sample is taken; nil for time.Now. Its wall
	// clock (CLOCK_REALTIME, as perf record -k CLOCK_REALTIME stamps
	// samples) becomes Point.Time; its monotonic reading, where present,
	// times the rates.
	Now func() time.Time
	// NetDevices names the network devices measured; nil for every device
	// under sys/class/net backed by hardware (having a "device" link),
	// which leaves out lo, bridges, veths and other virtual devices whose
	// number would make a sample cost grow with the host's containers.
	NetDevices []string
}

// Sampler reads a host's state from /proc and /sys and turns it into
// series points, one per series per Sample. It is not safe for concurrent
// use.
type Sampler struct {
	o     Options
	paths struct {
		stat, cgroups, interrupts, softirqs, meminfo, loadavg, net string
		cgroupStat                                                 [2]string
	}
	cgroupStat int // index in paths.cgroupStat that was last found

	buf []byte

	// n counts Sample calls; a source's previous reading is usable when
	// it was taken by call n-1.
	n        uint64
	prevTime time.Time
	emit     bool    // whether this call yields points
	dt       float64 // seconds since the previous call
	at       int64   // Point.Time of this call
	tick     int64   // Run's boundary the next call follows, Unix ns; 0 outside Run

	out []subsecond.Series
	pts []subsecond.Point

	stat   []CPUTimes
	cpus   []cpuState // by CPU+1; [0] is the "cpu" total
	cg     []CgroupCount
	labels map[string]string

	irq, soft counters
	net       map[string]*netDev
	netSeen   []string
}

// cpuState is a CPU's previous /proc/stat reading.
type cpuState struct {
	t    CPUTimes
	seen uint64
}

// New returns a Sampler of the host under o.Root.
func New(o Options) (*Sampler, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Interval < MinInterval || o.Interval > MaxInterval {
		return nil, fmt.Errorf("sampling interval %v outside [%v, %v]: %w", o.Interval, MinInterval, MaxInterval, subsecond.ErrInvalid)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Sampler{o: o, labels: map[string]string{}, net: map[string]*netDev{}}
	p := func(rel string) string { return filepath.Join(o.Root, rel) }
	s.paths.stat = p("proc/stat")
	s.paths.cgroups = p("proc/cgroups")
	s.paths.interrupts = p("proc/interrupts")
	s.paths.softirqs = p("proc/softirqs")
	s.paths.meminfo = p("proc/meminfo")
	s.paths.loadavg = p("proc/loadavg")
	s.paths.net = p("sys/class/net")
	s.paths.cgroupStat = [2]string{p("sys/fs/cgroup/cgroup.stat"), p("sys/fs/cgroup/unified/cgroup.stat")}
	s.irq.rows = map[string]*counterRow{}
	s.soft.rows = map[string]*counterRow{}
	return s, nil
}

// Interval returns the sampling interval of Run.
func (s *Sampler) Interval() time.Duration { return s.o.Interval }

// Sample reads the host's state once and returns a point per series for
// the interval since the previous call, all at this call's wall-clock time;
// the first call only primes the sampler and returns none. The series are:
//
//   - cpu.usr … cpu.idle per CPU and for the host (CPU subsecond.Unknown),
//     percentages of the interval's jiffies computed as sysstat's mpstat
//     does, a tickless CPU being 100% idle;
//   - cgroups per controller, cgroup.descendants and cgroup.dying of the
//     cgroup v2 root (or the hybrid hierarchy's unified root);
//   - irq per line and CPU, only where the rate is not zero (ERR and MIS,
//     which count for the whole host, with CPU subsecond.Unknown);
//   - softirq.net_rx and softirq.net_tx per CPU;
//   - net.packets, net.errors and net.drops per device, received plus sent;
//   - mem.available and load1.
//
// A counter that went back (a CPU coming online, a device replaced) gives
// no point for that interval rather than a negative or huge rate, save
// that the 32-bit interrupt counters are taken to wrap when they drop by
// more than half their range. A source whose file is absent (cgroup.stat
// under cgroup v1, a vanished device) is skipped; one that cannot be read
// or parsed is reported in err, joined with the others', while the points
// of the rest are still returned.
//
// The series and their Points are reused by the next call: copy what you
// keep.
func (s *Sampler) Sample() ([]subsecond.Series, error) {
	now := s.o.Now()
	s.n++
	s.dt = now.Sub(s.prevTime).Seconds()
	s.emit = s.n > 1 && s.dt > 0
	s.prevTime = now
	s.at = now.UnixNano()
	if s.tick != 0 && now.UnixNano()-s.tick < int64(s.o.Interval)/4 {
		// Run's tick: stamped on the interval's boundary, so that a
		// point covers the interval a cores map's column does.
		s.at = s.tick
	}
	s.tick = 0
	s.out, s.pts = s.out[:0], s.pts[:0]

	var errs []error
	for _, f := range [...]func() error{s.sampleStat, s.sampleCgroups, s.sampleCgroupStat, s.sampleInterrupts, s.sampleSoftirqs, s.sampleNet, s.sampleMem, s.sampleLoad} {
		if err := f(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for i := range s.out {
		s.out[i].Points = s.pts[i : i+1 : i+1]
	}
	if len(s.out) == 0 {
		return nil, errors.Join(errs...)
	}
	return s.out, errors.Join(errs...)
}

// Run primes the sampler, then samples at each multiple of the interval on
// the wall clock (12:00:01.000, 12:00:02.000, … at one second) and passes
// each sample's series to emit, until ctx ends (it then returns nil) or a
// sample or emit fails (it returns that error). A sample that comes late
// (a stalled host) is taken at once and the next one at the following
// multiple, so the intervals stay aligned. Each sample's points are
// stamped with its multiple of the interval (a reading follows it by
// well under a millisecond on an idle host), so that a point covers
// exactly the interval a cores map's column of the same width does; a
// sample taken more than a quarter interval late is stamped when taken.
// emit must not keep the series past its return.
func (s *Sampler) Run(ctx context.Context, emit func([]subsecond.Series) error) error {
	if _, err := s.Sample(); err != nil {
		return err
	}
	d := s.o.Interval
	next := time.Now().Truncate(d).Add(d)
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s.tick = next.UnixNano()
		series, err := s.Sample()
		if err != nil {
			return err
		}
		if err := emit(series); err != nil {
			return err
		}
		next = time.Now().Truncate(d).Add(d)
		t.Reset(time.Until(next))
	}
}

// add appends a point of series (name, cpu, label) at this call's time.
func (s *Sampler) add(name string, cpu int32, label string, v float64) {
	s.out = append(s.out, subsecond.Series{Name: name, CPU: cpu, Label: label})
	s.pts = append(s.pts, subsecond.Point{Time: s.at, Value: v})
}

// read reads the file at path into the sampler's buffer.
func (s *Sampler) read(path string) ([]byte, error) {
	b, err := readFile(path, s.buf)
	s.buf = b[:0]
	return b, err
}

// intern returns b as a string, allocating only the first time.
func (s *Sampler) intern(b []byte) string {
	if l, ok := s.labels[string(b)]; ok {
		return l
	}
	l := string(b)
	s.labels[l] = l
	return l
}

// cpuKinds are the series of mpstat's columns, in the order of mpstat's
// percentages.
var cpuKinds = [...]string{"cpu.usr", "cpu.nice", "cpu.sys", "cpu.iowait", "cpu.irq", "cpu.soft", "cpu.steal", "cpu.idle"}

func (s *Sampler) sampleStat() error {
	b, err := s.read(s.paths.stat)
	if err != nil {
		return err
	}
	s.stat, err = ParseStat(s.stat[:0], b)
	if err != nil {
		return err
	}
	for _, c := range s.stat {
		slot := int(c.CPU) + 1
		for slot >= len(s.cpus) {
			s.cpus = append(s.cpus, cpuState{})
		}
		p := &s.cpus[slot]
		if s.emit && p.seen == s.n-1 {
			if pct, ok := mpstat(p.t, c); ok {
				for i, v := range pct {
					s.add(cpuKinds[i], c.CPU, "", v)
				}
			}
		}
		p.t, p.seen = c, s.n
	}
	return nil
}

// mpstat returns the percentages of the jiffies between readings p and c
// that went to each of cpuKinds, as sysstat's mpstat computes them: %usr
// is user − guest and %nice is nice − guest_nice, all over the interval of
// the CPU's own counters; a field that went back counts zero, and idle and
// iowait restarting from zero (a CPU back online) count from zero. It
// returns 100% idle when no jiffy passed (a tickless CPU) and false when
// the counters went back as a whole.
func mpstat(p, c CPUTimes) ([len(cpuKinds)]float64, bool) {
	var pct [len(cpuKinds)]float64
	if c.Idle < p.Idle {
		p.Idle = 0
	}
	if c.IOWait < p.IOWait {
		p.IOWait = 0
	}
	pu, cu := int64(p.User)-int64(p.Guest), int64(c.User)-int64(c.Guest)
	pn, cn := int64(p.Nice)-int64(p.GuestNice), int64(c.Nice)-int64(c.GuestNice)
	var ishift int64
	if cu < pu {
		ishift += pu - cu
	}
	if cn < pn {
		ishift += pn - cn
	}
	total := func(t CPUTimes) int64 {
		return int64(t.User + t.Nice + t.System + t.IOWait + t.Idle + t.Steal + t.IRQ + t.SoftIRQ)
	}
	itv := total(c) - total(p) + ishift
	if itv < 0 {
		return pct, false
	}
	if itv == 0 {
		pct[len(pct)-1] = 100
		return pct, true
	}
	sp := func(a, b int64) float64 {
		if b < a {
			return 0
		}
		return float64(b-a) / float64(itv) * 100
	}
	pct[0] = sp(pu, cu)
	pct[1] = sp(pn, cn)
	pct[2] = sp(int64(p.System), int64(c.System))
	pct[3] = sp(int64(p.IOWait), int64(c.IOWait))
	pct[4] = sp(int64(p.IRQ), int64(c.IRQ))
	pct[5] = sp(int64(p.SoftIRQ), int64(c.SoftIRQ))
	pct[6] = sp(int64(p.Steal), int64(c.Steal))
	pct[7] = sp(int64(p.Idle), int64(c.Idle))
	return pct, true
}

func (s *Sampler) sampleCgroups() error {
	b, err := s.read(s.paths.cgroups)
	if err != nil {
		return err
	}
	s.cg, err = ParseCgroups(s.cg[:0], b)
	if err != nil {
		return err
	}
	if s.emit {
		for _, c := range s.cg {
			s.add("cgroups", subsecond.Unknown, s.intern(c.Name), float64(c.Cgroups))
		}
	}
	return nil
}

func (s *Sampler) sampleCgroupStat() error {
	b, err := s.read(s.paths.cgroupStat[s.cgroupStat])
	if errors.Is(err, fs.ErrNotExist) {
		s.cgroupStat = 1 - s.cgroupStat
		b, err = s.read(s.paths.cgroupStat[s.cgroupStat])
	}
	if err != nil {
		return err
	}
	st, err := ParseCgroupStat(b)
	if err != nil {
		return err
	}
	if s.emit {
		s.add("cgroup.descendants", subsecond.Unknown, "", float64(st.Descendants))
		s.add("cgroup.dying", subsecond.Unknown, "", float64(st.Dying))
	}
	return nil
}

func (s *Sampler) sampleMem() error {
	b, err := s.read(s.paths.meminfo)
	if err != nil {
		return err
	}
	n, err := ParseMemAvailable(b)
	if err != nil {
		return err
	}
	if s.emit {
		s.add("mem.available", subsecond.Unknown, "", float64(n))
	}
	return nil
}

func (s *Sampler) sampleLoad() error {
	b, err := s.read(s.paths.loadavg)
	if err != nil {
		return err
	}
	a, err := ParseLoadavg(b)
	if err != nil {
		return err
	}
	if s.emit {
		s.add("load1", subsecond.Unknown, "", a.Load1)
	}
	return nil
}

// delta returns how much a counter grew from prev to cur, and false when
// it went back (reset). A 32-bit counter (wrap32) that dropped by more
// than half its range is taken to have wrapped.
func delta(prev, cur uint64, wrap32 bool) (uint64, bool) {
	if cur >= prev {
		return cur - prev, true
	}
	if wrap32 && prev <= math.MaxUint32 && prev-cur > 1<<31 {
		return cur + 1<<32 - prev, true
	}
	return 0, false
}

// counters keeps the previous readings of a per-CPU counter table.
type counters struct {
	table CounterTable
	rows  map[string]*counterRow
	// header is the previous sample's CPU columns; epoch counts its
	// changes, which make every row's previous reading unusable (a CPU
	// offline has no column, and its counts resume where they were).
	header []int32
	epoch  uint64
}

// counterRow is the previous reading of one row, by CPU+1 (slot 0 for a
// host-wide row).
type counterRow struct {
	label string
	prev  []uint64
	seen  uint64
	epoch uint64
}

// scan reads the table in b and calls fn for each row's counts, with the
// row, its slots (CPU+1, or 0 for a host-wide row) and counts, and whether
// its previous reading is usable, before recording the counts as the
// previous reading. Rows for which want returns false are skipped.
func (s *Sampler) scan(c *counters, file string, b []byte, want func(name []byte) bool, fn func(r *counterRow, slot int, prev, cur uint64)) error {
	t := &c.table
	t.Reset(file, b)
	if t.Err() != nil {
		return t.Err()
	}
	if !equal(c.header, t.CPUs()) {
		c.header = append(c.header[:0], t.CPUs()...)
		c.epoch++
	}
	slots := 1
	for _, cpu := range c.header {
		slots = max(slots, int(cpu)+2)
	}
	for t.Scan() {
		if want != nil && !want(t.Name()) {
			continue
		}
		r, ok := c.rows[string(t.Label())]
		if !ok {
			r = &counterRow{label: string(t.Label())}
			c.rows[r.label] = r
		}
		if len(r.prev) < slots {
			r.prev = append(r.prev, make([]uint64, slots-len(r.prev))...)
		}
		usable := s.emit && r.seen == s.n-1 && r.epoch == c.epoch
		counts := t.Counts()
		if len(counts) < len(c.header) {
			// A host-wide total, such as ERR and MIS.
			var sum uint64
			for _, n := range counts {
				sum += n
			}
			if usable {
				fn(r, 0, r.prev[0], sum)
			}
			r.prev[0] = sum
		} else {
			for i, n := range counts {
				slot := int(c.header[i]) + 1
				if usable {
					fn(r, slot, r.prev[slot], n)
				}
				r.prev[slot] = n
			}
		}
		r.seen, r.epoch = s.n, c.epoch
	}
	if t.Err() != nil {
		return t.Err()
	}
	for l, r := range c.rows {
		if r.seen != s.n {
			delete(c.rows, l) // a line gone with its device
		}
	}
	return nil
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s *Sampler) sampleInterrupts() error {
	b, err := s.read(s.paths.interrupts)
	if err != nil {
		return err
	}
	return s.scan(&s.irq, fileInterrupts, b, nil, func(r *counterRow, slot int, prev, cur uint64) {
		if d, ok := delta(prev, cur, true); ok && d > 0 {
			s.add("irq", int32(slot-1), r.label, float64(d)/s.dt)
		}
	})
}

func (s *Sampler) sampleSoftirqs() error {
	b, err := s.read(s.paths.softirqs)
	if err != nil {
		return err
	}
	want := func(name []byte) bool { return string(name) == "NET_RX" || string(name) == "NET_TX" }
	return s.scan(&s.soft, fileSoftirqs, b, want, func(r *counterRow, slot int, prev, cur uint64) {
		if d, ok := delta(prev, cur, true); ok {
			name := "softirq.net_rx"
			if r.label == "NET_TX" {
				name = "softirq.net_tx"
			}
			s.add(name, int32(slot-1), "", float64(d)/s.dt)
		}
	})
}

// netFiles are the counters read of each device, under statistics/.
var netFiles = [...]string{"rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"}

// netDev is a network device's previous reading.
type netDev struct {
	name   string
	skip   bool // not backed by hardware
	paths  [len(netFiles)]string
	prev   [len(netFiles)]uint64
	seen   uint64 // the call of prev
	listed uint64 // the call that last listed the device
}

func (s *Sampler) sampleNet() error {
	names := s.o.NetDevices
	if names == nil {
		d, err := os.Open(s.paths.net)
		if err != nil {
			return err
		}
		names, err = d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return err
		}
	}
	var errs []error
	for _, name := range names {
		d, ok := s.net[name]
		if !ok {
			d = &netDev{name: name}
			dir := filepath.Join(s.paths.net, name)
			if s.o.NetDevices == nil {
				_, err := os.Lstat(filepath.Join(dir, "device"))
				d.skip = err != nil
			}
			for i, f := range netFiles {
				d.paths[i] = filepath.Join(dir, "statistics", f)
			}
			s.net[name] = d
		}
		d.listed = s.n
		if d.skip {
			continue
		}
		if err := s.sampleNetDev(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for name, d := range s.net {
		if d.listed != s.n {
			delete(s.net, name)
		}
	}
	return errors.Join(errs...)
}

func (s *Sampler) sampleNetDev(d *netDev) error {
	var cur [len(netFiles)]uint64
	for i, p := range d.paths {
		b, err := s.read(p)
		if err != nil {
			return err // the device vanished: prev stays stale
		}
		if cur[i], err = ParseCounter(p, b); err != nil {
			return err
		}
	}
	if s.emit && d.seen == s.n-1 {
		label := d.name
		if len(label) > subsecond.MaxSeriesLabel {
			label = string(cut([]byte(label), subsecond.MaxSeriesLabel))
		}
		for i, name := range [...]string{"net.packets", "net.errors", "net.drops"} {
			rx, ok1 := delta(d.prev[2*i], cur[2*i], false)
			tx, ok2 := delta(d.prev[2*i+1], cur[2*i+1], false)
			if ok1 && ok2 {
				s.add(name, subsecond.Unknown, label, float64(rx+tx)/s.dt)
			}
		}
	}
	d.prev, d.seen = cur, s.n
	return nil
}
