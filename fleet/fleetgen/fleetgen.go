// Package fleetgen generates a fleet of hosts recording perf captures,
// deterministically from a seed: hosts in two zones (zone=a, zone=b),
// each booted a few times and recorded in a few sessions of back-to-back
// captures per boot, sampling a mix of commands and stacks whose shares
// differ from host to host and session to session. A planted leak makes
// the kubelet's mem_cgroup_nr_lru_pages grow with uptime on the zone-a
// hosts only. The same samples come out two ways: as an in-memory
// fleet.Source (the fleet index computed from them, for fast tests of the
// fleet views) and as perf script text per capture with its host, labels
// and boot time (for a store to import and be checked against the same
// answers).
//
//	f := fleetgen.Fleet{Hosts: 20, Leak: 4, Seed: 1}
//	src := f.Source() // fleet.Source
//	for _, c := range f.Captures() {
//		err := f.Write(w, c) // then import with c.Host, c.Labels, c.Boot
//	}
package fleetgen

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Planted is the function whose share the leak makes grow with uptime,
// and PlantedComm the command it runs under.
const (
	Planted     = "mem_cgroup_nr_lru_pages"
	PlantedComm = "kubelet"
)

// Fleet shapes a generated fleet; zero fields take the defaults.
type Fleet struct {
	Hosts      int           // default 20: the first half zone=a, the rest zone=b
	CPUs       int           // default 2
	Hz         int           // samples per CPU per second, a divisor of 1e9; default 10
	Boots      int           // boots per host, default 3
	Sessions   int           // recording sessions per boot, default 3
	PerSession int           // back-to-back captures per session, default 2
	Length     time.Duration // of a capture, whole seconds; default 2 minutes
	BootLen    time.Duration // between a host's boots, default 48 hours
	// Start is the earliest boot; default 2026-11-01 00:00 UTC.
	Start time.Time
	// Leak is how many times its base weight the planted function gains
	// per day of uptime on the zone-a hosts (0: a clean fleet): the leak
	// adds work of its own, proportional to uptime, steadier (a tenth's
	// spread per session) than the hosts' and sessions' mix.
	Leak float64
	// Baseline is the spread of the hosts' own mix: each stack's weight on
	// a host is scaled by exp(Baseline·z), z standard normal per host and
	// stack; default 0.3, negative for none. Noise is the same per session
	// (default 0.3, negative for none).
	Baseline, Noise float64
	// Cluster puts each host's sessions at uptimes of its own (a band a
	// tenth of BootLen wide, placed at random per host) and ties the
	// host's baselines to that band: hosts recorded late in their boots
	// run more of half the stacks and less of the other half, a confound
	// that no test should mistake for a rise with uptime.
	Cluster bool
	// At, when set, records every host over the same wall-clock time:
	// each host boots once (Boots is ignored), a random part of BootLen
	// before At, and records its sessions back to back from At, an hour
	// apart, so the hosts differ in uptime but not in time.
	At time.Time
	// Markers per host, at random times inside its captures; default 2.
	Markers int
	Seed    uint64
}

// Capture is one generated capture.
type Capture struct {
	ID     string // host/index
	Host   string
	Index  int       // among the host's captures, in time order
	Start  time.Time // its first tick, on a whole second (its T0)
	Boot   time.Time // the host's boot before it
	Labels []subsecond.Label
	host   int
}

// stack is one way a sample can look: its command, its frames leaf-first
// as perf script prints them ("ADDR SYMBOL+OFF (DSO)") and its base share
// of the samples.
type stack struct {
	comm   string
	pid    string
	frames []string
	weight float64
	planted,
	idle, system bool
	names []int32 // ids of the names it counts for (comm, functions, edges)
}

