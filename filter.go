package subsecond

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Filter selects samples. The same filter means the same thing in every
// heatmap, cores map, flame graph, export, CLI flag and URL parameter; its
// parameters are the table's GroupFilter rows (query.go). The zero Filter keeps every
// non-idle sample of the capture's default event (Profile.DefaultEvent).
//
// A sample passes when all of these hold:
//   - its CPU is in CPUs (empty: any CPU; a sample without a CPU passes only
//     when CPUs is empty), likewise PID in PIDs and TID in TIDs;
//   - its command name equals Comm (when set) and matches CommRegex (when set);
//   - its event is Event (empty: the capture's default event, its first
//     sampling event, such as cpu-clock, else its first event);
//   - some frame's symbol matches Function (when set);
//   - Only is "kernel": at least one frame is a kernel frame; Only is "user":
//     at least one frame is not a kernel frame (user, JIT, inlined and unknown
//     frames all count as user);
//   - Idle is set, or the sample is not idle (see IsIdleFunc).
//
// Only also trims stacks where frames are shown (flame graphs, exports, hot
// spots' top stack and function): a flame graph with Only "kernel" shows each
// kept sample's kernel frames alone, root-first, under its command name.
type Filter struct {
	CPUs      []int32
	PIDs      []int32
	TIDs      []int32
	Comm      string
	CommRegex string
	Event     string
	Function  string
	Only      string // "", "kernel" or "user"
	Idle      bool
}

// maxIDs bounds the size of an id list, so that "0-2000000000" is refused
// rather than expanded.
const maxIDs = 1 << 16

// ParseIDList parses a list such as "0,3-5,39" into sorted distinct ids. The
// empty string yields nil (no restriction). Errors wrap ErrInvalid and name
// the parameter.
func ParseIDList(name, s string) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	seen := map[int32]bool{}
	total := 0 // ids listed, repeats included, so "0-65000,0-65000,…" is refused
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 32)
		if err != nil || a < 0 {
			return nil, Invalidf(name, "%q is not an id or range like 3-5", part)
		}
		b := a
		if isRange {
			b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 32)
			if err != nil || b < a {
				return nil, Invalidf(name, "%q is not a range like 3-5", part)
			}
		}
		if total += int(b-a) + 1; b-a >= maxIDs || total > maxIDs {
			return nil, Invalidf(name, "more than %d ids", maxIDs)
		}
		for i := a; i <= b; i++ {
			seen[int32(i)] = true
		}
	}
	ids := make([]int32, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// FormatIDList writes sorted ids in the form ParseIDList reads, with runs as
// ranges: [0 3 4 5 39] is "0,3-5,39".
func FormatIDList(ids []int32) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ids[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ids[j])))
		}
		i = j + 1
	}
	return b.String()
}

// ParseSeconds parses a decimal number of seconds such as "5086.2" into
// integer nanoseconds exactly, without floating point. Values whose
// nanoseconds do not fit in an int64 are refused. Errors wrap ErrInvalid and
// name the parameter.
func ParseSeconds(name, s string) (int64, error) {
	bad := Invalidf(name, "%q is not a number of seconds like 1.25", s)
	in := s
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > 9 {
		return 0, bad
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, bad
		}
	}
	whole = strings.TrimLeft(whole, "0")
	var w, f int64
	if whole != "" && len(whole) <= 10 {
		w, _ = strconv.ParseInt(whole, 10, 64)
	}
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	// Check the range before multiplying: ten whole digits can overflow.
	if len(whole) > 10 || w > (math.MaxInt64-f)/1e9 {
		return 0, Invalidf(name, "%q is out of range: seconds must lie within ±%s", in, FormatSeconds(math.MaxInt64))
	}
	ns := w*1e9 + f
	if neg {
		ns = -ns
	}
	return ns, nil
}

// FormatSeconds writes nanoseconds as decimal seconds without trailing
// zeros, the inverse of ParseSeconds: 5086200000000 is "5086.2".
func FormatSeconds(ns int64) string { return decimalSeconds(ns, 9) }

// DisplaySeconds writes nanoseconds as decimal seconds for people: rounded
// to the microsecond (halves away from zero), without trailing zeros.
// 119998950001 is "119.99895" where FormatSeconds writes "119.998950001".
// What goes back into a URL or a parameter is written with FormatSeconds,
// which is exact.
func DisplaySeconds(ns int64) string {
	const us = 1000
	r := ns / us // whole microseconds, rounded below; no overflow near the int64 limits
	if rem := ns % us; rem >= us/2 {
		r++
	} else if rem <= -us/2 {
		r--
	}
	return decimalSeconds(r, 6)
}

