// Package sampledata generates realistic `perf script` captures with planted
// incidents and their ground truth, and bundles captures for first runs,
// tests and benchmarks.
//
// Generate streams the text that `perf script --header` prints for
// `perf record -F 49 -a -g` on a GPU training host: every CPU sampled every
// 1/Hz seconds with small jitter, training, autograd, NCCL and DataLoader
// threads, the idle loop, NIC softirq polling, a container runtime and a node
// agent. On the incident CPU, for a few seconds at a time, the kubelet walks
// memory cgroups in the kernel and takes every sample there.
//
//	truth, err := sampledata.Generate(w, sampledata.DefaultConfig())
//
// The returned Truth is counted while the text is written, not derived from
// the configuration, so tests can hold the rest of Subsecond to it.
package sampledata

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Config shapes a generated capture. Start DefaultConfig and change fields.
type Config struct {
	CPUs    int    `json:"cpus"`
	Seconds int    `json:"seconds"`
	Hz      int    `json:"hz"`
	Seed    uint64 `json:"seed"`
	// Start is the time of the first sampling tick in seconds since boot, as
	// perf prints timestamps (e.g. 5086.0).
	Start float64 `json:"start_s"`
	// IncidentCPU is the core the node agent pegs; negative for none.
	IncidentCPU int `json:"incident_cpu"`
	// Incidents is the number of incident windows; 0 draws 3 or 4 from the seed.
	Incidents int `json:"incidents"`
	// NICCPUs are the cores that poll NIC receive queues in softirq context;
	// nil means the cores from CPUs/3 up to CPUs/2.
	NICCPUs    []int  `json:"nic_cpus"`
	Hostname   string `json:"hostname"`
	CapturedOn string `json:"captured_on"`
	// TIDOnly prints "comm TID" as perf script's default fields do; otherwise
	// sample headers carry "comm PID/TID" (perf script -F +pid).
	TIDOnly bool `json:"tid_only"`
}

// DefaultConfig returns the production-scale incident: 96 CPUs at 49 Hz for
// 120 s, CPU 39 pegged by the kubelet, seed 1.
func DefaultConfig() Config {
	return Config{
		CPUs: 96, Seconds: 120, Hz: 49, Seed: 1, Start: 5086.0, IncidentCPU: 39,
		Hostname: "gpu-node-17", CapturedOn: "Tue Mar 11 02:14:07 2025",
	}
}

func (c *Config) check() error {
	switch {
	case c.CPUs < 1 || c.CPUs > 4096:
		return fmt.Errorf("cpus = %d; want 1 to 4096", c.CPUs)
	case c.Seconds < 1 || c.Seconds > 86400:
		return fmt.Errorf("seconds = %d; want 1 to 86400", c.Seconds)
	case c.Hz < 1 || c.Hz > 10000:
		return fmt.Errorf("hz = %d; want 1 to 10000", c.Hz)
	case c.Start < 0 || c.Start > 1e9 || math.IsNaN(c.Start):
		return fmt.Errorf("start = %v; want 0 to 1e9 seconds", c.Start)
	case c.IncidentCPU >= c.CPUs:
		return fmt.Errorf("incident cpu %d; the capture has cpus 0 to %d", c.IncidentCPU, c.CPUs-1)
	case c.Incidents < 0 || c.Incidents > 100:
		return fmt.Errorf("incidents = %d; want 0 to 100", c.Incidents)
	case strings.ContainsAny(c.Hostname+c.CapturedOn, "\r\n"):
		return errors.New("hostname and captured-on must be one line each")
	}
	for _, n := range c.NICCPUs {
		if n < 0 || n >= c.CPUs {
			return fmt.Errorf("nic cpu %d; the capture has cpus 0 to %d", n, c.CPUs-1)
		}
	}
	return nil
}

// Truth is what Generate wrote, counted as it was written. Times are
// integer nanoseconds; windows are half-open [start, end).
type Truth struct {
	Config  Config `json:"config"`
	Samples int64  `json:"samples"`
	Bytes   int64  `json:"bytes"`  // length of the text
	SHA256  string `json:"sha256"` // of the text, hex
	FirstNS int64  `json:"first_ns"`
	LastNS  int64  `json:"last_ns"`
	// T0NS is the whole second containing the first sample, the origin of
	// every offset Subsecond shows.
	T0NS          int64            `json:"t0_ns"`
	PeriodNS      int64            `json:"period_ns"`
	SamplesPerCPU []int64          `json:"samples_per_cpu"`
	SamplesByComm map[string]int64 `json:"samples_by_comm"`
	// NICPollSamples counts samples whose stack holds mlx5e_napi_poll.
	NICPollSamples int64 `json:"nic_poll_samples"`
	// MemcgSamples counts samples whose leaf is mem_cgroup_nr_lru_pages;
	// MemcgOutside those of them outside every incident window on its CPU
	// (the kubelet's ordinary housekeeping elsewhere).
	MemcgSamples int64    `json:"memcg_samples"`
	MemcgOutside int64    `json:"memcg_samples_outside_incidents"`
	Incidents    []Window `json:"incidents"`
}

