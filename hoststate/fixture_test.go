package hoststate

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/proc96 from the generator")

// The proc96 fixture: a synthetic 96-CPU host in the shapes of the kernel's
// files (format strings of fs/proc/stat.c, kernel/irq/proc.c,
// arch/x86/kernel/irq.c, fs/proc/softirqs.c), at two times one second
// apart, t0 and t1. Its counters move by the amounts below, so that the
// sampler's results can be checked by hand.
const (
	fixtureCPUs = 96
	busyCPU     = 7  // 5 jiffies user, 95 system, nothing else
	nicQueues   = 64 // mlx5_comp<j> on CPU j, IRQ 45+j
)

// fixtureFiles returns the files of snapshot t (0 or 1) by path under the
// root, and the symbolic links.
func fixtureFiles(t int) (files, links map[string]string) {
	files = map[string]string{
		"proc/stat":                 fixtureStat(t),
		"proc/interrupts":           fixtureInterrupts(t),
		"proc/softirqs":             fixtureSoftirqs(t),
		"proc/cgroups":              fixtureCgroups(t),
		"proc/meminfo":              fixtureMeminfo(t),
		"proc/loadavg":              []string{"0.27 1.56 1.95 3/109 12203\n", "3.52 2.10 1.99 5/1200 12345\n"}[t],
		"sys/fs/cgroup/cgroup.stat": fmt.Sprintf("nr_descendants %d\nnr_subsys_cpu %d\nnr_subsys_memory %d\nnr_dying_descendants %d\nnr_dying_subsys_cpu 0\nnr_dying_subsys_memory %d\n", 120+5*t, 121+5*t, 121+5*t, 3+4*t, 3+4*t),
	}
	stats := map[string]uint64{
		"collisions": 0, "multicast": 12, "rx_bytes": 9_000_000_000, "tx_bytes": 4_000_000_000,
		"rx_compressed": 0, "tx_compressed": 0, "rx_crc_errors": 0, "rx_fifo_errors": 0, "rx_frame_errors": 0,
		"rx_length_errors": 0, "rx_missed_errors": 0, "rx_nohandler": 0, "rx_over_errors": 0,
		"tx_aborted_errors": 0, "tx_carrier_errors": 0, "tx_fifo_errors": 0, "tx_heartbeat_errors": 0, "tx_window_errors": 0,
		"rx_packets": 1_000_000, "tx_packets": 2_000_000, "rx_errors": 10, "tx_errors": 20, "rx_dropped": 30, "tx_dropped": 40,
	}
	moves := map[string]uint64{"rx_packets": 1000, "tx_packets": 500, "rx_errors": 1, "tx_errors": 2, "rx_dropped": 4, "rx_bytes": 1_500_000, "tx_bytes": 750_000}
	for name, v := range stats {
		files["sys/class/net/eth0/statistics/"+name] = fmt.Sprintf("%d\n", v+uint64(t)*moves[name])
		files["sys/class/net/lo/statistics/"+name] = fmt.Sprintf("%d\n", uint64(t)*moves[name])
	}
	// eth0 is hardware: its device link resolves (to a device whose
	// vendor is Mellanox's), as a dangling link would not be copied by
	// tools that copy only what exists.
	links = map[string]string{"sys/class/net/eth0/device": "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"}
	files["sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/vendor"] = "0x15b3\n"
	return files, links
}

// cpuTimes returns CPU i's /proc/stat counters at snapshot t: user nice
// system idle iowait irq softirq steal guest guest_nice.
func cpuTimes(i, t int) [10]uint64 {
	base := uint64(100_000 + 1000*i)
	v := [10]uint64{base + 50_000, base / 10, base + 20_000, base * 4, base / 20, base / 100, base / 50, base / 200, base / 40, base / 400}
	move := [10]uint64{20, 4, 30, 35, 5, 2, 3, 1, 5, 1}
	if i == busyCPU {
		move = [10]uint64{5, 0, 95}
	}
	for k := range v {
		v[k] += uint64(t) * move[k]
	}
	return v
}

