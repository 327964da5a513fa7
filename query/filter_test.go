package query_test

import (
	"errors"
	"math"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

func TestParseIDList(t *testing.T) {
	tests := []struct {
		in   string
		want []int32
		err  bool
	}{
		{"", nil, false},
		{"0", []int32{0}, false},
		{"0,3-5,39", []int32{0, 3, 4, 5, 39}, false},
		{"5, 3-4,3", []int32{3, 4, 5}, false},
		{"5-3", nil, true},
		{"x", nil, true},
		{"-1", nil, true},
		{"1,,2", nil, true},
		{"0-2000000000", nil, true},
		{"0-65535", nil, false},
		{strings.Repeat("0-40000,", 2) + "1", nil, true},
	}
	for _, tt := range tests {
		got, err := query.ParseIDList("cpu", tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseIDList(%q) error = %v; want error %v", tt.in, err, tt.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, subsecond.ErrInvalid) || !strings.HasPrefix(err.Error(), "cpu:") {
				t.Errorf("ParseIDList(%q) error = %v; want cpu: … wrapping ErrInvalid", tt.in, err)
			}
			continue
		}
		if tt.in == "0-65535" {
			if len(got) != 65536 {
				t.Errorf("ParseIDList(0-65535) has %d ids; want 65536", len(got))
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseIDList(%q) = %v; want %v", tt.in, got, tt.want)
		}
		if tt.want != nil {
			back, _ := query.ParseIDList("cpu", query.FormatIDList(got))
			if !reflect.DeepEqual(back, got) {
				t.Errorf("ParseIDList(FormatIDList(%v)) = %v", got, back)
			}
		}
	}
	if got := query.FormatIDList([]int32{0, 3, 4, 5, 39}); got != "0,3-5,39" {
		t.Errorf("FormatIDList = %q; want 0,3-5,39", got)
	}
}

func TestParseSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1", 1e9, false},
		{"0.1", 1e8, false},
		{"5086.2", 5086200000000, false},
		{".5", 5e8, false},
		{"2.", 2e9, false},
		{"0.000000001", 1, false},
		{"-1.5", -15e8, false},
		{"0.0000000001", 0, true},
		{"1e3", 0, true},
		{"", 0, true},
		{".", 0, true},
		{"abc", 0, true},
		{"9223372036.854775807", math.MaxInt64, false},
		{"-9223372036.854775807", -math.MaxInt64, false},
		{"9223372036.854775808", 0, true},
		{"9999999999", 0, true},
		{"-9999999999", 0, true},
	}
	for _, tt := range tests {
		got, err := query.ParseSeconds("start", tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSeconds(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && (!errors.Is(err, subsecond.ErrInvalid) || !strings.HasPrefix(err.Error(), "start:")) {
			t.Errorf("ParseSeconds(%q) error = %v; want start: … wrapping ErrInvalid", tt.in, err)
		}
		if err == nil {
			if back, _ := query.ParseSeconds("x", query.FormatSeconds(got)); back != got {
				t.Errorf("ParseSeconds(FormatSeconds(%d)) = %d", got, back)
			}
		}
	}
	// A number too large says so, however many digits it has; only what is
	// not a number is called one.
	for _, in := range []string{"9999999999", "-9999999999", "99999999999", "-99999999999999", "00000000000000000001.5"} {
		_, err := query.ParseSeconds("start", in)
		if in == "00000000000000000001.5" {
			if err != nil {
				t.Errorf("ParseSeconds(%q) = %v; want 1.5 s", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "is out of range") {
			t.Errorf("ParseSeconds(%q) error = %v; want one saying it is out of range", in, err)
		}
	}
}

// TestDisplaySeconds checks the offsets written for people: rounded to the
// millisecond, halves away from zero, where FormatSeconds keeps every
// nanosecond for URLs.
func TestDisplaySeconds(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{0, "0"},
		{119_998_950_001, "119.999"},
		{30_250_000_001, "30.25"},
		{19_989_969_001, "19.99"},
		{12_000_500_000, "12.001"},
		{12_000_499_999, "12"},
		{7_999_999_600, "8"},
		{59_999_500_000, "60"},
		{1_000_000_499, "1"},
		{999_999, "0.001"},
		{499_999, "0"},
		{500_000, "0.001"},
		{-1_500_000_000, "-1.5"},
		{-1_000_500_000, "-1.001"},
		{-5_000_000_000, "-5"},
		{-400, "0"},
		{-500_000, "-0.001"},
		{3_600_000_000_000, "3600"},
		{math.MaxInt64, "9223372036.855"},
		{math.MinInt64, "-9223372036.855"},
	} {
		if got := query.DisplaySeconds(tc.ns); got != tc.want {
			t.Errorf("DisplaySeconds(%d) = %q; want %q", tc.ns, got, tc.want)
		}
	}
	for ns, want := range map[int64]string{119_998_950_001: "119.998950001", math.MinInt64: "-9223372036.854775808"} {
		if got := query.FormatSeconds(ns); got != want {
			t.Errorf("FormatSeconds(%d) = %q; want %q, exact", ns, got, want)
		}
	}
}

// TestDisplayDuration checks the durations written for people: seconds
// below a minute, Go's h, m and s from a minute on, to the millisecond.
func TestDisplayDuration(t *testing.T) {
	for _, tc := range []struct {
		d    int64
		want string
	}{
		{0, "0 s"},
		{1, "<0.001 s"},
		{499_999, "<0.001 s"},
		{500_000, "0.001 s"},
		{850_000_000, "0.85 s"},
		{2_750_000_000, "2.75 s"},
		{30_250_000_000, "30.25 s"},
		{59_999_000_000, "59.999 s"},
		{59_999_499_999, "59.999 s"},
		{59_999_500_000, "1m0s"},
		{60_000_000_000, "1m0s"},
		{119_998_950_001, "1m59.999s"},
		{120_000_000_000, "2m0s"},
		{3_599_999_999_999, "1h0m0s"},
		{3_723_500_000_000, "1h2m3.5s"},
		{90_000_000_000_000, "25h0m0s"},
		{-2_500_000_000, "-2.5 s"},
		{-90_000_000_000, "-1m30s"},
		{math.MaxInt64, "2562047h47m16.855s"},
	} {
		if got := query.DisplayDuration(tc.d); got != tc.want {
			t.Errorf("DisplayDuration(%d) = %q; want %q", tc.d, got, tc.want)
		}
	}
}

// TestDisplayRange checks ranges of offsets written for people: bounds as
// DisplaySeconds, the length as DisplayDuration.
func TestDisplayRange(t *testing.T) {
	for _, tc := range []struct {
		start, end int64
		want       string
	}{
		{0, 119_998_950_001, "0–119.999 s (1m59.999s)"},
		{0, 30_250_000_001, "0–30.25 s (30.25 s)"},
		{4_500_000_000, 7_250_000_000, "4.5–7.25 s (2.75 s)"},
		{-5_000_000_000, 250_000_000, "-5–0.25 s (5.25 s)"},
		{1_000_000_000, 1_000_000_001, "1–1 s (<0.001 s)"},
		{400_000, 1_600_000, "0–0.002 s (0.001 s)"},
		{3_600_000_000_000, 7_323_000_000_000, "3600–7323 s (1h2m3s)"},
	} {
		if got := query.DisplayRange(tc.start, tc.end); got != tc.want {
			t.Errorf("DisplayRange(%d, %d) = %q; want %q", tc.start, tc.end, got, tc.want)
		}
	}
}

func TestParseFilter(t *testing.T) {
	v := url.Values{
		"cpu": {"0,3-5"}, "pid": {"10"}, "tid": {"11,12"}, "comm": {"java"}, "comm_regex": {"^ja"},
		"event": {"cycles"}, "function": {"^mem_"}, "only": {"kernel"}, "idle": {"1"}, "cgroup": {"kubepods"},
	}
	f, err := query.ParseFilter(v)
	if err != nil {
		t.Fatal(err)
	}
	want := query.Filter{CPUs: []int32{0, 3, 4, 5}, PIDs: []int32{10}, TIDs: []int32{11, 12}, Comm: "java",
		CommRegex: "^ja", Event: "cycles", Function: "^mem_", Only: "kernel", Cgroup: "kubepods", Idle: true}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("ParseFilter = %+v; want %+v", f, want)
	}
	if back, _ := query.ParseFilter(f.Values()); !reflect.DeepEqual(back, f) {
		t.Errorf("ParseFilter(f.Values()) = %+v; want %+v", back, f)
	}
	names := map[string]bool{}
	for _, p := range query.FilterParams() {
		names[p.Name] = true
	}
	for k := range v {
		if !names[k] {
			t.Errorf("FilterParams lacks %q", k)
		}
	}
	if len(names) != len(v) {
		t.Errorf("FilterParams has %d names; ParseFilter reads %d", len(names), len(v))
	}

	bad := []struct{ param, value string }{
		{"cpu", "a"}, {"pid", "3-1"}, {"tid", "x"}, {"comm_regex", "("}, {"function", "[a"},
		{"only", "both"}, {"idle", "yes"}, {"cgroup", "(x"},
	}
	for _, b := range bad {
		_, err := query.ParseFilter(url.Values{b.param: {b.value}})
		if err == nil || !errors.Is(err, subsecond.ErrInvalid) || !strings.HasPrefix(err.Error(), b.param+":") {
			t.Errorf("ParseFilter(%s=%q) error = %v; want %s: … wrapping ErrInvalid", b.param, b.value, err, b.param)
		}
	}
}

func kframe(sym string) subsecond.Frame {
	return subsecond.Frame{Symbol: sym, DSO: "[kernel.kallsyms]", Kind: subsecond.KindKernel}
}

func ufframe(sym string) subsecond.Frame {
	return subsecond.Frame{Symbol: sym, DSO: "/usr/bin/app", Kind: subsecond.KindUser}
}

// stack builds leaf-first kernel frames from root-first names.
func stack(rootFirst ...string) []subsecond.Frame {
	fs := make([]subsecond.Frame, len(rootFirst))
	for i, s := range rootFirst {
		fs[len(rootFirst)-1-i] = kframe(s)
	}
	return fs
}

func TestIdle(t *testing.T) {
	tests := []struct {
		name   string
		comm   string
		pid    int32
		frames []subsecond.Frame
		idle   bool
	}{
		{"idle loop", "swapper", 0, stack("secondary_startup_64", "start_secondary", "cpu_startup_entry", "do_idle", "cpuidle_enter", "cpuidle_enter_state", "intel_idle"), true},
		{"safe halt", "swapper/3", 0, stack("start_secondary", "cpu_startup_entry", "do_idle", "default_idle_call", "arch_cpu_idle", "native_safe_halt"), true},
		{"acpi", "swapper", 0, stack("cpu_startup_entry", "cpu_idle", "acpi_idle_enter", "acpi_idle_do_entry"), true},
		{"poll", "swapper", 0, stack("do_idle", "cpuidle_enter", "poll_idle"), true},
		{"no frames", "swapper", 0, nil, true},
		{"pid 0 other comm", "kworker", 0, stack("do_idle", "mwait_idle_with_hints"), true},
		{"softirq on idle (FlameScope #83)", "swapper", 0, stack("do_idle", "cpuidle_enter", "intel_idle", "asm_common_interrupt", "common_interrupt", "irq_exit_rcu", "__do_softirq", "net_rx_action", "ixgbe_poll"), false},
		{"do_IRQ on idle", "swapper", 0, stack("cpu_idle", "default_idle", "do_IRQ", "handle_irq", "e1000_intr"), false},
		{"timer interrupt on idle", "swapper", 0, stack("do_idle", "cpuidle_enter", "intel_idle", "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "hrtimer_interrupt", "tick_sched_timer"), false},
		{"irq_exit on idle", "swapper", 0, stack("cpu_idle", "irq_exit", "rcu_process_callbacks"), false},
		{"idle task scheduling", "swapper", 0, stack("start_secondary", "cpu_startup_entry", "schedule_idle", "__schedule"), false},
		{"busy process", "java", 1234, stack("do_syscall_64", "sys_read"), false},
		{"busy process in a function named like idle", "app", 99, []subsecond.Frame{ufframe("default_idle")}, false},
	}
	b := subsecond.NewBuilder()
	for i, tt := range tests {
		b.Add(&subsecond.Sample{Comm: tt.comm, PID: tt.pid, TID: tt.pid, CPU: 0, Time: int64(i), Event: "cpu-clock", Frames: tt.frames})
	}
	c := b.Capture(subsecond.Profile{})
	m, err := query.Filter{Idle: true}.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if pass, idle := m.Test(i); !pass || idle != tt.idle {
			t.Errorf("%s: Test = %v, idle %v; want true, idle %v", tt.name, pass, idle, tt.idle)
		}
	}
	def, _ := query.Filter{}.Compile(c)
	for i, tt := range tests {
		if got := def.Keep(i); got != !tt.idle {
			t.Errorf("%s: default filter Keep = %v; want %v", tt.name, got, !tt.idle)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	b := subsecond.NewBuilder()
	b.Add(&subsecond.Sample{Comm: "a", Event: "cycles", Time: 1})
	c := b.Capture(subsecond.Profile{})
	for _, f := range []query.Filter{{Event: "instructions"}, {Function: "("}, {CommRegex: "["}, {Only: "x"}} {
		if _, err := f.Compile(c); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("Compile(%+v) error = %v; want ErrInvalid", f, err)
		}
	}
}

func TestOnlyFrames(t *testing.T) {
	b := subsecond.NewBuilder()
	mixed := []subsecond.Frame{kframe("sys_read"), ufframe("main")} // leaf-first: user main calls into the kernel
	b.Add(&subsecond.Sample{Comm: "a", PID: 1, Event: "e", Time: 1, Frames: mixed})
	b.Add(&subsecond.Sample{Comm: "a", PID: 1, Event: "e", Time: 2, Frames: []subsecond.Frame{ufframe("main")}})
	b.Add(&subsecond.Sample{Comm: "a", PID: 1, Event: "e", Time: 3, Frames: []subsecond.Frame{kframe("sys_read")}})
	c := b.Capture(subsecond.Profile{})
	for _, tt := range []struct {
		only string
		want []bool
	}{{"", []bool{true, true, true}}, {"kernel", []bool{true, false, true}}, {"user", []bool{true, true, false}}} {
		m, err := query.Filter{Only: tt.only}.Compile(c)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tt.want {
			if got := m.Keep(i); got != w {
				t.Errorf("only=%q: Keep(%d) = %v; want %v", tt.only, i, got, w)
			}
		}
	}
}

func TestHugeIDs(t *testing.T) {
	b := subsecond.NewBuilder()
	b.Add(&subsecond.Sample{Comm: "a", CPU: 2_000_000_000, PID: 1, Event: "e", Time: 1, Frames: []subsecond.Frame{ufframe("f")}})
	b.Add(&subsecond.Sample{Comm: "a", CPU: 3, PID: 1, Event: "e", Time: 2, Frames: []subsecond.Frame{ufframe("f")}})
	c := b.Capture(subsecond.Profile{})
	f, err := query.ParseFilter(url.Values{"cpu": {"2000000000"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Keep(0) || m.Keep(1) {
		t.Errorf("cpu=2000000000: Keep = %v, %v; want true, false", m.Keep(0), m.Keep(1))
	}
}

// FuzzParseFilter feeds hostile parameter values through ParseFilter,
// Compile and Keep: errors must wrap ErrInvalid, nothing may panic, and a
// parsed filter must survive a round trip through Values.
func FuzzParseFilter(f *testing.F) {
	f.Add("0,3-5", "1", "", "java", "^ja", "cpu-clock", "mem_", "kernel", "1", "5086.2")
	f.Add("2147483647", "0-65535", "x", "", "(", "", "[", "both", "yes", "1e3")
	f.Add("-1", "3-1", ",", "\x00", ".*", "nope", "", "user", "0", "-.5")
	b := subsecond.NewBuilder()
	b.Add(&subsecond.Sample{Comm: "java", PID: 1, TID: 1, CPU: 3, Time: 1, Event: "cpu-clock", Frames: stack("do_idle", "mem_cgroup_nr_lru_pages")})
	b.Add(&subsecond.Sample{Comm: "swapper", PID: 0, TID: 0, CPU: 0, Time: 2, Event: "cpu-clock", Frames: stack("do_idle", "intel_idle")})
	c := b.Capture(subsecond.Profile{})
	f.Fuzz(func(t *testing.T, cpu, pid, tid, comm, commRe, event, fn, only, idle, secs string) {
		v := url.Values{"cpu": {cpu}, "pid": {pid}, "tid": {tid}, "comm": {comm}, "comm_regex": {commRe},
			"event": {event}, "function": {fn}, "only": {only}, "idle": {idle}}
		flt, err := query.ParseFilter(v)
		if err != nil {
			if !errors.Is(err, subsecond.ErrInvalid) {
				t.Fatalf("ParseFilter error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if back, err := query.ParseFilter(flt.Values()); err != nil || !reflect.DeepEqual(back, flt) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, flt)
		}
		m, err := flt.Compile(c)
		if err != nil {
			if !errors.Is(err, subsecond.ErrInvalid) {
				t.Fatalf("Compile error %v does not wrap ErrInvalid", err)
			}
			return
		}
		for i := 0; i < c.Samples.Len(); i++ {
			m.Keep(i)
		}
		if ns, err := query.ParseSeconds("start", secs); err == nil {
			if back, _ := query.ParseSeconds("start", query.FormatSeconds(ns)); back != ns {
				t.Fatalf("ParseSeconds(FormatSeconds(%d)) = %d", ns, back)
			}
		} else if !errors.Is(err, subsecond.ErrInvalid) {
			t.Fatalf("ParseSeconds error %v does not wrap ErrInvalid", err)
		}
	})
}

// TestMatchAgainstIndependentVerdict checks Keep, Test and the Simple fast
// path sample by sample against the generator's own verdict, for filters
// that take each of Match's paths: bitmap and sorted id sets, huge ids,
// command, function and Only.
func TestMatchAgainstIndependentVerdict(t *testing.T) {
	ss := synth.Generate(synth.Options{Seed: 7, CPUs: 5, Seconds: 4, Hz: 49, Start: 3_000_000_000, Pegged: 1, PegStart: 1e9, PegEnd: 3e9})
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].Time < ss[j].Time })
	c := synth.Capture(ss)
	for _, f := range []query.Filter{
		{}, {Idle: true}, {CPUs: []int32{1, 3}}, {CPUs: []int32{3, 70000}}, {PIDs: []int32{0, 1000}},
		{PIDs: []int32{500, 1 << 30}}, {TIDs: []int32{1001, 1002}}, {Comm: "python3"}, {CommRegex: "^(nccl|kworker)"},
		{Function: "mem_cgroup|ext4"}, {Only: "kernel"}, {Only: "user", Idle: true}, {Comm: "swapper", Idle: true, Only: "kernel"},
	} {
		m, err := f.Compile(c)
		if err != nil {
			t.Fatal(err)
		}
		ev, idle, simple := m.Simple()
		if want := len(f.CPUs)+len(f.PIDs)+len(f.TIDs) == 0 && f.Comm == "" && f.CommRegex == "" && f.Function == "" && f.Only == ""; simple != want {
			t.Errorf("%v: Simple = %v; want %v", f.Values(), simple, want)
		}
		bad := 0
		for i := range ss {
			want := synth.Keep(&ss[i], f, "cpu-clock")
			got := m.Keep(i)
			pass, isIdle := m.Test(i)
			if got != want || pass && (isIdle != ss[i].Idle || m.Idle(i) != ss[i].Idle) || got != (pass && (f.Idle || !isIdle)) {
				if bad++; bad <= 3 {
					t.Errorf("%v: sample %d (%s, pid %d, cpu %d): Keep %v, Test %v, %v; want Keep %v, idle %v",
						f.Values(), i, ss[i].Comm, ss[i].PID, ss[i].CPU, got, pass, isIdle, want, ss[i].Idle)
				}
			}
			if simple && got != (c.Samples.Event[i] == ev && (idle || !m.Idle(i))) {
				t.Fatalf("%v: the Simple fast path differs from Keep at sample %d", f.Values(), i)
			}
		}
	}
}

// TestFilterCheck checks that a filter naming only what a capture lacks is
// refused with what the capture has, and one naming anything it has passes.
func TestFilterCheck(t *testing.T) {
	b := subsecond.NewBuilder()
	for cpu := int32(0); cpu < 96; cpu++ {
		b.Add(&subsecond.Sample{Time: 1e9 + int64(cpu), CPU: cpu, PID: 100 + cpu, TID: 1000 + cpu, Comm: "web", Event: "cpu-clock",
			Frames: []subsecond.Frame{ufframe("main")}})
	}
	noPID := subsecond.NewBuilder()
	noPID.Add(&subsecond.Sample{Time: 1e9, CPU: subsecond.Unknown, PID: subsecond.Unknown, TID: 7, Comm: "web", Event: "cpu-clock"})
	// Ids out of order and repeated, one past Linux's pid_max, some unknown.
	odd := subsecond.NewBuilder()
	for i, id := range [][2]int32{{5, 5_000_000}, {3, 1}, {70000, 1}, {3, subsecond.Unknown}, {subsecond.Unknown, 4_194_303}} {
		odd.Add(&subsecond.Sample{Time: 1e9 + int64(i), CPU: id[0], PID: id[1], TID: id[1], Comm: "web", Event: "cpu-clock"})
	}
	c, c2, c3 := b.Capture(subsecond.Profile{}), noPID.Capture(subsecond.Profile{}), odd.Capture(subsecond.Profile{})
	for _, tc := range []struct {
		c    *subsecond.Capture
		f    query.Filter
		want string
	}{
		{c, query.Filter{}, ""},
		{c, query.Filter{CPUs: []int32{95, 96}, PIDs: []int32{100}, TIDs: []int32{1000, 9}, Comm: "web"}, ""},
		{c, query.Filter{CPUs: []int32{96}}, "cpu: the capture has no CPU 96; its CPUs are 0-95"},
		{c, query.Filter{CPUs: []int32{96, 97, 200}}, "cpu: the capture has no CPUs 96-97,200; its CPUs are 0-95"},
		{c, query.Filter{PIDs: []int32{1}}, "pid: the capture has no process 1 (it has 96 processes)"},
		{c, query.Filter{TIDs: []int32{1}}, "tid: the capture has no thread 1 (it has 96 threads)"},
		{c, query.Filter{Comm: "java"}, `comm: the capture has no command named "java" (it has 1 command; comm_regex matches part of a name)`},
		{c2, query.Filter{CPUs: []int32{0}}, "cpu: the capture records no CPU numbers"},
		{c2, query.Filter{PIDs: []int32{1}}, "pid: the capture records no process ids (perf script printed thread ids alone; filter with tid)"},
		{c3, query.Filter{CPUs: []int32{4}}, "cpu: the capture has no CPU 4; its CPUs are 3,5,70000"},
		{c3, query.Filter{PIDs: []int32{2}}, "pid: the capture has no process 2 (it has 3 processes)"},
		{c3, query.Filter{PIDs: []int32{5_000_000}, TIDs: []int32{4_194_303}, CPUs: []int32{70000}}, ""},
	} {
		err := tc.f.Check(tc.c)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, subsecond.ErrInvalid)) {
			t.Errorf("%+v.Check() = %v; want %q", tc.f, err, tc.want)
		}
	}
}

// TestDisplayWallTime checks wall-clock times written for people: RFC 3339
// in UTC to the millisecond.
func TestDisplayWallTime(t *testing.T) {
	for ns, want := range map[int64]string{
		1796004019000000000: "2026-11-30T02:00:19Z",
		1796004019501234000: "2026-11-30T02:00:19.501Z",
		1796004019999500000: "2026-11-30T02:00:20Z",
		1796004019250000001: "2026-11-30T02:00:19.25Z",
	} {
		if got := query.DisplayWallTime(ns); got != want {
			t.Errorf("DisplayWallTime(%d) = %q; want %q", ns, got, want)
		}
	}
}