// Window is one planted incident: the node agent pegging CPU in
// [StartNS, EndNS).
type Window struct {
	CPU     int     `json:"cpu"`
	StartNS int64   `json:"start_ns"`
	EndNS   int64   `json:"end_ns"`
	Start   float64 `json:"start_s"` // seconds from T0
	End     float64 `json:"end_s"`   // seconds from T0
	// Samples on CPU inside the window, by comm, and how many had the
	// memcg leaf or a NIC polling frame.
	Samples    int64            `json:"samples"`
	ByComm     map[string]int64 `json:"by_comm"`
	MemcgLeaf  int64            `json:"memcg_leaf"`
	NICPoll    int64            `json:"nic_poll"`
	FirstNS    int64            `json:"first_ns"` // first sample on CPU inside the window
	LastNS     int64            `json:"last_ns"`
	AllCPUs    int64            `json:"samples_all_cpus"` // samples on every CPU inside the window
	AllByComm  map[string]int64 `json:"by_comm_all_cpus"`
	AllNICPoll int64            `json:"nic_poll_all_cpus"`
}

// thread is one schedulable task.
type thread struct {
	comm     string
	pid, tid int32
}

// stack is one pre-rendered call chain.
type stack struct {
	text  []byte
	nic   bool // holds mlx5e_napi_poll
	memcg bool // leaf is mem_cgroup_nr_lru_pages
}

// pool is a set of stacks of one activity with skewed weights, so a few
// stacks dominate as they do in real profiles.
type pool struct {
	name   string
	stacks []stack
	cum    []float64
}

func (p *pool) pick(r *rand.Rand) *stack {
	x := r.Float64() * p.cum[len(p.cum)-1]
	i, _ := slices.BinarySearch(p.cum, x)
	return &p.stacks[min(i, len(p.stacks)-1)]
}

// newPool renders up to n distinct stacks from build whose depth lies in
// [lo, hi].
func newPool(r *rand.Rand, name string, n, lo, hi int, build func(*rand.Rand) chain) (*pool, error) {
	p := &pool{name: name}
	seen := map[string]bool{}
	for try := 0; try < n*30 && len(p.stacks) < n; try++ {
		c := build(r)
		if len(c) < lo || len(c) > hi {
			continue
		}
		text := render(c, r.IntN(4))
		if seen[string(text)] {
			continue
		}
		seen[string(text)] = true
		s := stack{text: text, memcg: c[len(c)-1].sym == "mem_cgroup_nr_lru_pages"}
		for _, f := range c {
			s.nic = s.nic || f.sym == "mlx5e_napi_poll"
		}
		p.stacks = append(p.stacks, s)
		w := 1 / math.Pow(float64(len(p.stacks)), 0.9)
		if len(p.cum) > 0 {
			w += p.cum[len(p.cum)-1]
		}
		p.cum = append(p.cum, w)
	}
	if len(p.stacks) == 0 {
		return nil, fmt.Errorf("no %s stack has %d to %d frames", name, lo, hi)
	}
	return p, nil
}

// Depth bounds of generated stacks. Idle-loop stacks and NCCL's busy polls
// are deliberately shallower, as in real captures.
const (
	MinDepth = 20
	MaxDepth = 40
)

// pools holds every activity's stacks.
type pools struct {
	idle, idle0, irq, irq0, nicIdle, nicSoft                  *pool
	train, autograd, nccl, worker                             *pool
	kubelet, memcg, containerd, shim, runc, journald, kworker *pool
}

