package subsecond

import "strconv"

// Series is one measurement of a host over time, recorded beside perf's
// samples on the same wall clock (subsecond record's state sampler) or
// imported from what people already recorded (sysstat's mpstat and sar):
// per-CPU time as mpstat shows it, cgroup counts, interrupt rates, network
// counters. Its Name is a SeriesKinds row, which gives its unit and whether
// it is per CPU.
//
// A Point's Value covers the interval that ends at its Time (mpstat prints
// the end of each interval too): the value of the point at t aligns with
// the samples of [t − interval, t). Points are in time order. A rate
// (unit "/s") may omit its zero points: within a recording an absent point
// of a rate is zero.
type Series struct {
	Name string `json:"name"`
	// CPU is the CPU measured, or Unknown for the host as a whole.
	CPU int32 `json:"cpu"`
	// Label names what is measured within the kind: the cgroup
	// controller, the IRQ line ("45:mlx5_comp3"), the network device;
	// "" when the kind has one series per CPU or host.
	Label  string  `json:"label,omitempty"`
	Points []Point `json:"points"`
}

// Point is a series' value at a wall-clock time, Unix nanoseconds.
type Point struct {
	Time  int64   `json:"t"`
	Value float64 `json:"v"`
}

// SeriesKey names a series of a host: its kind, CPU and label.
type SeriesKey struct {
	Name  string `json:"name"`
	CPU   int32  `json:"cpu"`
	Label string `json:"label,omitempty"`
}

// String names the series: "cpu.sys cpu 3", "irq cpu 0 "45:mlx5_comp3"",
// "load1".
func (k SeriesKey) String() string {
	s := k.Name
	if k.CPU != Unknown {
		s += " cpu " + strconv.Itoa(int(k.CPU))
	}
	if k.Label != "" {
		s += " " + strconv.Quote(k.Label)
	}
	return s
}

// Key returns s's key.
func (s *Series) Key() SeriesKey { return SeriesKey{Name: s.Name, CPU: s.CPU, Label: s.Label} }

// SeriesKind describes one kind of series.
type SeriesKind struct {
	Name string
	// Unit is "%" (a share of one CPU's time, 0–100), "count", "/s" (a
	// rate) or "bytes".
	Unit string
	// PerCPU is set when the kind has a series per CPU (and one for the
	// host as a whole, CPU Unknown, where the source gives it).
	PerCPU bool
	// Help says what it is and where it comes from.
	Help string
}

// SeriesKinds are the kinds of series a host may have, in the order the
// pages list them. A series of another name is refused where it enters
// (an import, an upload).
var SeriesKinds = []SeriesKind{
	{"cpu.usr", "%", true, "time in user mode, less guest (mpstat %usr; /proc/stat user − guest)"},
	{"cpu.nice", "%", true, "time in user mode at a positive nice value (mpstat %nice)"},
	{"cpu.sys", "%", true, "time in the kernel, less interrupts (mpstat %sys; /proc/stat system)"},
	{"cpu.iowait", "%", true, "idle time with I/O outstanding (mpstat %iowait)"},
	{"cpu.irq", "%", true, "time serving hardware interrupts (mpstat %irq)"},
	{"cpu.soft", "%", true, "time serving softirqs (mpstat %soft)"},
	{"cpu.steal", "%", true, "time the hypervisor ran something else (mpstat %steal)"},
	{"cpu.idle", "%", true, "idle time without I/O outstanding (mpstat %idle)"},
	{"cgroups", "count", false, "cgroups of a controller, Label (/proc/cgroups num_cgroups)"},
	{"cgroup.descendants", "count", false, "live cgroups below the cgroup v2 root (cgroup.stat nr_descendants)"},
	{"cgroup.dying", "count", false, "dying cgroups below the cgroup v2 root, removed but still held (cgroup.stat nr_dying_descendants)"},
	{"irq", "/s", true, "interrupts of IRQ line Label per second on a CPU (/proc/interrupts)"},
	{"softirq.net_rx", "/s", true, "NET_RX softirqs per second on a CPU (/proc/softirqs)"},
	{"softirq.net_tx", "/s", true, "NET_TX softirqs per second on a CPU (/proc/softirqs)"},
	{"net.packets", "/s", false, "packets received and sent per second by device Label (/sys/class/net)"},
	{"net.errors", "/s", false, "receive and transmit errors per second of device Label (/sys/class/net)"},
	{"net.drops", "/s", false, "packets dropped per second by device Label (/sys/class/net)"},
	{"mem.available", "bytes", false, "memory available for new work (/proc/meminfo MemAvailable)"},
	{"load1", "count", false, "the one-minute load average (/proc/loadavg)"},
}

// Kind returns the kind named name, or false.
func Kind(name string) (SeriesKind, bool) {
	for _, k := range SeriesKinds {
		if k.Name == name {
			return k, true
		}
	}
	return SeriesKind{}, false
}

// MaxSeriesLabel bounds a series label, in bytes.
const MaxSeriesLabel = 128

// MaxHostSeries bounds the distinct series (name, CPU, label) one host
// keeps. A 96-CPU host records about 1,000 for mpstat's columns and
// softirqs and one per interrupt line and CPU that serves it: a few
// thousand where queues are many. A post that would take the host past it
// stores its points of the series the host has and refuses the new ones
// beyond it, the last in SeriesKinds' order first.
const MaxHostSeries = 50_000

// SeriesAdded is what adding series to a host did: Added points were new,
// and Refused new series were not stored because the host had
// MaxHostSeries (RefusedSeries names the first few of them).
type SeriesAdded struct {
	Added         int         `json:"added"`
	Refused       int         `json:"refused,omitempty"`
	RefusedSeries []SeriesKey `json:"refused_series,omitempty"`
}

// MaxRefusedNamed bounds SeriesAdded.RefusedSeries.
const MaxRefusedNamed = 10

// Refusal says which series new to host were not stored, and why; "" when
// none were refused.
func (a SeriesAdded) Refusal(host string) string {
	if a.Refused == 0 {
		return ""
	}
	s := strconv.Itoa(a.Refused) + " series new to " + host + " not stored: a host keeps at most " +
		strconv.Itoa(MaxHostSeries) + " series, and pruning its older recording frees those only it held ("
	for i, k := range a.RefusedSeries {
		if i > 0 {
			s += ", "
		}
		s += k.String()
	}
	if len(a.RefusedSeries) < a.Refused {
		s += ", …"
	}
	return s + ")"
}