// decimalSeconds writes n units of 10^-digits seconds as decimal seconds
// without trailing zeros.
func decimalSeconds(n int64, digits int) string {
	sign, u := "", uint64(n)
	if n < 0 {
		sign, u = "-", -u // the magnitude, math.MinInt64's too
	}
	unit := uint64(1)
	for range digits {
		unit *= 10
	}
	s := fmt.Sprintf("%s%d.%0*d", sign, u/unit, digits, u%unit)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// DisplayRange writes the half-open range [start, end) of offsets in
// nanoseconds for people, in seconds as DisplaySeconds writes them:
// "[0, 119.99895) s".
func DisplayRange(start, end int64) string {
	return "[" + DisplaySeconds(start) + ", " + DisplaySeconds(end) + ") s"
}

func compileParam(name, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, Invalidf(name, "%q is not a regular expression: %v", expr, unwrapRegexp(err))
	}
	return re, nil
}

// idleFuncs are the idle loop's functions; idlePrefixes cover the cpuidle
// drivers' families.
var idleFuncs = map[string]bool{
	"do_idle": true, "cpu_idle": true,
	"cpuidle_enter": true, "cpuidle_enter_state": true, "cpuidle_idle_call": true,
	"default_idle": true, "default_idle_call": true, "arch_cpu_idle": true, "cpu_idle_poll": true,
	"native_safe_halt": true, "safe_halt": true, "pv_native_safe_halt": true, "hv_native_safe_halt": true,
	"poll_idle": true, "mwait_idle": true, "mwait_idle_with_hints": true, "amd_e400_idle": true,
	"xen_safe_halt": true, "psci_enter_idle_state": true, "cpu_do_idle": true, "wfi": true,
}

var idlePrefixes = []string{"intel_idle", "acpi_idle", "cpuidle_enter", "mwait_idle", "poll_idle", "acpi_processor_ffh_cstate_enter", "arch_cpu_idle", "default_idle"}

// irqFuncs mark interrupt and softirq work; irqPrefixes their families.
var irqFuncs = map[string]bool{
	"__do_softirq": true, "do_softirq": true, "do_softirq_own_stack": true, "handle_softirqs": true,
	"irq_exit": true, "irq_exit_rcu": true, "__irq_exit_rcu": true, "do_IRQ": true,
	"common_interrupt": true, "asm_common_interrupt": true, "ret_from_intr": true,
	"net_rx_action": true, "tasklet_action": true, "tasklet_hi_action": true, "run_timer_softirq": true,
	"rcu_core": true, "rcu_core_si": true, "blk_done_softirq": true, "handle_irq": true,
	"handle_irq_event": true, "handle_edge_irq": true, "handle_fasteoi_irq": true,
	"apic_timer_interrupt": true, "smp_apic_timer_interrupt": true, "hrtimer_interrupt": true,
	"smp_call_function_interrupt": true, "smp_call_function_single_interrupt": true,
	"reschedule_interrupt": true, "smp_reschedule_interrupt": true, "gic_handle_irq": true,
	"el1_interrupt": true, "el1h_64_irq": true, "el1_irq": true,
}

var irqPrefixes = []string{"sysvec_", "__sysvec_", "asm_sysvec_", "asm_common_interrupt", "irq_exit"}

// IsIdleFunc reports whether sym is a function of the kernel's idle loop
// (do_idle, cpuidle_enter, intel_idle, native_safe_halt, …). A sample is idle
// when it belongs to the idle task (pid 0 or a command named swapper),
// its stack passes through an idle-loop function, and no frame is interrupt
// or softirq work (see IsIrqFunc): an interrupt taken while idling is work,
// not idle. An idle-task sample without any frames is idle too.
func IsIdleFunc(sym string) bool {
	return idleFuncs[sym] || hasAnyPrefix(sym, idlePrefixes)
}

// IsIrqFunc reports whether sym marks interrupt or softirq work
// (__do_softirq, irq_exit, do_IRQ, common_interrupt, sysvec_*, net_rx_action, …).
func IsIrqFunc(sym string) bool {
	return irqFuncs[sym] || hasAnyPrefix(sym, irqPrefixes)
}