func newPools(r *rand.Rand) (*pools, error) {
	var ps pools
	var err error
	mk := func(dst **pool, name string, n, lo, hi int, b func(*rand.Rand) chain) {
		if err == nil {
			*dst, err = newPool(r, name, n, lo, hi, b)
		}
	}
	mk(&ps.idle, "idle", 4, 1, MaxDepth, idleStack(false))
	mk(&ps.idle0, "idle", 4, 1, MaxDepth, idleStack(true))
	mk(&ps.irq, "idle interrupt", 24, 1, MaxDepth, idleIRQ(false))
	mk(&ps.irq0, "idle interrupt", 24, 1, MaxDepth, idleIRQ(true))
	mk(&ps.nicIdle, "NIC poll", 24, MinDepth, MaxDepth, nicIdle)
	mk(&ps.nicSoft, "ksoftirqd", 24, MinDepth, MaxDepth, nicKsoftirqd)
	mk(&ps.train, "training", 96, MinDepth, MaxDepth, trainMain)
	mk(&ps.autograd, "autograd", 48, MinDepth, MaxDepth, autograd)
	mk(&ps.nccl, "NCCL", 24, 1, MaxDepth, ncclProgress)
	mk(&ps.worker, "DataLoader", 64, MinDepth, MaxDepth, dataWorker)
	mk(&ps.kubelet, "kubelet", 16, MinDepth, MaxDepth, kubelet)
	mk(&ps.memcg, "memcg", 12, MinDepth, MaxDepth, memcgRead)
	mk(&ps.containerd, "containerd", 16, MinDepth, MaxDepth, containerd)
	mk(&ps.shim, "shim", 12, MinDepth, MaxDepth, shim)
	mk(&ps.runc, "runc", 6, MinDepth, MaxDepth, runc)
	mk(&ps.journald, "journald", 8, MinDepth, MaxDepth, journald)
	mk(&ps.kworker, "kworker", 8, MinDepth, MaxDepth, kworker)
	return &ps, err
}

// choice is one thing a CPU may run: a pool of stacks and the threads that
// run them there.
type choice struct {
	p       *pool
	threads []thread
	weight  float64
	sticky  bool // busy threads keep the CPU for many ticks
}

// cpuState is one CPU's sampling clock and what it is running.
type cpuState struct {
	cpu     int
	phase   int64
	tick    int
	next    int64 // time of the next sample, ns, a whole microsecond
	mix     []choice
	cum     []float64
	cur     *choice
	curT    thread
	incStop int64 // end of the incident window the CPU is in, or 0
	peg     *pool // what the pegging agent runs during an incident
}

// stay is the probability that the CPU keeps running the choice's thread
// at the next tick.
func (c *choice) stay() float64 {
	if c.sticky {
		return 0.92
	}
	return 0.5
}

func (c *cpuState) draw(r *rand.Rand) {
	x := r.Float64() * c.cum[len(c.cum)-1]
	i, _ := slices.BinarySearch(c.cum, x)
	c.cur = &c.mix[min(i, len(c.mix)-1)]
	c.curT = c.cur.threads[r.IntN(len(c.cur.threads))]
}

// host is the process table of the simulated machine.
type host struct {
	kubelet, kubeletPeg               []thread
	containerd, shims, runc, journald []thread
	kworkers                          []thread
}

func newHost(r *rand.Rand, cpus int) *host {
	var h host
	kpid := int32(2817)
	h.kubelet = []thread{{"kubelet", kpid, kpid}}
	for range 6 {
		h.kubelet = append(h.kubelet, thread{"kubelet", kpid, kpid + 20 + r.Int32N(900)})
	}
	h.kubeletPeg = []thread{{"kubelet", kpid, 3361}}
	cpid := int32(1412)
	for range 5 {
		h.containerd = append(h.containerd, thread{"containerd", cpid, cpid + 5 + r.Int32N(400)})
	}
	for i := range 6 {
		pid := 48211 + int32(i)*97 + r.Int32N(40)
		h.shims = append(h.shims, thread{"containerd-shim", pid, pid + r.Int32N(12)})
	}
	for range 3 {
		pid := 912000 + r.Int32N(80000)
		h.runc = append(h.runc, thread{"runc", pid, pid})
	}
	h.journald = []thread{{"systemd-journal", 712, 712}}
	for i := range 4 {
		tid := 1180 + int32(i)*37 + r.Int32N(30)
		h.kworkers = append(h.kworkers, thread{"kworker/u" + strconv.Itoa(2*cpus) + ":" + strconv.Itoa(i+1), tid, tid})
	}
	return &h
}