var stacks = []stack{
	{comm: "swapper", pid: "0/0", weight: 0.52, idle: true, frames: []string{
		"ffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])", "ffffffff81000100 default_idle+0x5 ([kernel.kallsyms])", "ffffffff81000200 do_idle+0x1f ([kernel.kallsyms])"}},
	{comm: "trainer", pid: "4100/4101", weight: 0.15, frames: []string{
		"7f0000001000 run_model+0x10 (/usr/bin/trainer)", "400100 main+0x20 (/usr/bin/trainer)"}},
	{comm: "trainer", pid: "4100/4102", weight: 0.08, frames: []string{
		"7f0000002000 memcpy+0x5 (/usr/lib/libc.so.6)", "7f0000003000 load_batch+0x44 (/usr/bin/trainer)", "400100 main+0x20 (/usr/bin/trainer)"}},
	{comm: "kubelet", pid: "2210/2245", weight: 0.03, frames: []string{
		"4a2200 k8s.io/kubernetes/pkg/kubelet/cm.(*containerManagerImpl).GetStats+0x44 (/usr/bin/kubelet)", "4a0100 runtime.goexit.abi0+0x1 (/usr/bin/kubelet)"}},
	{comm: "kubelet", pid: "2210/2246", weight: 0.01, planted: true, frames: []string{
		"ffffffff81201100 mem_cgroup_nr_lru_pages+0x1a ([kernel.kallsyms])", "ffffffff81201200 memcg_stat_show+0x9c ([kernel.kallsyms])",
		"ffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])", "4a0100 syscall.read+0x10 (/usr/bin/kubelet)"}},
	{comm: "containerd", pid: "900/911", weight: 0.03, frames: []string{
		"ffffffff81300100 futex_wait+0x12 ([kernel.kallsyms])", "ffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])", "460100 runtime.futex+0x23 (/usr/bin/containerd)"}},
	{comm: "nginx", pid: "1500/1500", weight: 0.05, frames: []string{
		"ffffffff81400100 tcp_sendmsg+0x30 ([kernel.kallsyms])", "ffffffff81400200 sock_sendmsg+0x19 ([kernel.kallsyms])",
		"ffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])", "55000100 ngx_writev+0x77 (/usr/sbin/nginx)"}},
	{comm: "kworker/0:1", pid: "120/120", weight: 0.03, frames: []string{
		"ffffffff81500100 ext4_writepages+0x88 ([kernel.kallsyms])", "ffffffff81500200 do_writepages+0x21 ([kernel.kallsyms])",
		"ffffffff81500300 wb_workfn+0x101 ([kernel.kallsyms])", "ffffffff81500400 worker_thread+0x4a ([kernel.kallsyms])"}},
	{comm: "sshd", pid: "700/700", weight: 0.01, frames: []string{
		"56000100 chacha20_block+0x40 (/usr/sbin/sshd)", "56000200 cipher_crypt+0x13 (/usr/sbin/sshd)", "56000300 main+0x9 (/usr/sbin/sshd)"}},
	{comm: "systemd-journal", pid: "300/300", weight: 0.02, frames: []string{
		"7f0000004000 memchr+0x8 (/usr/lib/libc.so.6)", "57000100 journal_file_append_data+0x3c (/usr/lib/systemd/systemd-journald)", "57000200 main+0x11 (/usr/lib/systemd/systemd-journald)"}},
	{comm: "node_exporter", pid: "800/801", weight: 0.02, frames: []string{
		"ffffffff81600100 seq_read+0x52 ([kernel.kallsyms])", "ffffffff81600200 vfs_read+0x9a ([kernel.kallsyms])",
		"ffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])", "470100 syscall.Syscall+0x2e (/usr/bin/node_exporter)"}},
	{comm: "node_exporter", pid: "800/802", weight: 0.05, frames: []string{
		"470200 github.com/prometheus/procfs.parseStat+0x91 (/usr/bin/node_exporter)", "470300 main.collect+0x15 (/usr/bin/node_exporter)"}},
}

// symbol returns the function of a frame line: its symbol without the
// offset.
func symbol(frame string) string {
	_, rest, _ := strings.Cut(frame, " ")
	sym, _, _ := strings.Cut(rest, " (")
	if i := strings.LastIndex(sym, "+0x"); i >= 0 {
		sym = sym[:i]
	}
	return sym
}

// dictionary numbers the names of the stacks: their commands, functions
// (each once per stack) and call edges "caller;callee" (root-first).
type dictionary struct {
	names []subsecond.NameCount // Kind and Name only
	ids   map[[2]string]int32
}

func (d *dictionary) id(kind subsecond.NameKind, n string) int32 {
	k := [2]string{kind.String(), n}
	if id, ok := d.ids[k]; ok {
		return id
	}
	id := int32(len(d.names))
	d.ids[k] = id
	d.names = append(d.names, subsecond.NameCount{Kind: kind, Name: n})
	return id
}