func fixtureStat(t int) string {
	var b strings.Builder
	var total [10]uint64
	for i := range fixtureCPUs {
		for k, v := range cpuTimes(i, t) {
			total[k] += v
		}
	}
	line := func(name string, v [10]uint64) {
		fmt.Fprintf(&b, "%s %d %d %d %d %d %d %d %d %d %d\n", name, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9])
	}
	line("cpu ", total)
	for i := range fixtureCPUs {
		line(fmt.Sprintf("cpu%d", i), cpuTimes(i, t))
	}
	b.WriteString("intr 20339715 0 0 14")
	for range 300 {
		b.WriteString(" 0")
	}
	fmt.Fprintf(&b, "\nctxt %d\nbtime 1796159055\nprocesses %d\nprocs_running 3\nprocs_blocked 0\n", 46269772+t*90_000, 304229+t*12)
	b.WriteString("softirq 4954659 0 653634 8 276727 1086079 0 556 921858 31442 1984355\n")
	return b.String()
}

func fixtureInterrupts(t int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", 3+8))
	for i := range fixtureCPUs {
		fmt.Fprintf(&b, "CPU%-8d", i)
	}
	b.WriteString("\n")
	row := func(irq string, counts func(cpu int) uint64, tail string) {
		fmt.Fprintf(&b, "%3s: ", irq)
		for i := range fixtureCPUs {
			fmt.Fprintf(&b, "%10d ", counts(i))
		}
		b.WriteString(tail + "\n")
	}
	zero := func(int) uint64 { return 0 }
	on := func(cpu int, n uint64) func(int) uint64 {
		return func(i int) uint64 {
			if i == cpu {
				return n
			}
			return 0
		}
	}
	row("0", on(0, 44), "  IO-APIC   2-edge      timer")
	row("8", zero, "  IO-APIC   8-edge      rtc0")
	row("9", on(1, 12), "  IO-APIC   9-fasteoi   acpi")
	row("16", zero, "  IO-APIC  16-fasteoi   ehci_hcd:usb1, i801_smbus")
	row("24", zero, " DMAR-MSI   0-edge      dmar0")
	row("44", on(0, 3150), " IR-PCI-MSI 31981568-edge      mlx5_async0@pci:0000:3b:00.0")
	for j := range nicQueues {
		// Queue j interrupts CPU j, and once had a few on CPU 95.
		n := uint64(1000*(j+1) + t*(500+j))
		row(fmt.Sprint(45+j), func(i int) uint64 {
			switch i {
			case j:
				return n
			case fixtureCPUs - 1:
				return 7
			}
			return 0
		}, fmt.Sprintf(" IR-PCI-MSI %d-edge      mlx5_comp%d@pci:0000:3b:00.0", 31981569+j, j))
	}
	// nvme0q1's count on CPU 5 wraps past 2³² between t0 and t1.
	row("109", on(5, []uint64{4294967290, 10}[t]), " IR-PCI-MSI 1048577-edge      nvme0q1")
	named := []struct {
		name string
		n    func(int) uint64
		desc string
	}{
		{"NMI", func(i int) uint64 { return uint64(i) }, "Non-maskable interrupts"},
		{"LOC", func(i int) uint64 { return uint64(5_000_000+7*i) + uint64(t*250) }, "Local timer interrupts"},
		{"SPU", zero, "Spurious interrupts"},
		{"PMI", func(i int) uint64 { return uint64(i) }, "Performance monitoring interrupts"},
		{"IWI", zero, "IRQ work interrupts"},
		{"RTR", zero, "APIC ICR read retries"},
		{"RES", func(i int) uint64 { return uint64(1_800_000 + i) }, "Rescheduling interrupts"},
		{"CAL", func(i int) uint64 { return uint64(1_700_000 + i) }, "Function call interrupts"},
		{"TLB", func(i int) uint64 { return uint64(1_000_000 + i) }, "TLB shootdowns"},
		{"TRM", zero, "Thermal event interrupts"},
		{"THR", zero, "Threshold APIC interrupts"},
		{"DFR", zero, "Deferred Error APIC interrupts"},
		{"MCE", zero, "Machine check exceptions"},
		{"MCP", func(int) uint64 { return 300 }, "Machine check polls"},
	}
	for _, r := range named {
		row(r.name, r.n, "  "+r.desc)
	}
	fmt.Fprintf(&b, "ERR: %10d\n", []int{0, 3}[t])
	fmt.Fprintf(&b, "MIS: %10d\n", 0)
	row("PIN", zero, "  Posted-interrupt notification event")
	row("NPI", zero, "  Nested posted-interrupt event")
	row("PIW", zero, "  Posted-interrupt wakeup event")
	return b.String()
}