// IsIdleComm reports whether comm names the idle task (swapper, swapper/3).
func IsIdleComm(comm string) bool {
	return comm == "swapper" || strings.HasPrefix(comm, "swapper/")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Match is a Filter compiled against one Capture: it answers per sample with
// array lookups, never a map. Per stack node it knows whether the stack is
// idle, matches Function and has a frame of the Only kind; per command string
// it caches the Comm/CommRegex verdict. What does not depend on the filter
// (per-frame and per-node idle, interrupt and kernel flags) is computed once
// per capture and shared by every Match. A Match is for one query and one
// goroutine.
type Match struct {
	c         *Capture
	event     uint16
	cpu       []bool
	cpuSet    idSet // ids too large for cpu
	pid, tid  idSet
	comm      string
	commRe    *regexp.Regexp
	commState []uint8 // per string: 0 unknown, else commSeen|commPass?
	node      []uint8 // per stack node, shared: nodeIdle, nodeKernel, nodeUser
	onlyBit   uint8   // the node flag Only needs, 0 for none
	fnNode    []bool  // per stack node: some frame matches Function (nil: no Function)
	frameKeep []bool  // per frame, shared: shown under Only (nil: all)
	idle      bool
	// sampleIdle, shared, has bit i set when sample i is idle.
	sampleIdle []uint64
	// simple: no criterion beyond the event and idleness.
	simple bool
}

const (
	commSeen = 1 << iota
	commPass
)

// Per-node flags, folded along the path from the root.
const (
	nodeIdle   = 1 << iota // idle-loop stack without interrupt work
	nodeKernel             // some frame is a kernel frame
	nodeUser               // some frame is not a kernel frame
)

// filterIndex is what Compile needs of a capture whatever the filter,
// built once per capture.
type filterIndex struct {
	sampleIdle []uint64 // bit i: sample i is idle
	node       []uint8  // per stack node: nodeIdle, nodeKernel, nodeUser
	order      []int32  // stack nodes with every parent before its children; nil when index order is
	keepKernel []bool   // per frame: a kernel frame
	keepUser   []bool   // per frame: not a kernel frame
}

type filterIndexKey struct{}

// Bytes returns the memory the index holds.
func (ix *filterIndex) Bytes() int64 {
	return SliceBytes(ix.sampleIdle) + SliceBytes(ix.node) + SliceBytes(ix.order) + SliceBytes(ix.keepKernel) + SliceBytes(ix.keepUser)
}

func newFilterIndex(c *Capture) *filterIndex {
	const (
		fIdle = 1 << iota
		fIrq
	)
	ix := &filterIndex{keepKernel: make([]bool, len(c.Frames)), keepUser: make([]bool, len(c.Frames))}
	symFlags := make([]uint8, len(c.Strings)) // per symbol string: flags|seen
	const seen = 1 << 7
	frameFlags := make([]uint8, len(c.Frames))
	for i, fr := range c.Frames {
		fl := symFlags[fr.Symbol]
		if fl&seen == 0 {
			sym := c.Strings[fr.Symbol]
			fl = seen
			if IsIdleFunc(sym) {
				fl |= fIdle
			}
			if IsIrqFunc(sym) {
				fl |= fIrq
			}
			symFlags[fr.Symbol] = fl
		}
		frameFlags[i] = fl
		ix.keepKernel[i] = fr.Kind == KindKernel
		ix.keepUser[i] = fr.Kind != KindKernel
	}
	ix.order = parentFirst(c.Nodes)
	// any: the union of the path's frame flags, plus the kinds seen.
	const (
		aKernel = 1 << 5
		aUser   = 1 << 6
	)
	any := make([]uint8, len(c.Nodes))
	ix.node = make([]uint8, len(c.Nodes))
	visit := func(n int32) {
		if n == 0 {
			ix.node[0] = nodeIdle
			return
		}
		nd := &c.Nodes[n]
		a := any[nd.Parent] | frameFlags[nd.Frame]&(fIdle|fIrq)
		if c.Frames[nd.Frame].Kind == KindKernel {
			a |= aKernel
		} else {
			a |= aUser
		}
		any[n] = a
		var fl uint8
		if a&fIdle != 0 && a&fIrq == 0 {
			fl |= nodeIdle
		}
		if a&aKernel != 0 {
			fl |= nodeKernel
		}
		if a&aUser != 0 {
			fl |= nodeUser
		}
		ix.node[n] = fl
	}
	eachParentFirst(len(c.Nodes), ix.order, visit)
	// Per sample: idle stack, and the idle task (by name or pid 0).
	smp := &c.Samples
	ix.sampleIdle = make([]uint64, (smp.Len()+63)/64)
	commIdle := make([]uint8, len(c.Strings)) // 0 unknown, 1 no, 2 yes
	for i, n := range smp.Stack {
		if ix.node[n]&nodeIdle == 0 {
			continue
		}
		if smp.PID[i] != 0 {
			cm := smp.Comm[i]
			if commIdle[cm] == 0 {
				commIdle[cm] = 1
				if IsIdleComm(c.Strings[cm]) {
					commIdle[cm] = 2
				}
			}
			if commIdle[cm] != 2 {
				continue
			}
		}
		ix.sampleIdle[i/64] |= 1 << (i % 64)
	}
	return ix
}

// parentFirst returns the stack nodes in an order where each parent comes
// before its children, or nil when index order already is one (as the
// Interner builds them).
func parentFirst(nodes []StackNode) []int32 {
	ok := true
	for n := 1; n < len(nodes) && ok; n++ {
		ok = nodes[n].Parent < int32(n)
	}
	if ok {
		return nil
	}
	order := make([]int32, 0, len(nodes))
	done := make([]bool, len(nodes))
	var path []int32
	for n := range nodes {
		path = path[:0]
		for p := int32(n); p >= 0 && !done[p]; p = nodes[p].Parent {
			path = append(path, p)
			if p == 0 {
				break
			}
		}
		for i := len(path) - 1; i >= 0; i-- {
			done[path[i]] = true
			order = append(order, path[i])
		}
	}
	return order
}

// eachParentFirst calls visit for every node index below n, parents first.
func eachParentFirst(n int, order []int32, visit func(int32)) {
	if order == nil {
		for i := 0; i < n; i++ {
			visit(int32(i))
		}
		return
	}
	for _, i := range order {
		visit(i)
	}
}

// Compile prepares f for fast per-sample answers on c. Errors wrap
// ErrInvalid and name the bad parameter.
func (f Filter) Compile(c *Capture) (*Match, error) {
	m := &Match{c: c, comm: f.Comm, idle: f.Idle}
	var err error
	if m.commRe, err = compileParam("comm_regex", f.CommRegex); err != nil {
		return nil, err
	}
	fnRe, err := compileParam("function", f.Function)
	if err != nil {
		return nil, err
	}
	ix := Derived(c, filterIndexKey{}, func() *filterIndex { return newFilterIndex(c) })
	m.node, m.sampleIdle = ix.node, ix.sampleIdle
	switch f.Only {
	case "":
	case "kernel":
		m.onlyBit, m.frameKeep = nodeKernel, ix.keepKernel
	case "user":
		m.onlyBit, m.frameKeep = nodeUser, ix.keepUser
	default:
		return nil, Invalidf("only", "%q is not kernel or user", f.Only)
	}
	m.event = uint16(c.Profile.DefaultEvent())
	if f.Event != "" {
		found := false
		names := make([]string, len(c.Profile.Events))
		for i, e := range c.Profile.Events {
			names[i] = e.Name
			if e.Name == f.Event {
				m.event, found = uint16(i), true
			}
		}
		if !found {
			return nil, Invalidf("event", "the capture has no event %q (it has %s)", f.Event, strings.Join(names, ", "))
		}
	}
	if len(f.CPUs) > 0 && f.CPUs[len(f.CPUs)-1] < 1<<16 {
		m.cpu = make([]bool, f.CPUs[len(f.CPUs)-1]+1)
		for _, id := range f.CPUs {
			m.cpu[id] = true
		}
	} else {
		m.cpuSet = newIDSet(f.CPUs) // ids too large for a slice
	}
	m.pid = newIDSet(f.PIDs)
	m.tid = newIDSet(f.TIDs)
	if m.comm != "" || m.commRe != nil {
		m.commState = make([]uint8, len(c.Strings))
	}
	if fnRe != nil {
		m.fnNode = functionNodes(c, ix.order, fnRe)
	}
	m.simple = m.cpu == nil && !m.cpuSet.active() && !m.pid.active() && !m.tid.active() &&
		m.comm == "" && m.commRe == nil && m.onlyBit == 0 && m.fnNode == nil
	return m, nil
}

// functionNodes reports per stack node whether some frame on its path has a
// symbol that re matches. Each distinct symbol is matched once.
func functionNodes(c *Capture, order []int32, re *regexp.Regexp) []bool {
	const (
		seen  = 1
		match = 2
	)
	sym := make([]uint8, len(c.Strings))
	out := make([]bool, len(c.Nodes))
	eachParentFirst(len(c.Nodes), order, func(n int32) {
		if n == 0 {
			return
		}
		nd := &c.Nodes[n]
		if out[nd.Parent] {
			out[n] = true
			return
		}
		s := c.Frames[nd.Frame].Symbol
		st := sym[s]
		if st == 0 {
			st = seen
			if re.MatchString(c.Strings[s]) {
				st |= match
			}
			sym[s] = st
		}
		out[n] = st&match != 0
	})
	return out
}

// idSet is a set of ids answered without a map: a bitmap up to the largest
// id when that is small enough, else a binary search of the sorted ids. The
// zero idSet is the empty restriction (everything passes); see active.
type idSet struct {
	bits   []uint64
	sorted []int32
}

// maxBitmapID bounds the bitmap of an idSet: 1<<22 ids take 512 KiB.
const maxBitmapID = 1 << 22

func newIDSet(ids []int32) idSet {
	if len(ids) == 0 {
		return idSet{}
	}
	if top := ids[len(ids)-1]; top >= 0 && top < maxBitmapID && ids[0] >= 0 {
		bits := make([]uint64, top/64+1)
		for _, id := range ids {
			bits[id/64] |= 1 << (id % 64)
		}
		return idSet{bits: bits}
	}
	return idSet{sorted: ids}
}

// active reports whether the set restricts anything.
func (s *idSet) active() bool { return s.bits != nil || s.sorted != nil }

// has reports whether id is in the set.
func (s *idSet) has(id int32) bool {
	if s.bits != nil {
		return id >= 0 && int(id/64) < len(s.bits) && s.bits[id/64]&(1<<(id%64)) != 0
	}
	_, ok := slices.BinarySearch(s.sorted, id)
	return ok
}

func (m *Match) commPass(s uint32) bool {
	if m.commState == nil {
		return true
	}
	st := m.commState[s]
	if st == 0 {
		name := m.c.Strings[s]
		st = commSeen
		if (m.comm == "" || name == m.comm) && (m.commRe == nil || m.commRe.MatchString(name)) {
			st |= commPass
		}
		m.commState[s] = st
	}
	return st&commPass != 0
}

// Test reports whether sample i passes every criterion except the idle one,
// and whether it is idle.
func (m *Match) Test(i int) (pass, idle bool) {
	if m.c.Samples.Event[i] != m.event {
		return false, false
	}
	idle = m.sampleIdle[i/64]&(1<<(i%64)) != 0
	return m.simple || m.pass(i), idle
}

// Keep reports whether sample i passes the filter.
func (m *Match) Keep(i int) bool {
	if m.c.Samples.Event[i] != m.event || !m.idle && m.sampleIdle[i/64]&(1<<(i%64)) != 0 {
		return false
	}
	return m.simple || m.pass(i)
}

// Idle reports whether sample i is idle (see IsIdleFunc), whatever the
// filter.
func (m *Match) Idle(i int) bool { return m.sampleIdle[i/64]&(1<<(i%64)) != 0 }

// Simple reports whether the filter judges a sample by its event and
// idleness alone, as the zero Filter does, so that a hot loop can test
// Samples.Event[i] == event && (idle || !m.Idle(i)) instead of calling
// Keep.
func (m *Match) Simple() (event uint16, idle, ok bool) { return m.event, m.idle, m.simple }

// pass checks the criteria besides event and idleness.
func (m *Match) pass(i int) bool {
	s := &m.c.Samples
	if m.cpu != nil {
		cpu := s.CPU[i]
		if cpu < 0 || int(cpu) >= len(m.cpu) || !m.cpu[cpu] {
			return false
		}
	}
	if m.cpuSet.active() && !m.cpuSet.has(s.CPU[i]) ||
		m.pid.active() && !m.pid.has(s.PID[i]) ||
		m.tid.active() && !m.tid.has(s.TID[i]) {
		return false
	}
	n := s.Stack[i]
	return m.node[n]&m.onlyBit == m.onlyBit && (m.fnNode == nil || m.fnNode[n]) && m.commPass(s.Comm[i])
}

// KeepFrame reports whether frame (an index of Capture.Frames) is shown
// under the filter's Only setting.
func (m *Match) KeepFrame(frame int32) bool {
	return m.frameKeep == nil || m.frameKeep[frame]
}

// Capture returns the capture m was compiled for.
func (m *Match) Capture() *Capture { return m.c }
