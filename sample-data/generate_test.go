package sampledata

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
)

// rec is one sample as the test's own line reader sees it.
type rec struct {
	line     int
	comm     string
	pid, tid int
	cpu      int
	ns       int64
	period   int64
	event    string
	frames   []string // symbols, leaf first
	dsos     []string
}

func (r *rec) has(sym string) bool { return slices.Contains(r.frames, sym) }

// readCapture is a small line-level reader of perf script text, written
// independently of the generator: header comments, then samples of a header
// line, tab-indented frames and a blank line. It calls fn for every sample
// and fails the test on any line it cannot read.
func readCapture(t *testing.T, r io.Reader, fn func(*rec)) (header []string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var cur *rec
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			if cur != nil {
				t.Fatalf("line %d: comment inside a sample", n)
			}
			header = append(header, line)
		case line == "":
			if cur == nil {
				t.Fatalf("line %d: blank line outside a sample", n)
			}
			fn(cur)
			cur = nil
		case strings.HasPrefix(line, "\t"):
			if cur == nil {
				t.Fatalf("line %d: frame outside a sample", n)
			}
			// "\t%16x sym+0xoff (dso)" or "\t%16x [unknown] (dso)"
			body := line[1:]
			if len(body) < 18 || body[16] != ' ' {
				t.Fatalf("line %d: frame %q: want a 16-column address", n, line)
			}
			if _, err := strconv.ParseUint(strings.TrimSpace(body[:16]), 16, 64); err != nil {
				t.Fatalf("line %d: address in %q: %v", n, line, err)
			}
			rest := body[17:]
			open := strings.LastIndex(rest, " (")
			if open < 0 || !strings.HasSuffix(rest, ")") {
				t.Fatalf("line %d: frame %q: want (dso) at the end", n, line)
			}
			sym, dso := rest[:open], rest[open+2:len(rest)-1]
			if sym != "[unknown]" {
				plus := strings.LastIndex(sym, "+0x")
				if plus <= 0 {
					t.Fatalf("line %d: frame %q: want sym+0xOFF", n, line)
				}
				if _, err := strconv.ParseUint(sym[plus+3:], 16, 64); err != nil {
					t.Fatalf("line %d: offset in %q: %v", n, line, err)
				}
				sym = sym[:plus]
			}
			cur.frames = append(cur.frames, sym)
			cur.dsos = append(cur.dsos, dso)
		default:
			if cur != nil {
				t.Fatalf("line %d: header line inside a sample", n)
			}
			cur = parseHeaderLine(t, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("input ends inside the sample of line %d", cur.line)
	}
	return header
}

// parseHeaderLine reads "comm PID/TID [CPU] SEC.USEC: PERIOD EVENT: " from
// the right, so the comm may hold spaces.
func parseHeaderLine(t *testing.T, n int, line string) *rec {
	t.Helper()
	if !strings.HasSuffix(line, " cpu-clock:ppp: ") {
		t.Fatalf("line %d: %q: want the event cpu-clock:ppp: and a trailing space", n, line)
	}
	f := strings.Fields(line)
	if len(f) < 6 {
		t.Fatalf("line %d: %q: too few fields", n, line)
	}
	k := len(f)
	r := &rec{line: n, event: f[k-1]}
	var err error
	if r.period, err = strconv.ParseInt(f[k-2], 10, 64); err != nil {
		t.Fatalf("line %d: period: %v", n, err)
	}
	ts := strings.TrimSuffix(f[k-3], ":")
	sec, usec, ok := strings.Cut(ts, ".")
	if !ok || len(usec) != 6 {
		t.Fatalf("line %d: time %q: want SECONDS.MICROS", n, ts)
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("line %d: time %q", n, ts)
	}
	r.ns = s*1e9 + u*1e3
	cpu := f[k-4]
	if len(cpu) < 5 || cpu[0] != '[' || cpu[len(cpu)-1] != ']' {
		t.Fatalf("line %d: cpu %q: want [NNN]", n, cpu)
	}
	if r.cpu, err = strconv.Atoi(cpu[1 : len(cpu)-1]); err != nil {
		t.Fatalf("line %d: cpu %q", n, cpu)
	}
	p, tid, ok := strings.Cut(f[k-5], "/")
	if !ok {
		tid = p
	}
	r.pid, err1 = strconv.Atoi(p)
	r.tid, err2 = strconv.Atoi(tid)
	if err1 != nil || err2 != nil {
		t.Fatalf("line %d: pid/tid %q", n, f[k-5])
	}
	// The comm is everything before the pid field, as printed.
	at := strings.LastIndex(line, " "+f[k-5]+" ")
	for at > 0 && line[at-1] == ' ' {
		at--
	}
	r.comm = line[:at]
	if r.comm == "" {
		t.Fatalf("line %d: no comm in %q", n, line)
	}
	return r
}

