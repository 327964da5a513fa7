package hoststate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// checkErr reports whether err is what wantErr asks: nil for "", else an
// error wrapping subsecond.ErrInvalid whose text holds wantErr.
func checkErr(t *testing.T, call string, err error, wantErr string) bool {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Errorf("%s error = %v; want nil", call, err)
			return false
		}
		return true
	}
	if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("%s error = %v; want one wrapping ErrInvalid holding %q", call, err, wantErr)
	}
	return false
}

func TestParseStat(t *testing.T) {
	const here = "cpu  911219 13151 246216 650664 6344 0 3266 37230 0 0\n" +
		"cpu0 452719 6488 120656 332269 2588 0 439 18488 0 0\n" +
		"cpu1 458499 6662 125559 318395 3755 0 2827 18742 0 0\n" +
		"intr 20339715 0 0 0\nctxt 46269772\nbtime 1796159055\nsoftirq 4954659 0 653634\n"
	for _, tc := range []struct {
		in      string
		want    []CPUTimes
		wantErr string
	}{
		{here, []CPUTimes{
			{CPU: -1, User: 911219, Nice: 13151, System: 246216, Idle: 650664, IOWait: 6344, SoftIRQ: 3266, Steal: 37230},
			{CPU: 0, User: 452719, Nice: 6488, System: 120656, Idle: 332269, IOWait: 2588, SoftIRQ: 439, Steal: 18488},
			{CPU: 1, User: 458499, Nice: 6662, System: 125559, Idle: 318395, IOWait: 3755, SoftIRQ: 2827, Steal: 18742},
		}, ""},
		// An old kernel's four columns; a future kernel's eleventh.
		{"cpu3 1 2 3 4\ncpu4 1 2 3 4 5 6 7 8 9 10 11\n", []CPUTimes{
			{CPU: 3, User: 1, Nice: 2, System: 3, Idle: 4},
			{CPU: 4, User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, Guest: 9, GuestNice: 10},
		}, ""},
		{"", nil, ""},
		{"cpu 1 2 3 4\ncpu0 1 2 3\n", nil, "/proc/stat line 2: want at least 4 counts"},
		{"cpu 1 2 -3 4\n", nil, "/proc/stat line 1: want a count of jiffies in column 3 of cpu"},
		{"cpuX 1 2 3 4\n", nil, `/proc/stat line 1: want cpu or cpu<N>, got "cpuX"`},
		{"cpu 1 2 3 99999999999999999999999\n", nil, "line 1"},
	} {
		got, err := ParseStat(nil, []byte(tc.in))
		call := fmt.Sprintf("ParseStat(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %+v; want %+v", call, got, tc.want)
		}
	}
}

func TestParseCgroups(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string // name=count,… with * for disabled
		wantErr string
	}{
		{"#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\nmemory\t4\t63\t1\nnet_cls\t0\t1\t0\n", "cpuset=1,memory=63,net_cls=1*", ""},
		{"\n", "", ""},
		{"#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\n", "", "/proc/cgroups line 2: want 4 columns"},
		{"cpuset\t3\tmany\t1\n", "", `/proc/cgroups line 1: want numbers after cpuset, got "3" "many" "1"`},
	} {
		got, err := ParseCgroups(nil, []byte(tc.in))
		call := fmt.Sprintf("ParseCgroups(%q)", tc.in)
		if !checkErr(t, call, err, tc.wantErr) {
			continue
		}
		var s []string
		for _, c := range got {
			star := ""
			if !c.Enabled {
				star = "*"
			}
			s = append(s, fmt.Sprintf("%s=%d%s", c.Name, c.Cgroups, star))
		}
		if g := strings.Join(s, ","); g != tc.want {
			t.Errorf("%s = %s; want %s", call, g, tc.want)
		}
	}
}

func TestParseCgroupStat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    CgroupStat
		wantErr string
	}{
		{"nr_descendants 0\nnr_subsys_perf_event 1\nnr_dying_descendants 0\nnr_dying_subsys_perf_event 0\n", CgroupStat{}, ""},
		{"nr_descendants 812\nnr_dying_descendants 4051\n", CgroupStat{812, 4051}, ""},
		{"nr_descendants 812\n", CgroupStat{}, "cgroup.stat: want nr_descendants and nr_dying_descendants"},
		{"nr_descendants 812\nnr_dying_descendants\n", CgroupStat{}, `cgroup.stat line 2: want a count after nr_dying_descendants, got ""`},
	} {
		got, err := ParseCgroupStat([]byte(tc.in))
		call := fmt.Sprintf("ParseCgroupStat(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && got != tc.want {
			t.Errorf("%s = %+v; want %+v", call, got, tc.want)
		}
	}
}

func TestParseMemAvailable(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"MemTotal:       24684092 kB\nMemFree:        22095772 kB\nMemAvailable:   24183572 kB\n", 24183572 * 1024, ""},
		{"MemTotal:       24684092 kB\n", 0, "/proc/meminfo: want a MemAvailable line"},
		{"MemTotal: 1 kB\nMemAvailable:   24183572 MB\n", 0, "/proc/meminfo line 2: want MemAvailable: <n> kB"},
	} {
		got, err := ParseMemAvailable([]byte(tc.in))
		call := fmt.Sprintf("ParseMemAvailable(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && got != tc.want {
			t.Errorf("%s = %d; want %d", call, got, tc.want)
		}
	}
}

