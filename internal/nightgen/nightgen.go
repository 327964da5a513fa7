// Package nightgen writes a night of rolling perf captures of one host as
// perf script text, with bursts planted at known wall-clock times, and
// counts what it wrote, so that tests and benchmarks can check the host
// views against a count that owes nothing to the parser, the store or the
// timeline.
//
//	n := nightgen.Night{Host: "node-1", CPUs: 8, Hz: 49, Start: t, Captures: 30, Length: 2 * time.Minute}
//	for i := range n.Captures {
//		err := n.Write(w, i, counts)
//	}
package nightgen

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Burst is a planted episode: CPU pegged by the kubelet walking memory
// cgroups, in the kernel (mem_cgroup_nr_lru_pages), over [Start, End), or
// by another command in another stack (Comm, Stack).
type Burst struct {
	CPU        int
	Start, End time.Time
	// User is the share of the burst's samples in the kubelet's own user
	// code rather than the kernel (0: all kernel).
	User float64
	// Comm is the command that holds the CPU; "" for the kubelet.
	Comm string
	// Stack is its call chain as perf script prints it, leaf first, one
	// frame a line ("ADDR SYMBOL+OFF (DSO)"); nil for the kubelet's
	// mem_cgroup_nr_lru_pages. A burst is system time when its leaf is a
	// kernel frame.
	Stack []string
	// Share is the share of the CPU's samples in [Start, End) that are the
	// burst's, the rest as outside bursts; 0 for all of them.
	Share float64
}

// Night shapes the captures. Capture i covers [Start + i·(Length+Gap(i)) …)
// on the wall clock; see CaptureStart.
type Night struct {
	Host     string
	CPUs     int
	Hz       int
	Start    time.Time
	Captures int
	Length   time.Duration
	// Gaps maps a capture index to the pause before it (recording stopped).
	Gaps   map[int]time.Duration
	Bursts []Burst
	// Unanchored is the index of a capture written without header and with
	// perf's boot clock, so it has no wall-clock time; -1 for none.
	Unanchored int
	// Boot is the host's boot time, for the boot-clock capture's times.
	Boot time.Time
	Seed uint64
	// Busy is the share of the samples outside bursts that are training
	// work; 0 for a third. At 1 every core is busy all night.
	Busy float64
}

// CaptureStart returns the wall-clock start of capture i.
func (n *Night) CaptureStart(i int) time.Time {
	t := n.Start
	for k := 0; k < i; k++ {
		t = t.Add(n.Length)
		t = t.Add(n.Gaps[k+1])
	}
	return t
}

// Counts is what Write wrote, by CPU and wall-clock second (Unix seconds):
// every sample, the busy ones (not idle) and the system ones (busy with a
// kernel leaf).
type Counts map[Key]*subsecond.Counts

// Key is a CPU and a wall-clock second.
type Key struct {
	CPU    int
	Second int64
}

func (c Counts) add(cpu int, wall time.Time, busy, sys bool) {
	k := Key{cpu, wall.Unix()}
	n := c[k]
	if n == nil {
		n = new(subsecond.Counts)
		c[k] = n
	}
	n.Count(busy, sys)
}

var userStacks = [][]string{
	{"7f0000001000 run_model+0x10 (/usr/bin/trainer)", "400100 main+0x20 (/usr/bin/trainer)"},
	{"7f0000002000 memcpy+0x5 (/usr/lib/libc.so.6)", "7f0000003000 load_batch+0x44 (/usr/bin/trainer)", "400100 main+0x20 (/usr/bin/trainer)"},
}

const idleStack = "ffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])\n\tffffffff81000100 default_idle+0x5 ([kernel.kallsyms])\n\tffffffff81000200 do_idle+0x1f ([kernel.kallsyms])"

const memcgStack = "ffffffff81201100 mem_cgroup_nr_lru_pages+0x1a ([kernel.kallsyms])\n\tffffffff81201200 memcg_stat_show+0x9c ([kernel.kallsyms])\n\tffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])\n\t4a0100 syscall.read+0x10 (/usr/bin/kubelet)"