// mixFor returns what CPU cpu runs. Each training rank owns twelve cores:
// its main thread, its autograd thread, its NCCL progress thread, six
// DataLoader workers, and three cores for everything else.
func mixFor(cpu int, nic bool, ps *pools, h *host) []choice {
	swapper := []thread{{"swapper", 0, 0}}
	idle, irq := ps.idle, ps.irq
	if cpu == 0 {
		idle, irq = ps.idle0, ps.irq0
	}
	rank, slot := cpu/12, cpu%12
	if rank >= 8 {
		slot = 11
	}
	pid := int32(51230 + rank*4133)
	var own []choice
	var idleW, irqW, bgW float64
	switch {
	case slot == 0:
		own = []choice{{p: ps.train, threads: []thread{{"pt_main_thread", pid, pid}}, weight: 86, sticky: true}}
		idleW, irqW, bgW = 9, 3, 2
	case slot == 1:
		own = []choice{{p: ps.autograd, threads: []thread{{"pt_autograd_0", pid, pid + 31}}, weight: 55, sticky: true}}
		idleW, irqW, bgW = 37, 6, 2
	case slot == 2:
		comm := fmt.Sprintf("NCCL Progress%2d", rank%8)
		own = []choice{{p: ps.nccl, threads: []thread{{comm, pid, pid + 212}}, weight: 70, sticky: true}}
		idleW, irqW, bgW = 24, 4, 2
	case slot <= 8:
		wpid := pid + 700 + int32(slot-3)*11
		own = []choice{{p: ps.worker, threads: []thread{{"pt_data_worker", wpid, wpid}}, weight: 62, sticky: true}}
		idleW, irqW, bgW = 32, 4, 2
	default:
		idleW, irqW, bgW = 82, 10, 8
	}
	mix := append(own,
		choice{p: idle, threads: swapper, weight: idleW, sticky: true},
		choice{p: irq, threads: swapper, weight: irqW})
	bg := []choice{
		{p: ps.kubelet, threads: h.kubelet, weight: 4},
		{p: ps.memcg, threads: h.kubelet, weight: 0.05},
		{p: ps.containerd, threads: h.containerd, weight: 3},
		{p: ps.shim, threads: h.shims, weight: 1.5},
		{p: ps.runc, threads: h.runc, weight: 0.3},
		{p: ps.journald, threads: h.journald, weight: 1},
		{p: ps.kworker, threads: h.kworkers, weight: 1.5},
	}
	for _, b := range bg {
		b.weight *= bgW / 11.35
		mix = append(mix, b)
	}
	if nic {
		ksoft := int32(14 + 7*cpu)
		mix = append(mix,
			choice{p: ps.nicIdle, threads: swapper, weight: 16},
			choice{p: ps.nicSoft, threads: []thread{{"ksoftirqd/" + strconv.Itoa(cpu), ksoft, ksoft}}, weight: 6})
	}
	return mix
}

// windows places n incident windows of 3 to 8 seconds, one in each equal
// slot of the capture, away from its edges. Offsets are ns from the first tick.
func windows(r *rand.Rand, n, seconds int) [][2]int64 {
	total := int64(seconds) * int64(time.Second)
	edge := min(5*int64(time.Second), total/10)
	slot := (total - 2*edge) / int64(n)
	var out [][2]int64
	for i := range n {
		d := (3000 + r.Int64N(5001)) * int64(time.Millisecond)
		d = min(d, slot*6/10)
		lo := edge + int64(i)*slot
		s := lo + r.Int64N(slot-d+1)
		s -= s % int64(time.Millisecond)
		d -= d % int64(time.Millisecond)
		out = append(out, [2]int64{s, s + max(d, int64(time.Millisecond))})
	}
	return out
}