func fixtureSoftirqs(t int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", 20))
	for i := range fixtureCPUs {
		fmt.Fprintf(&b, "CPU%-8d", i)
	}
	b.WriteString("\n")
	for _, name := range []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"} {
		fmt.Fprintf(&b, "%12s:", name)
		for i := range fixtureCPUs {
			var n uint64
			switch name {
			case "NET_RX":
				n = uint64(100_000 + i + t*10*i)
			case "NET_TX":
				if i == 0 {
					n = uint64(6 + 2*t)
				}
			case "TIMER", "SCHED", "RCU":
				n = uint64(300_000+1000*i) + uint64(t*(100+i))
			}
			fmt.Fprintf(&b, " %10d", n)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func fixtureCgroups(t int) string {
	var b strings.Builder
	b.WriteString("#subsys_name\thierarchy\tnum_cgroups\tenabled\n")
	for i, c := range []string{"cpuset", "cpu", "cpuacct", "blkio", "memory", "devices", "freezer", "net_cls", "perf_event", "net_prio", "hugetlb", "pids"} {
		n := 1
		if c == "memory" {
			n = 63 + 7*t
		}
		fmt.Fprintf(&b, "%s\t%d\t%d\t1\n", c, i, n)
	}
	return b.String()
}

func fixtureMeminfo(t int) string {
	return fmt.Sprintf(`MemTotal:       394684092 kB
MemFree:        22095772 kB
MemAvailable:   %d kB
Buffers:           42432 kB
Cached:          2124336 kB
SwapCached:            0 kB
Active:          1038032 kB
Inactive:        1296200 kB
Dirty:               120 kB
Writeback:             0 kB
AnonPages:        167656 kB
Mapped:           321236 kB
Shmem:              2284 kB
Slab:             223856 kB
PageTables:         6328 kB
CommitLimit:    197342044 kB
Committed_AS:    1217824 kB
VmallocTotal:   34359738367 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
DirectMap4k:      161792 kB
DirectMap2M:    16615424 kB
`, []int{24183572, 24000000}[t])
}

// writeFixture writes snapshot t under root.
func writeFixture(t *testing.T, root string, snapshot int) {
	t.Helper()
	files, links := fixtureFiles(snapshot)
	for p, content := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		p = filepath.Join(root, p)
		os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFixture checks that testdata/proc96 is what the generator writes;
// go test -run TestFixture -update rewrites it.
func TestFixture(t *testing.T) {
	for snapshot, dir := range []string{"testdata/proc96/t0", "testdata/proc96/t1"} {
		if *update {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			writeFixture(t, dir, snapshot)
		}
		files, links := fixtureFiles(snapshot)
		var got []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
			if target, ok := links[filepath.ToSlash(rel)]; ok {
				if l, err := os.Readlink(p); err != nil || l != target {
					t.Errorf("%s links to %q (%v); want %q", p, l, err, target)
				}
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if string(b) != files[filepath.ToSlash(rel)] {
				t.Errorf("%s differs from the generator's; run go test -run TestFixture -update", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(files)+len(links) {
			sort.Strings(got)
			t.Errorf("%s holds %d files; want %d: %v", dir, len(got), len(files)+len(links), got)
		}
	}
}