func TestParseLoadavg(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Loadavg
		wantErr string
	}{
		{"0.27 1.56 1.95 3/109 12203\n", Loadavg{0.27, 1.56, 1.95}, ""},
		{"0.27 1.56\n", Loadavg{}, `/proc/loadavg line 1: want three load averages, got "0.27 1.56"`},
		{"", Loadavg{}, "/proc/loadavg line 1"},
	} {
		got, err := ParseLoadavg([]byte(tc.in))
		call := fmt.Sprintf("ParseLoadavg(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && got != tc.want {
			t.Errorf("%s = %+v; want %+v", call, got, tc.want)
		}
	}
}

func TestParseCounter(t *testing.T) {
	const file = "/sys/class/net/eth0/statistics/rx_packets"
	for _, tc := range []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"342446\n", 342446, ""},
		{"18446744073709551615\n", 18446744073709551615, ""},
		{"\n", 0, file + ` line 1: want one decimal counter, got ""`},
		{"12 13\n", 0, "want one decimal counter"},
	} {
		got, err := ParseCounter(file, []byte(tc.in))
		call := fmt.Sprintf("ParseCounter(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && got != tc.want {
			t.Errorf("%s = %d; want %d", call, got, tc.want)
		}
	}
}

// table renders a CounterTable scan as "label cpu=count …" lines.
func table(file, in string) (string, error) {
	var t CounterTable
	t.Reset(file, []byte(in))
	var b strings.Builder
	for t.Scan() {
		b.WriteString(string(t.Label()))
		for i, n := range t.Counts() {
			fmt.Fprintf(&b, " %d=%d", t.CPUs()[i], n)
		}
		b.WriteString("\n")
	}
	return b.String(), t.Err()
}

func TestCounterTable(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		{"this machine's /proc/interrupts", `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config
 38:          0      30739 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
NMI:          0          0   Non-maskable interrupts
LOC:    6157199    6082913   Local timer interrupts
ERR:          0
MIS:          0
PIN:          0          0   Posted-interrupt notification event
`, `24:ACPI:Ged 0=1 1=0
28:virtio0-config 0=0 1=0
38:virtio2-input.0 0=0 1=30739
NMI 0=0 1=0
LOC 0=6157199 1=6082913
ERR 0=0
MIS 0=0
PIN 0=0 1=0
`, ""},
		{"a NIC queue, CPU 1 offline", `            CPU0       CPU2       CPU3
 45:          0     123456          0  IR-PCI-MSI 31981568-edge      mlx5_comp3@pci:0000:3b:00.0
 16:         31          0          0  IO-APIC  16-fasteoi   ehci_hcd:usb1, uhci_hcd:usb3
  3:          0          0          0  IO-APIC   3-edge
`, `45:mlx5_comp3@pci:0000:3b:00.0 0=0 2=123456 3=0
16:ehci_hcd:usb1, uhci_hcd:usb3 0=31 2=0 3=0
3 0=0 2=0 3=0
`, ""},
		{"ARM's GIC and an old kernel's chip-edge", `           CPU0       CPU1
 11:     123456     654321     GICv3  27 Level     arch_timer
  0:         45          0   IO-APIC-edge      timer
IPI0:      1000       2000       Rescheduling interrupts
`, `11:arch_timer 0=123456 1=654321
0:timer 0=45 1=0
IPI0 0=1000 1=2000
`, ""},
		{"this machine's /proc/softirqs", `                    CPU0       CPU1       
          HI:          0          0
      NET_TX:          6          2
      NET_RX:     120642     156085
`, `HI 0=0 1=0
NET_TX 0=6 1=2
NET_RX 0=120642 1=156085
`, ""},
		{"empty", "", "", "/proc/interrupts: empty, want a header of CPUs"},
		{"no header", " 24:  1  0  IO-APIC   5-edge      ACPI:Ged\n", "", `/proc/interrupts line 1: want a header of CPU<N> columns, got "24:"`},
		{"a row without counts", "   CPU0   CPU1\n 24:  1  0  IO-APIC  5-edge  ACPI:Ged\nLOC:   Local timer interrupts\n", "24:ACPI:Ged 0=1 1=0\n", `/proc/interrupts line 3: want counts after LOC:, got "Local"`},
		{"a row without a colon", "   CPU0   CPU1\n 24  1  0\n", "", "/proc/interrupts line 2: want NAME: followed by counts"},
	} {
		got, err := table("/proc/interrupts", tc.in)
		call := fmt.Sprintf("CounterTable(%s)", tc.name)
		checkErr(t, call, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("%s = %q; want %q", call, got, tc.want)
		}
	}
}

func TestCounterTableLongLabel(t *testing.T) {
	dev := strings.Repeat("é", 100) // 200 bytes
	got, err := table("/proc/interrupts", "  CPU0\n 45:  1  IR-PCI-MSI 1-edge  "+dev+"\n")
	if err != nil {
		t.Fatal(err)
	}
	label := strings.Fields(got)[0]
	if want := "45:" + strings.Repeat("é", 62); label != want {
		t.Errorf("label = %q (%d bytes); want %q, cut at %d bytes on a rune", label, len(label), want, subsecond.MaxSeriesLabel)
	}
}
