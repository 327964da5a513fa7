// Package synth generates labelled perf samples for the analysis packages'
// tests and benchmarks: every CPU sampled at a fixed rate with jitter, a
// process mix with deep kernel and user stacks, idle-loop samples, interrupts
// taken while idle, and names that are hostile to XML and folded text. Each
// sample says whether it is idle, so tests can count independently of the
// engine.
package synth

import (
	"math/rand"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Options shape a generated capture.
type Options struct {
	Seed    int64
	CPUs    int
	Seconds int
	Hz      int
	Start   int64 // time of the first sampling tick, ns
	// Busy is the share of samples that are not the idle loop (0: 0.6).
	Busy float64
	// Pegged, when ≥ 0, is a CPU that runs the node agent's memcg walk
	// without pause in [PegStart, PegEnd) (ns from Start).
	Pegged           int
	PegStart, PegEnd int64
}

// Labeled is a sample with the generator's own verdict on idleness.
type Labeled struct {
	subsecond.Sample
	Idle bool
}

type proc struct {
	comm string
	pid  int32
	user []string // root-first user frames (prefix)
	kern []string // root-first kernel frames after the user part, may be nil
	idle bool
	fan  int // how many random variants each generated level may take
}

func k(s string) subsecond.Frame {
	return subsecond.Frame{Symbol: s, DSO: "[kernel.kallsyms]", Kind: subsecond.KindKernel}
}

func u(s, dso string) subsecond.Frame {
	return subsecond.Frame{Symbol: s, DSO: dso, Kind: subsecond.KindUser}
}

var idleStack = []string{"secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry", "do_idle", "cpuidle_enter", "cpuidle_enter_state", "intel_idle"}
var haltStack = []string{"secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry", "do_idle", "default_idle_call", "arch_cpu_idle", "native_safe_halt"}
var irqIdle = []string{"secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry", "do_idle", "cpuidle_enter", "cpuidle_enter_state", "intel_idle",
	"asm_common_interrupt", "common_interrupt", "irq_exit_rcu", "__do_softirq", "net_rx_action", "mlx5e_napi_poll", "mlx5e_poll_rx_cq"}
var memcg = []string{"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_read", "vfs_read", "seq_read_iter", "memcg_stat_show", "mem_cgroup_nr_lru_pages"}

var procs = []proc{
	{comm: "python3", pid: 1000, user: []string{"_start", "__libc_start_main", "main", "Py_RunMain", "_PyEval_EvalFrameDefault", "train_step"}, fan: 4},
	{comm: "python3", pid: 1000, user: []string{"_start", "__libc_start_main", "main", "Py_RunMain", "_PyEval_EvalFrameDefault", "save_checkpoint"},
		kern: []string{"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_write", "vfs_write", "ext4_buffered_write_iter"}, fan: 3},
	{comm: "nccl proxy", pid: 1001, user: []string{"start_thread", "ncclProxyService", "ncclProxyProgress"}, fan: 4},
	{comm: "node-agent", pid: 500, user: []string{"runtime.goexit", "main.collect", "main.readStats"}, kern: memcg, fan: 2},
	{comm: "containerd-shim", pid: 300, user: []string{"runtime.goexit", "[unknown]", "operator<< <char, std::char_traits<char> >(std::ostream&, char const*)"}, fan: 3},
	{comm: "kworker/u192:3", pid: 42, kern: []string{"ret_from_fork", "kthread", "worker_thread", "process_one_work", "flush_to_ldisc"}, fan: 2},
	{comm: "swapper", pid: 0, kern: irqIdle, fan: 1},
}

// Generate returns the samples of o in an order that is not sorted by time
// (CPUs interleaved, and every 97th sample swapped with its neighbour), as
// a reader of a real capture may see them.
func Generate(o Options) []Labeled {
	if o.Busy == 0 {
		o.Busy = 0.6
	}
	r := rand.New(rand.NewSource(o.Seed))
	period := int64(1e9) / int64(o.Hz)
	n := o.Seconds * o.Hz
	out := make([]Labeled, 0, n*o.CPUs)
	for cpu := 0; cpu < o.CPUs; cpu++ {
		phase := r.Int63n(period)
		for i := 0; i < n; i++ {
			t := o.Start + int64(i)*period + phase + r.Int63n(period/50+1)
			var s Labeled
			switch {
			case cpu == o.Pegged && t-o.Start >= o.PegStart && t-o.Start < o.PegEnd:
				s = build(r, &procs[3], cpu, t)
			case r.Float64() < o.Busy:
				s = build(r, &procs[r.Intn(len(procs))], cpu, t)
			default:
				fr := idleStack
				if r.Intn(3) == 0 {
					fr = haltStack
				}
				s = Labeled{Sample: subsecond.Sample{Comm: "swapper", PID: 0, TID: 0, Frames: kframes(fr)}, Idle: true}
			}
			s.CPU, s.Time, s.Event, s.Period = int32(cpu), t, "cpu-clock", uint64(period)
			out = append(out, s)
		}
	}
	for i := 96; i < len(out); i += 97 {
		out[i], out[i-1] = out[i-1], out[i]
	}
	return out
}

func kframes(rootFirst []string) []subsecond.Frame {
	fs := make([]subsecond.Frame, len(rootFirst))
	for i, s := range rootFirst {
		fs[len(rootFirst)-1-i] = k(s)
	}
	return fs
}

func build(r *rand.Rand, p *proc, cpu int, t int64) Labeled {
	var root []subsecond.Frame
	dso := "/usr/bin/" + p.comm
	for _, s := range p.user {
		root = append(root, u(s, dso))
	}
	if len(p.user) > 0 {
		// A deep user part: 10–25 generated levels; every sixth level
		// branches into one of p.fan variants, the others follow it.
		base := p.user[len(p.user)-1] + "_fn"
		depth := 10 + r.Intn(16)
		v := 0
		for d := 0; d < depth; d++ {
			if d%6 == 0 {
				v = r.Intn(p.fan)
			}
			root = append(root, u(base+strconv.Itoa(d)+"_"+strconv.Itoa(v), dso))
		}
	}
	for _, s := range p.kern {
		root = append(root, k(s))
	}
	fs := make([]subsecond.Frame, len(root))
	for i := range root {
		fs[len(root)-1-i] = root[i]
	}
	tid := p.pid
	if p.pid > 0 {
		tid = p.pid + int32(cpu%4)
	}
	return Labeled{Sample: subsecond.Sample{Comm: p.comm, PID: p.pid, TID: tid, Frames: fs}}
}

// Capture builds a Capture from samples with subsecond.Builder.
func Capture(samples []Labeled) *subsecond.Capture {
	b := subsecond.NewBuilder()
	for i := range samples {
		b.Add(&samples[i].Sample)
	}
	return b.Capture(subsecond.Profile{ID: "synth"})
}

// Keep decides from the generated sample alone, without the engine's
// compiled filter, whether f keeps s.
func Keep(s *Labeled, f query.Filter, firstEvent string) bool {
	ev := f.Event
	if ev == "" {
		ev = firstEvent
	}
	if s.Event != ev {
		return false
	}
	if len(f.CPUs) > 0 && !slices.Contains(f.CPUs, s.CPU) ||
		len(f.PIDs) > 0 && !slices.Contains(f.PIDs, s.PID) ||
		len(f.TIDs) > 0 && !slices.Contains(f.TIDs, s.TID) {
		return false
	}
	if f.Comm != "" && s.Comm != f.Comm {
		return false
	}
	if f.CommRegex != "" && !regexp.MustCompile(f.CommRegex).MatchString(s.Comm) {
		return false
	}
	if f.Function != "" {
		re := regexp.MustCompile(f.Function)
		if !slices.ContainsFunc(s.Frames, func(fr subsecond.Frame) bool { return re.MatchString(fr.Symbol) }) {
			return false
		}
	}
	isK := func(fr subsecond.Frame) bool { return fr.Kind == subsecond.KindKernel }
	switch f.Only {
	case "kernel":
		if !slices.ContainsFunc(s.Frames, isK) {
			return false
		}
	case "user":
		if !slices.ContainsFunc(s.Frames, func(fr subsecond.Frame) bool { return !isK(fr) }) {
			return false
		}
	}
	return f.Idle || !s.Idle
}

// Folded returns the folded-stack line key of s under f: the command name
// with spaces as underscores, then the frames root-first named by names,
// those of the other kind left out when f.Only is set.
func Folded(s *Labeled, f query.Filter, names func(sym, dso string, java bool) []string) string {
	parts := []string{strings.ReplaceAll(s.Comm, " ", "_")}
	for i := len(s.Frames) - 1; i >= 0; i-- {
		fr := s.Frames[i]
		isK := fr.Kind == subsecond.KindKernel
		if f.Only == "kernel" && !isK || f.Only == "user" && isK {
			continue
		}
		parts = append(parts, names(fr.Symbol, fr.DSO, strings.HasPrefix(s.Comm, "java"))...)
	}
	return strings.Join(parts, ";")
}

// Latency runs fn b.N times and reports the p50 and p95 of its wall time
// in milliseconds, the figures the performance targets are stated in.
func Latency(b *testing.B, fn func() error) {
	b.Helper()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	b.StopTimer()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
}

var (
	benchOnce sync.Once
	bench     *subsecond.Capture
)

// Bench returns the benchmark capture, built once: 96 CPUs × 120 s at
// 49 Hz (about 565k samples), 60% busy, CPU 17 pegged by the node agent
// from 30 s to 34 s.
func Bench() *subsecond.Capture {
	benchOnce.Do(func() {
		bench = Capture(Generate(Options{Seed: 1, CPUs: 96, Seconds: 120, Hz: 49, Start: 7_000_300_000_000,
			Pegged: 17, PegStart: 30e9, PegEnd: 34e9}))
	})
	return bench
}