// countingWriter hashes and counts what passes through it.
type countingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.h.Write(p)
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Generate writes a capture shaped by cfg to w as `perf script --header`
// prints it, streaming, and returns what it wrote. The same cfg always
// yields the same bytes.
func Generate(w io.Writer, cfg Config) (Truth, error) {
	if err := cfg.check(); err != nil {
		return Truth{}, fmt.Errorf("generate: %w", err)
	}
	cfg.NICCPUs = slices.Clone(cfg.NICCPUs)
	if cfg.NICCPUs == nil {
		for c := cfg.CPUs / 3; c < cfg.CPUs/2; c++ {
			cfg.NICCPUs = append(cfg.NICCPUs, c)
		}
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5ab5ec0d))
	ps, err := newPools(r)
	if err != nil {
		return Truth{}, fmt.Errorf("generate: %w", err)
	}
	h := newHost(r, cfg.CPUs)
	startNS := int64(math.Round(cfg.Start*1e6)) * 1000
	period := int64(time.Second) / int64(cfg.Hz)

	t := Truth{Config: cfg, PeriodNS: period, SamplesPerCPU: make([]int64, cfg.CPUs), SamplesByComm: map[string]int64{}}
	if cfg.IncidentCPU >= 0 {
		n := cfg.Incidents
		if n == 0 {
			n = 3 + r.IntN(2)
		}
		for _, win := range windows(r, n, cfg.Seconds) {
			t.Incidents = append(t.Incidents, Window{CPU: cfg.IncidentCPU, StartNS: startNS + win[0], EndNS: startNS + win[1],
				ByComm: map[string]int64{}, AllByComm: map[string]int64{}, FirstNS: -1, LastNS: -1})
		}
	}

	nic := make([]bool, cfg.CPUs)
	for _, c := range cfg.NICCPUs {
		nic[c] = true
	}
	cpus := make([]*cpuState, cfg.CPUs)
	for i := range cpus {
		c := &cpuState{cpu: i, mix: mixFor(i, nic[i], ps, h), peg: ps.memcg}
		for _, m := range c.mix {
			// A choice left with probability 1-stay is drawn in proportion
			// to weight×(1-stay), so over time each takes weight's share.
			c.cum = append(c.cum, m.weight*(1-m.stay())+lastOr0(c.cum))
		}
		c.phase = r.Int64N(max(period-500_000, 1))
		c.draw(r)
		c.next = c.timeOf(r, startNS, period)
		cpus[i] = c
	}
	// Samples leave in time order, as perf script sorts them: a min-heap of
	// CPUs keyed by their next sample time.
	hp := cpuHeap(slices.Clone(cpus))
	hp.init()

	cw := &countingWriter{w: w, h: sha256.New()}
	bw := bufio.NewWriterSize(cw, 1<<20)
	writeHeader(bw, &cfg)
	ticks := cfg.Seconds * cfg.Hz
	t.FirstNS = -1
	line := make([]byte, 0, 128)
	for len(hp) > 0 {
		c := hp[0]
		ts := c.next
		st, th := c.sample(r, ts, t.Incidents, h)

		line = appendHeaderLine(line[:0], th, c.cpu, ts, period, cfg.TIDOnly)
		bw.Write(line)
		bw.Write(st.text)
		bw.WriteByte('\n')

		t.Samples++
		t.SamplesPerCPU[c.cpu]++
		t.SamplesByComm[th.comm]++
		if t.FirstNS < 0 {
			t.FirstNS = ts
		}
		t.LastNS = ts
		if st.nic {
			t.NICPollSamples++
		}
		inside := false
		for i := range t.Incidents {
			win := &t.Incidents[i]
			if ts < win.StartNS || ts >= win.EndNS {
				continue
			}
			win.AllCPUs++
			win.AllByComm[th.comm]++
			if st.nic {
				win.AllNICPoll++
			}
			if c.cpu != win.CPU {
				continue
			}
			inside = true
			win.Samples++
			win.ByComm[th.comm]++
			if st.memcg {
				win.MemcgLeaf++
			}
			if st.nic {
				win.NICPoll++
			}
			if win.FirstNS < 0 {
				win.FirstNS = ts
			}
			win.LastNS = ts
		}
		if st.memcg {
			t.MemcgSamples++
			if !inside {
				t.MemcgOutside++
			}
		}

		c.tick++
		if c.tick >= ticks {
			hp.pop()
			continue
		}
		c.next = c.timeOf(r, startNS, period)
		hp.fix0()
	}
	if err := bw.Flush(); err != nil {
		return Truth{}, fmt.Errorf("generate: %w", err)
	}
	t.Bytes = cw.n
	t.SHA256 = hex.EncodeToString(cw.h.Sum(nil))
	t.T0NS = subsecond.FloorSecond(t.FirstNS)
	for i := range t.Incidents {
		win := &t.Incidents[i]
		win.Start = float64(win.StartNS-t.T0NS) / 1e9
		win.End = float64(win.EndNS-t.T0NS) / 1e9
	}
	return t, nil
}