// compiled returns the stacks with their names numbered, and the names.
func compiled() ([]stack, *dictionary) {
	d := &dictionary{ids: map[[2]string]int32{}}
	out := make([]stack, len(stacks))
	for i, s := range stacks {
		s.names = []int32{d.id(subsecond.NameComm, s.comm)}
		seen := map[int32]bool{}
		add := func(id int32) {
			if !seen[id] {
				seen[id] = true
				s.names = append(s.names, id)
			}
		}
		for k, f := range s.frames {
			add(d.id(subsecond.NameFunction, symbol(f)))
			if k+1 < len(s.frames) {
				add(d.id(subsecond.NameEdge, symbol(s.frames[k+1])+";"+symbol(f)))
			}
		}
		s.system = !s.idle && strings.HasSuffix(s.frames[0], "([kernel.kallsyms])")
		out[i] = s
	}
	return out, d
}

// defaults returns f with its zero fields filled.
func (f Fleet) defaults() Fleet {
	f.Hosts = cmp.Or(f.Hosts, 20)
	f.CPUs = cmp.Or(f.CPUs, 2)
	f.Hz = cmp.Or(f.Hz, 10)
	f.Boots = cmp.Or(f.Boots, 3)
	f.Sessions = cmp.Or(f.Sessions, 3)
	f.PerSession = cmp.Or(f.PerSession, 2)
	f.Length = cmp.Or(f.Length, 2*time.Minute)
	f.BootLen = cmp.Or(f.BootLen, 48*time.Hour)
	if f.Start.IsZero() {
		f.Start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	}
	f.Baseline = cmp.Or(f.Baseline, 0.3)
	f.Noise = cmp.Or(f.Noise, 0.3)
	f.Markers = cmp.Or(f.Markers, 2)
	return f
}

// HostName returns the name of host h, from 0.
func HostName(h int) string { return fmt.Sprintf("node-%02d", h+1) }

// Zone returns host h's zone: "a" for the first half, "b" for the rest.
func (f Fleet) Zone(h int) string {
	if h < f.defaults().Hosts/2 {
		return "a"
	}
	return "b"
}

// hostPlan is a host's captures and, per capture, its stacks' weights.
type hostPlan struct {
	caps    []Capture
	weights [][]float64 // per capture, per stack, cumulative
	markers []subsecond.Marker
}

// plan lays out host h: its boots, sessions, captures and mixes.
func (f Fleet) plan(h int) hostPlan {
	f = f.defaults()
	rng := rand.New(rand.NewPCG(f.Seed, uint64(h)<<32|1))
	sts, _ := compiled()
	zone := f.Zone(h)
	labels := []subsecond.Label{{Key: "role", Value: "worker"}, {Key: "zone", Value: zone}}
	norm := func(sigma float64) float64 { return math.Exp(max(sigma, 0) * rng.NormFloat64()) }
	base := make([]float64, len(sts))
	for i := range sts {
		base[i] = sts[i].weight * norm(f.Baseline)
	}
	// Cluster: the host's band of uptimes, as a fraction of BootLen, and
	// its baselines tilted with it.
	band := 0.05 + 0.85*rng.Float64()
	if f.Cluster {
		for i := range base {
			sign := float64(1 - 2*(i%2))
			base[i] *= math.Exp(2 * max(f.Baseline, 0) * sign * (band - 0.5))
		}
	}
	var p hostPlan
	length := f.Length.Nanoseconds()
	boots := f.Boots
	if !f.At.IsZero() {
		boots = 1
	}
	for b := range boots {
		boot := f.Start.Add(time.Duration(b)*f.BootLen + time.Duration(rng.IntN(3600))*time.Second)
		if !f.At.IsZero() {
			boot = f.At.Add(-time.Duration((0.02 + 0.96*rng.Float64()) * float64(f.BootLen))).Truncate(time.Second)
		}
		// Sessions at increasing uptimes within the boot.
		span := f.BootLen - time.Hour - time.Duration(f.Sessions*f.PerSession)*f.Length
		var ups []time.Duration
		for range f.Sessions {
			frac := 0.02 + 0.96*rng.Float64()
			if f.Cluster {
				frac = band + 0.1*(rng.Float64()-0.5)
			}
			ups = append(ups, time.Duration(frac*float64(span)))
		}
		slices.Sort(ups)
		var next time.Time
		for _, up := range ups {
			start := boot.Add(up).Truncate(time.Second)
			if !f.At.IsZero() {
				start = f.At.Truncate(time.Second)
			}
			if !next.IsZero() && start.Sub(next) < time.Hour {
				start = next.Add(time.Hour) // a pause: another session
			}
			noise := make([]float64, len(sts))
			for i := range noise {
				noise[i] = norm(f.Noise)
			}
			leak := norm(0.1)
			for range f.PerSession {
				c := Capture{ID: fmt.Sprintf("%s/%d", HostName(h), len(p.caps)), Host: HostName(h), Index: len(p.caps), Start: start, Boot: boot, Labels: labels, host: h}
				days := start.Sub(boot).Hours() / 24
				cum := make([]float64, len(sts))
				total := 0.0
				for i := range sts {
					w := base[i] * noise[i]
					if sts[i].planted && zone == "a" {
						w += sts[i].weight * f.Leak * days * leak
					}
					total += w
					cum[i] = total
				}
				p.caps = append(p.caps, c)
				p.weights = append(p.weights, cum)
				start = start.Add(time.Duration(length))
			}
			next = start
		}
	}
	for range f.Markers {
		c := p.caps[rng.IntN(len(p.caps))]
		at := c.Start.Add(time.Duration(rng.Int64N(length)))
		p.markers = append(p.markers, subsecond.Marker{Time: at.UnixNano(), Text: "oom-kill: constraint=CONSTRAINT_MEMCG"})
	}
	slices.SortFunc(p.markers, func(a, b subsecond.Marker) int { return cmp.Compare(a.Time, b.Time) })
	return p
}