const kubeletUser = "4a2200 k8s.io/kubernetes/pkg/kubelet/cm.(*containerManagerImpl).GetStats+0x44 (/usr/bin/kubelet)\n\t4a0100 runtime.goexit.abi0+0x1 (/usr/bin/kubelet)"

// Write writes capture i as perf script text to w and adds what it wrote
// to counts (nil: not counted). Every CPU is sampled at Hz; about a third
// of the samples (Busy of them) are training work in user space, the rest
// idle, but for the bursts, where the kubelet holds the CPU in the kernel.
func (n *Night) Write(w io.Writer, i int, counts Counts) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	start := n.CaptureStart(i)
	end := start.Add(n.Length)
	rng := rand.New(rand.NewPCG(n.Seed, uint64(i)))
	realtime := i != n.Unanchored
	clock := func(t time.Time) int64 { // the time perf prints, ns
		if realtime {
			return t.UnixNano()
		}
		return t.Sub(n.Boot).Nanoseconds()
	}
	if realtime {
		fmt.Fprintf(bw, "# ========\n# captured on    : %s\n# hostname : %s\n# nrcpus online : %d\n"+
			"# cmdline : /usr/bin/perf record -F %d -a -g -k CLOCK_REALTIME --switch-output=2m\n"+
			"# event : name = cpu-clock:pppH, , id = { 1 }, type = 1, size = 128, { sample_period, sample_freq } = %d, sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD, freq = 1, precise_ip = 3, use_clockid = 1\n"+
			"# clockid: realtime (0)\n# ========\n#\n",
			end.UTC().Format(time.ANSIC), n.Host, n.CPUs, n.Hz, n.Hz)
	}
	period := time.Second / time.Duration(n.Hz)
	for t := start; t.Before(end); t = t.Add(period) {
		for cpu := 0; cpu < n.CPUs; cpu++ {
			at := t.Add(time.Duration(cpu)*7*time.Microsecond + time.Duration(rng.IntN(300))*time.Microsecond)
			ns := clock(at)
			ts := fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3)
			var burst *Burst
			user := false
			for k := range n.Bursts {
				b := &n.Bursts[k]
				if b.CPU == cpu && !at.Before(b.Start) && at.Before(b.End) && (b.Share == 0 || rng.Float64() < b.Share) {
					burst, user = b, b.User > 0 && rng.Float64() < b.User
				}
			}
			var busy, sys bool
			switch {
			case burst != nil && burst.Stack != nil:
				comm := burst.Comm
				if comm == "" {
					comm = "kubelet"
				}
				fmt.Fprintf(bw, "%s 3310/3311 [%03d] %s: %d cpu-clock:pppH: \n", comm, cpu, ts, period)
				for _, f := range burst.Stack {
					fmt.Fprintf(bw, "\t%s\n", f)
				}
				bw.WriteString("\n")
				busy, sys = true, strings.Contains(burst.Stack[0], "[kernel.kallsyms]")
			case burst != nil && user:
				fmt.Fprintf(bw, "kubelet 2210/2245 [%03d] %s: %d cpu-clock:pppH: \n\t%s\n\n", cpu, ts, period, kubeletUser)
				busy = true
			case burst != nil:
				fmt.Fprintf(bw, "%s 2210/2245 [%03d] %s: %d cpu-clock:pppH: \n\t%s\n\n", cmp.Or(burst.Comm, "kubelet"), cpu, ts, period, memcgStack)
				busy, sys = true, true
			case n.Busy == 0 && rng.IntN(3) == 0 || n.Busy > 0 && rng.Float64() < n.Busy:
				st := userStacks[rng.IntN(len(userStacks))]
				fmt.Fprintf(bw, "trainer 4100/%d [%03d] %s: %d cpu-clock:pppH: \n", 4101+cpu, cpu, ts, period)
				for _, f := range st {
					fmt.Fprintf(bw, "\t%s\n", f)
				}
				bw.WriteString("\n")
				busy = true
			default:
				fmt.Fprintf(bw, "swapper 0/0 [%03d] %s: %d cpu-clock:pppH: \n\t%s\n\n", cpu, ts, period, idleStack)
			}
			if counts != nil && realtime {
				counts.add(cpu, at, busy, sys)
			}
		}
	}
	return bw.Flush()
}