func lastOr0(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// timeOf returns when the CPU's current tick fires: on its grid, a few
// microseconds late, now and then a few hundred, truncated to the
// microsecond perf prints.
func (c *cpuState) timeOf(r *rand.Rand, start, period int64) int64 {
	late := r.Int64N(20_000)
	if r.IntN(50) == 0 {
		late += r.Int64N(400_000)
	}
	ns := start + c.phase + int64(c.tick)*period + late
	return ns - ns%1000
}

// sample decides what the CPU is running at time ts and returns the stack
// and thread to print.
func (c *cpuState) sample(r *rand.Rand, ts int64, wins []Window, h *host) (*stack, thread) {
	for i := range wins {
		if wins[i].CPU == c.cpu && ts >= wins[i].StartNS && ts < wins[i].EndNS {
			c.incStop = wins[i].EndNS
			return c.peg.pick(r), h.kubeletPeg[0]
		}
	}
	if c.incStop != 0 {
		c.incStop = 0
		c.draw(r)
	} else {
		if r.Float64() >= c.cur.stay() {
			c.draw(r)
		}
	}
	return c.cur.p.pick(r), c.curT
}

// appendHeaderLine formats a sample's first line exactly as perf script
// does: "%s %5d/%-5d [%03d] %5d.%06d: %10d cpu-clock:ppp: ".
func appendHeaderLine(b []byte, th thread, cpu int, ts, period int64, tidOnly bool) []byte {
	b = append(b, th.comm...)
	b = append(b, ' ')
	if tidOnly {
		b = appendPad(b, int64(th.tid), 5, ' ')
	} else {
		b = appendPad(b, int64(th.pid), 5, ' ')
		b = append(b, '/')
		n := len(b)
		b = strconv.AppendInt(b, int64(th.tid), 10)
		for len(b)-n < 5 {
			b = append(b, ' ')
		}
	}
	b = append(b, " ["...)
	b = appendPad(b, int64(cpu), 3, '0')
	b = append(b, "] "...)
	b = appendPad(b, ts/1e9, 5, ' ')
	b = append(b, '.')
	b = appendPad(b, ts%1e9/1000, 6, '0')
	b = append(b, ": "...)
	b = appendPad(b, period, 10, ' ')
	return append(b, " cpu-clock:ppp: \n"...)
}

// appendPad appends v right-aligned in width columns, padded with pad.
func appendPad(b []byte, v int64, width int, pad byte) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, pad)
	}
	return append(b, s...)
}

// writeHeader writes the '#' block perf script --header prints.
func writeHeader(w *bufio.Writer, cfg *Config) {
	p := func(s ...string) {
		for _, x := range s {
			w.WriteString(x)
		}
		w.WriteByte('\n')
	}
	n := strconv.Itoa(cfg.CPUs)
	p("# ========")
	p("# captured on    : ", cfg.CapturedOn)
	p("# header version : 1")
	p("# hostname : ", cfg.Hostname)
	p("# os release : 5.15.0-107-generic")
	p("# perf version : 5.15.149")
	p("# arch : x86_64")
	p("# nrcpus online : ", n)
	p("# nrcpus avail : ", n)
	p("# cpudesc : Intel(R) Xeon(R) Platinum 8468")
	p("# cpuid : GenuineIntel,6,143,8")
	p("# total memory : 2113381948 kB")
	p("# cmdline : /usr/bin/perf record -F ", strconv.Itoa(cfg.Hz), " -a -g -- sleep ", strconv.Itoa(cfg.Seconds), " ")
	p("# event : name = cpu-clock:ppp, , id = { 1 }, type = 1, size = 128, { sample_period, sample_freq } = ", strconv.Itoa(cfg.Hz),
		", sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD, read_format = ID, disabled = 1, inherit = 1, freq = 1, precise_ip = 3, sample_id_all = 1")
	p("# CPU_TOPOLOGY info available, use -I to display")
	p("# NUMA_TOPOLOGY info available, use -I to display")
	p("# pmu mappings: cpu = 4, software = 1, tracepoint = 2, breakpoint = 5, msr = 9, power = 10, uncore_imc_0 = 30")
	p("# CACHE info available, use -I to display")
	p("# missing features: TRACING_DATA BRANCH_STACK GROUP_DESC AUXTRACE STAT CLOCKID DIR_FORMAT COMPRESSED CLOCK_DATA HYBRID_TOPOLOGY ")
	p("# ========")
	p("#")
}

// cpuHeap is a binary min-heap of CPUs ordered by next sample time, then
// CPU number, so equal timestamps leave in a fixed order.
type cpuHeap []*cpuState

func (h cpuHeap) less(i, j int) bool {
	return cmp.Or(cmp.Compare(h[i].next, h[j].next), cmp.Compare(h[i].cpu, h[j].cpu)) < 0
}

func (h cpuHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h cpuHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h cpuHeap) fix0() { h.down(0) }

func (h *cpuHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}