// Captures returns every capture of the fleet, by host and then time.
func (f Fleet) Captures() []Capture {
	f = f.defaults()
	var out []Capture
	for h := range f.Hosts {
		out = append(out, f.plan(h).caps...)
	}
	return out
}

// HostMarkers returns host h's markers in time order.
func (f Fleet) HostMarkers(h int) []subsecond.Marker { return f.plan(h).markers }

// sample is one generated sample.
type sample struct {
	t     int64 // Unix ns
	cpu   int
	stack int
}

// samples calls fn with each sample of capture c (of host plan p), in
// time order per tick: every CPU is sampled Hz times a second from
// c.Start, a little late (under a millisecond), so every second of every
// CPU holds Hz samples.
func (f Fleet) samples(p *hostPlan, c Capture, fn func(sample)) {
	f = f.defaults()
	rng := rand.New(rand.NewPCG(f.Seed, uint64(c.host)<<32|uint64(c.Index)<<1))
	cum := p.weights[c.Index]
	total := cum[len(cum)-1]
	period := int64(time.Second) / int64(f.Hz)
	start, end := c.Start.UnixNano(), c.Start.Add(f.Length).UnixNano()
	for t := start; t < end; t += period {
		for cpu := range f.CPUs {
			at := t + int64(cpu)*7_000 + rng.Int64N(300_000)
			u := rng.Float64() * total
			k := 0
			for k < len(cum)-1 && u >= cum[k] {
				k++
			}
			fn(sample{t: at, cpu: cpu, stack: k})
		}
	}
}

// Write writes capture c as perf script text (perf script --header -F
// comm,pid,tid,cpu,time,period,event,ip,sym,dso with -g stacks and the
// realtime clock).
func (f Fleet) Write(w io.Writer, c Capture) error {
	f = f.defaults()
	p := f.plan(c.host)
	bw := bufio.NewWriterSize(w, 256<<10)
	end := c.Start.Add(f.Length)
	fmt.Fprintf(bw, "# ========\n# captured on    : %s\n# hostname : %s\n# os release : 6.8.0-fleet\n# nrcpus online : %d\n# nrcpus avail : %d\n"+
		"# cmdline : /usr/bin/perf record -F %d -a -g -k CLOCK_REALTIME --switch-output=2m\n"+
		"# event : name = cpu-clock:pppH, , id = { 1 }, type = 1, size = 128, { sample_period, sample_freq } = %d, sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD, freq = 1, precise_ip = 3, use_clockid = 1\n"+
		"# clockid: realtime (0)\n# ========\n#\n",
		end.UTC().Format(time.ANSIC), c.Host, f.CPUs, f.CPUs, f.Hz, f.Hz)
	period := int64(time.Second) / int64(f.Hz)
	f.samples(&p, c, func(s sample) {
		st := &stacks[s.stack]
		fmt.Fprintf(bw, "%s %s [%03d] %d.%06d: %d cpu-clock:pppH: \n", st.comm, st.pid, s.cpu, s.t/1e9, s.t%1e9/1e3, period)
		for _, fr := range st.frames {
			bw.WriteString("\t")
			bw.WriteString(fr)
			bw.WriteString("\n")
		}
		bw.WriteString("\n")
	})
	return bw.Flush()
}