// testConfig is small enough to generate and read in well under a second:
// 48 CPUs for 30 s, the incident on CPU 20, which polls NIC queues (16–23).
func testConfig(seed uint64) Config {
	c := DefaultConfig()
	c.CPUs, c.Seconds, c.Seed, c.IncidentCPU = 48, 30, seed, 20
	return c
}

func generate(t *testing.T, cfg Config) ([]byte, Truth) {
	t.Helper()
	var buf bytes.Buffer
	truth, err := Generate(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), truth
}

// shared is the capture most tests read, testConfig(sharedSeed), with the
// test's own tally of it: generated and read once for the whole package, as
// each costs about a second.
var shared struct {
	once   sync.Once
	ok     bool
	text   []byte
	truth  Truth
	count  count
	recs   []*rec
	header []string
}

const sharedSeed = 7

// sharedCapture returns the shared capture, generating and tallying it on
// first use.
func sharedCapture(t *testing.T) ([]byte, Truth) {
	t.Helper()
	shared.once.Do(func() {
		shared.text, shared.truth = generate(t, testConfig(sharedSeed))
		shared.count, shared.recs, shared.header = tally(t, shared.text, shared.truth)
		shared.ok = true
	})
	if !shared.ok {
		t.Fatal("the shared capture could not be generated or read; see the first test that failed")
	}
	return shared.text, shared.truth
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestDeterministic(t *testing.T) {
	a, ta := sharedCapture(t)
	if ta.SHA256 != sum(a) || ta.Bytes != int64(len(a)) {
		t.Fatalf("truth says %d bytes, sha256 %s; text has %d bytes, sha256 %s", ta.Bytes, ta.SHA256, len(a), sum(a))
	}
	// The truth's hash is the text's (checked above), so the second run and
	// the other seed need not keep their text.
	tb, err := Generate(io.Discard, testConfig(sharedSeed))
	if err != nil {
		t.Fatal(err)
	}
	if tb.SHA256 != ta.SHA256 || tb.Bytes != ta.Bytes {
		t.Fatalf("seed 7 twice: outputs differ (%d bytes, sha256 %s; then %d bytes, %s)", ta.Bytes, ta.SHA256, tb.Bytes, tb.SHA256)
	}
	if !reflect.DeepEqual(ta, tb) {
		t.Errorf("seed 7 twice: truths differ")
	}
	tc, err := Generate(io.Discard, testConfig(8))
	if err != nil {
		t.Fatal(err)
	}
	if ta.SHA256 == tc.SHA256 {
		t.Errorf("seeds 7 and 8 gave the same capture")
	}
	if reflect.DeepEqual(ta.Incidents, tc.Incidents) {
		t.Errorf("seeds 7 and 8 planted the same incident windows")
	}
}

// count is an independent tally of a capture, made from its text.
type count struct {
	samples, nic, memcg, memcgOut int64
	first, last                   int64
	perCPU                        []int64
	byComm                        map[string]int64
	wins                          []Window
}

func tally(t *testing.T, text []byte, truth Truth) (count, []*rec, []string) {
	t.Helper()
	c := count{perCPU: make([]int64, truth.Config.CPUs), byComm: map[string]int64{}, first: -1}
	for _, w := range truth.Incidents {
		c.wins = append(c.wins, Window{CPU: w.CPU, StartNS: w.StartNS, EndNS: w.EndNS, ByComm: map[string]int64{}, AllByComm: map[string]int64{}, FirstNS: -1, LastNS: -1})
	}
	var all []*rec
	header := readCapture(t, bytes.NewReader(text), func(r *rec) {
		all = append(all, r)
		c.samples++
		c.perCPU[r.cpu]++
		c.byComm[r.comm]++
		if c.first < 0 {
			c.first = r.ns
		}
		c.last = r.ns
		nic := r.has("mlx5e_napi_poll")
		memcg := r.frames[0] == "mem_cgroup_nr_lru_pages"
		if nic {
			c.nic++
		}
		inside := false
		for i := range c.wins {
			w := &c.wins[i]
			if r.ns < w.StartNS || r.ns >= w.EndNS {
				continue
			}
			w.AllCPUs++
			w.AllByComm[r.comm]++
			if nic {
				w.AllNICPoll++
			}
			if r.cpu != w.CPU {
				continue
			}
			inside = true
			w.Samples++
			w.ByComm[r.comm]++
			if memcg {
				w.MemcgLeaf++
			}
			if nic {
				w.NICPoll++
			}
			if w.FirstNS < 0 {
				w.FirstNS = r.ns
			}
			w.LastNS = r.ns
		}
		if memcg {
			c.memcg++
			if !inside {
				c.memcgOut++
			}
		}
	})
	return c, all, header
}

func TestTruthMatchesText(t *testing.T) {
	_, truth := sharedCapture(t)
	c := shared.count
	cfg := truth.Config
	if want := int64(cfg.CPUs * cfg.Seconds * cfg.Hz); c.samples != want || truth.Samples != want {
		t.Errorf("samples: text %d, truth %d; want %d (every CPU at %d Hz for %d s)", c.samples, truth.Samples, want, cfg.Hz, cfg.Seconds)
	}
	if !slices.Equal(c.perCPU, truth.SamplesPerCPU) {
		t.Errorf("samples per CPU: text %v; truth %v", c.perCPU, truth.SamplesPerCPU)
	}
	if !reflect.DeepEqual(c.byComm, truth.SamplesByComm) {
		t.Errorf("samples by comm: text %v; truth %v", c.byComm, truth.SamplesByComm)
	}
	if c.nic != truth.NICPollSamples || c.memcg != truth.MemcgSamples || c.memcgOut != truth.MemcgOutside {
		t.Errorf("nic/memcg/memcg outside: text %d/%d/%d; truth %d/%d/%d", c.nic, c.memcg, c.memcgOut, truth.NICPollSamples, truth.MemcgSamples, truth.MemcgOutside)
	}
	if c.first != truth.FirstNS || c.last != truth.LastNS {
		t.Errorf("first/last: text %d/%d; truth %d/%d", c.first, c.last, truth.FirstNS, truth.LastNS)
	}
	if t0 := c.first - c.first%1e9; truth.T0NS != t0 {
		t.Errorf("T0 = %d; want %d", truth.T0NS, t0)
	}
	if n := len(truth.Incidents); n < 3 || n > 4 {
		t.Errorf("%d incident windows; want 3 or 4", n)
	}
	for i, w := range truth.Incidents {
		got := c.wins[i]
		got.Start, got.End = float64(w.StartNS-c.first+c.first%1e9)/1e9, float64(w.EndNS-c.first+c.first%1e9)/1e9
		if !reflect.DeepEqual(got, w) {
			t.Errorf("window %d:\ntext  %+v\ntruth %+v", i, got, w)
		}
		if w.Samples == 0 || w.MemcgLeaf != w.Samples || w.ByComm["kubelet"] != w.Samples || w.NICPoll != 0 {
			t.Errorf("window %d on CPU %d: %d samples, %d memcg, by comm %v, %d NIC polls; want all kubelet memcg, no NIC polls",
				i, w.CPU, w.Samples, w.MemcgLeaf, w.ByComm, w.NICPoll)
		}
	}
}

// TestIncident checks the planted incident from the text alone: inside the
// windows the incident CPU runs only the kubelet's memcg walk under a read
// syscall; outside them it polls the NIC and runs other work.
func TestIncident(t *testing.T) {
	_, truth := sharedCapture(t)
	recs := shared.recs
	in := func(r *rec) bool {
		for _, w := range truth.Incidents {
			if r.cpu == w.CPU && r.ns >= w.StartNS && r.ns < w.EndNS {
				return true
			}
		}
		return false
	}
	path := []string{"mem_cgroup_nr_lru_pages", "memcg_stat_show", "seq_read_iter", "vfs_read", "ksys_read", "__x64_sys_read", "do_syscall_64", "entry_SYSCALL_64_after_hwframe"}
	var inside, nicOutside, otherOutside int
	for _, r := range recs {
		if r.cpu != truth.Config.IncidentCPU {
			continue
		}
		if !in(r) {
			if r.has("mlx5e_napi_poll") {
				nicOutside++
			}
			if r.comm != "kubelet" {
				otherOutside++
			}
			continue
		}
		inside++
		if r.comm != "kubelet" || r.has("mlx5e_napi_poll") {
			t.Fatalf("line %d: %s on CPU %d inside an incident window; want only the kubelet, no NIC polling", r.line, r.comm, r.cpu)
		}
		if r.frames[0] != path[0] || r.frames[1] != path[1] {
			t.Fatalf("line %d: leaf %s under %s; want %s under %s", r.line, r.frames[0], r.frames[1], path[0], path[1])
		}
		at := 1
		for _, want := range path[1:] {
			i := slices.Index(r.frames[at:], want)
			if i < 0 {
				t.Fatalf("line %d: %s missing or out of order below %s in %v", r.line, want, r.frames[at-1], r.frames)
			}
			at += i + 1
		}
		if !strings.HasPrefix(r.frames[at], "runtime/internal/syscall.") || r.dsos[len(r.dsos)-1] != "/usr/bin/kubelet" {
			t.Fatalf("line %d: want the kubelet's Go frames below the syscall, got %v", r.line, r.frames[at:])
		}
	}
	if inside == 0 || nicOutside == 0 || otherOutside == 0 {
		t.Errorf("CPU %d: %d samples inside windows, %d NIC polls and %d non-kubelet samples outside; want all three > 0",
			truth.Config.IncidentCPU, inside, nicOutside, otherOutside)
	}
}

// TestShape checks what every sample looks like: stack depth, time order,
// the sampling grid and the header block.
func TestShape(t *testing.T) {
	_, truth := sharedCapture(t)
	header := shared.header
	for _, want := range []string{"# captured on    : ", "# hostname : gpu-node-17", "# os release : ", "# perf version : ", "# arch : x86_64",
		"# nrcpus online : 48", "# cmdline : /usr/bin/perf record -F 49 -a -g -- sleep 30 ", "# ========"} {
		if !slices.ContainsFunc(header, func(h string) bool { return strings.HasPrefix(h, want) }) {
			t.Errorf("header block lacks %q", want)
		}
	}
	recs := shared.recs
	last := map[int]int64{}
	var prev int64
	var idle, shallow int
	for _, r := range recs {
		d := len(r.frames)
		okShallow := r.comm == "swapper" || strings.HasPrefix(r.comm, "NCCL Progress")
		if d > MaxDepth || d < 1 || (d < MinDepth && !okShallow) {
			t.Fatalf("line %d: %s has %d frames; want %d to %d", r.line, r.comm, d, MinDepth, MaxDepth)
		}
		if d < MinDepth {
			shallow++
		}
		if r.comm == "swapper" {
			idle++
			if r.pid != 0 || r.tid != 0 {
				t.Fatalf("line %d: swapper as %d/%d; want 0/0", r.line, r.pid, r.tid)
			}
		}
		if r.ns < prev {
			t.Fatalf("line %d: time %d before the previous sample's %d", r.line, r.ns, prev)
		}
		prev = r.ns
		if p, ok := last[r.cpu]; ok {
			if gap := r.ns - p; gap < truth.PeriodNS-500_000 || gap > truth.PeriodNS+500_000 {
				t.Fatalf("line %d: CPU %d sampled %d ns after its previous sample; want %d ± 0.5 ms", r.line, r.cpu, gap, truth.PeriodNS)
			}
		}
		last[r.cpu] = r.ns
		if r.period != truth.PeriodNS {
			t.Fatalf("line %d: period %d; want %d", r.line, r.period, truth.PeriodNS)
		}
	}
	if idle == 0 || shallow == 0 || shallow == len(recs) {
		t.Errorf("%d idle and %d shallow samples of %d", idle, shallow, len(recs))
	}
}

func TestHeaderLineFormat(t *testing.T) {
	tests := []struct {
		th      thread
		cpu     int
		ns      int64
		tidOnly bool
		want    string
	}{
		{thread{"swapper", 0, 0}, 0, 5086_000028_000, false, "swapper     0/0     [000]  5086.000028:   20408163 cpu-clock:ppp: \n"},
		{thread{"NCCL Progress 3", 51230, 51442}, 39, 5123_456789_000, false, "NCCL Progress 3 51230/51442 [039]  5123.456789:   20408163 cpu-clock:ppp: \n"},
		{thread{"kworker/0:1-vir", 11, 11}, 0, 464_979917_000, true, "kworker/0:1-vir    11 [000]   464.979917:   20408163 cpu-clock:ppp: \n"},
		{thread{"job 42 x", 123456, 1234567}, 1000, 123456_000001_000, false, "job 42 x 123456/1234567 [1000] 123456.000001:   20408163 cpu-clock:ppp: \n"},
	}
	for _, tt := range tests {
		got := string(appendHeaderLine(nil, tt.th, tt.cpu, tt.ns, 20408163, tt.tidOnly))
		if got != tt.want {
			t.Errorf("appendHeaderLine(%v) = %q; want %q", tt.th, got, tt.want)
		}
	}
}

func TestWindows(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 3 + int(seed%2)
		ws := windows(r, n, 120)
		if len(ws) != n {
			t.Fatalf("seed %d: %d windows; want %d", seed, len(ws), n)
		}
		for i, w := range ws {
			d := time.Duration(w[1] - w[0])
			if d < 3*time.Second || d > 8*time.Second {
				t.Errorf("seed %d: window %d lasts %v; want 3 s to 8 s", seed, i, d)
			}
			if w[0] < int64(5*time.Second) || w[1] > int64(115*time.Second) {
				t.Errorf("seed %d: window %d at [%v, %v); want inside [5 s, 115 s)", seed, i, time.Duration(w[0]), time.Duration(w[1]))
			}
			if i > 0 && w[0] <= ws[i-1][1] {
				t.Errorf("seed %d: window %d starts at %v, before window %d ends", seed, i, time.Duration(w[0]), i-1)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no cpus", func(c *Config) { c.CPUs = 0 }, "cpus = 0"},
		{"no time", func(c *Config) { c.Seconds = 0 }, "seconds = 0"},
		{"bad hz", func(c *Config) { c.Hz = -3 }, "hz = -3"},
		{"incident cpu out of range", func(c *Config) { c.IncidentCPU = 96 }, "incident cpu 96"},
		{"nic cpu out of range", func(c *Config) { c.NICCPUs = []int{3, 200} }, "nic cpu 200"},
		{"hostname with newline", func(c *Config) { c.Hostname = "a\nb" }, "one line"},
		{"negative start", func(c *Config) { c.Start = -1 }, "start = -1"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.change(&cfg)
		_, err := Generate(io.Discard, cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Generate error = %v; want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNoIncident(t *testing.T) {
	cfg := testConfig(5)
	cfg.IncidentCPU = -1
	cfg.Seconds = 10 // no windows to place: a shorter capture shows as much
	text, truth := generate(t, cfg)
	c, _, _ := tally(t, text, truth)
	if c.memcg == 0 {
		t.Fatal("no memcg samples at all; want the kubelet's background reads of memory.stat")
	}
	if len(truth.Incidents) != 0 || c.memcg != c.memcgOut || truth.MemcgOutside != truth.MemcgSamples {
		t.Errorf("no incident asked: %d windows, %d memcg samples of which %d outside windows", len(truth.Incidents), c.memcg, c.memcgOut)
	}
}

// BenchmarkGenerate measures the production-scale capture (96 CPUs × 120 s
// at 49 Hz) written to io.Discard.
func BenchmarkGenerate(b *testing.B) {
	var truth Truth
	for b.Loop() {
		var err error
		if truth, err = Generate(io.Discard, DefaultConfig()); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(truth.Bytes)
	b.ReportMetric(float64(truth.Samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(truth.Bytes), "bytes/capture")
}

func ExampleGenerate() {
	cfg := DefaultConfig()
	cfg.CPUs, cfg.Seconds, cfg.IncidentCPU = 4, 1, 1
	truth, err := Generate(io.Discard, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(truth.Samples, "samples on", len(truth.SamplesPerCPU), "CPUs")
	// Output: 196 samples on 4 CPUs
}

// TestParser reads a generated capture with the real parser: no warnings,
// the header metadata, and the truth's counts per CPU and per window.
func TestParser(t *testing.T) {
	text, truth := sharedCapture(t)
	sc := parser.NewScanner(bytes.NewReader(text), parser.Options{Strict: true})
	perCPU := make([]int64, truth.Config.CPUs)
	byComm := map[string]int64{}
	wins := make([]map[string]int64, len(truth.Incidents))
	memcg := make([]int64, len(truth.Incidents))
	for i := range wins {
		wins[i] = map[string]int64{}
	}
	var n int64
	for sc.Scan() {
		s := sc.Sample()
		n++
		perCPU[s.CPU]++
		byComm[s.Comm]++
		if s.Event != "cpu-clock" || s.Period != uint64(truth.PeriodNS) {
			t.Fatalf("line %d: event %q period %d; want cpu-clock %d", s.Line, s.Event, s.Period, truth.PeriodNS)
		}
		for i, w := range truth.Incidents {
			if int(s.CPU) == w.CPU && s.Time >= w.StartNS && s.Time < w.EndNS {
				wins[i][s.Comm]++
				if s.Frames[0].Symbol == "mem_cgroup_nr_lru_pages" && s.Frames[0].Kind == subsecond.KindKernel {
					memcg[i]++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if nw, ws := sc.Warnings(); nw != 0 {
		t.Fatalf("%d warnings: %v", nw, ws)
	}
	if n != truth.Samples || !slices.Equal(perCPU, truth.SamplesPerCPU) || !reflect.DeepEqual(byComm, truth.SamplesByComm) {
		t.Errorf("parser: %d samples, per CPU %v, by comm %v; truth %d, %v, %v", n, perCPU, byComm, truth.Samples, truth.SamplesPerCPU, truth.SamplesByComm)
	}
	for i, w := range truth.Incidents {
		if !reflect.DeepEqual(wins[i], w.ByComm) || memcg[i] != w.MemcgLeaf {
			t.Errorf("window %d: parser counts %v with %d memcg leaves; truth %v with %d", i, wins[i], memcg[i], w.ByComm, w.MemcgLeaf)
		}
	}
	m := sc.Metadata()
	if m.Hostname != "gpu-node-17" || m.NrCPUs != 48 || !strings.Contains(m.Cmdline, "-F 49 -a -g") {
		t.Errorf("metadata %+v; want hostname gpu-node-17, 48 CPUs, the perf record command line", m)
	}
}
