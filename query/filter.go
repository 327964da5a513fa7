package query

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
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
//   - its cgroup path matches Cgroup (when set; a capture recorded without
//     cgroups has the empty path, which only an expression such as ^$
//     matches);
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
	Cgroup    string // a regular expression over the sample's cgroup path
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

// Match is a Filter compiled against one Capture: it answers per sample with
// array lookups, never a map. Per stack node it knows whether the stack is
// idle, matches Function and has a frame of the Only kind; per command string
// it caches the Comm/CommRegex verdict. What does not depend on the filter
// (per-frame and per-node idle, interrupt and kernel flags) is computed once
// per capture and shared by every Match. A Match is for one query and one
// goroutine.
type Match struct {
	c         *subsecond.Capture
	event     uint16
	comm      string
	commRe    *regexp.Regexp
	commState []uint8           // per string: 0 unknown, else commSeen|commPass?
	node      []subsecond.Class // per stack node, shared: subsecond.ClassesOf
	frameKeep []bool            // per frame, shared: shown under Only (nil: all)
	idle      bool
	// sampleIdle, shared, has bit i set when sample i is idle.
	sampleIdle []uint64
	// tests are the active criteria's per-sample tests; with none the
	// filter is simple, judging by the event and idleness alone.
	tests []func(i int) bool
}

const (
	commSeen = 1 << iota
	commPass
)

// frameKinds says per frame (Capture.Frames) whether Only shows it: kernel
// for "kernel", user for "user" (every frame that is not a kernel frame).
type frameKinds struct {
	kernel, user []bool
}

type frameKindsKey struct{}

// Bytes returns the memory the flags hold.
func (k *frameKinds) Bytes() int64 {
	return subsecond.SliceBytes(k.kernel) + subsecond.SliceBytes(k.user)
}

// frameKindsOf returns c's frameKinds, computed once per capture.
func frameKindsOf(c *subsecond.Capture) *frameKinds {
	return subsecond.Derived(c, frameKindsKey{}, func() *frameKinds {
		k := &frameKinds{kernel: make([]bool, len(c.Frames)), user: make([]bool, len(c.Frames))}
		for i, fr := range c.Frames {
			k.kernel[i] = fr.Kind == subsecond.KindKernel
			k.user[i] = !k.kernel[i]
		}
		return k
	})
}

// Compile prepares f for fast per-sample answers on c. Errors wrap
// ErrInvalid and name the bad parameter.
func (f Filter) Compile(c *subsecond.Capture) (*Match, error) {
	m := &Match{c: c, idle: f.Idle}
	cl := subsecond.ClassesOf(c)
	m.node, m.sampleIdle = cl.Nodes, cl.IdleBits
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
	for _, cr := range criteria {
		test, err := cr.compile(&f, m, cl)
		if err != nil {
			return nil, err
		}
		if test != nil {
			m.tests = append(m.tests, test)
		}
	}
	return m, nil
}

// matchFields are the Filter fields that every Match applies itself, in
// Test, Keep and the fast path Simple offers: the event and idleness.
var matchFields = []string{"Event", "Idle"}

// criterion is one of a filter's tests besides its event and idleness:
// the Filter fields it reads, and how it compiles against a capture. Its
// compile returns nil when the filter does not restrict those fields, else
// the per-sample test. A filter is simple (Match.Simple) when no criterion
// returns a test, so a new Filter field goes into this list (the test
// TestCriteriaCoverFilter fails until it does) and then counts everywhere,
// fast paths included.
type criterion struct {
	fields  []string
	compile func(f *Filter, m *Match, cl *subsecond.Classes) (func(i int) bool, error)
}

// criteria are the filter's tests beyond event and idleness.
var criteria = []criterion{
	{fields: []string{"CPUs"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		cpus := m.c.Samples.CPU
		if n := len(f.CPUs); n > 0 && f.CPUs[n-1] < 1<<16 {
			in := make([]bool, f.CPUs[n-1]+1)
			for _, id := range f.CPUs {
				in[id] = true
			}
			return func(i int) bool {
				cpu := cpus[i]
				return cpu >= 0 && int(cpu) < len(in) && in[cpu]
			}, nil
		}
		return newIDSet(f.CPUs).test(cpus), nil // ids too large for a slice
	}},
	{fields: []string{"PIDs"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		return newIDSet(f.PIDs).test(m.c.Samples.PID), nil
	}},
	{fields: []string{"TIDs"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		return newIDSet(f.TIDs).test(m.c.Samples.TID), nil
	}},
	{fields: []string{"Comm", "CommRegex"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		var err error
		if m.commRe, err = compileParam("comm_regex", f.CommRegex); err != nil || f.Comm == "" && m.commRe == nil {
			return nil, err
		}
		m.comm = f.Comm
		m.commState = make([]uint8, len(m.c.Strings))
		comms := m.c.Samples.Comm
		return func(i int) bool { return m.commPass(comms[i]) }, nil
	}},
	{fields: []string{"Function"}, compile: func(f *Filter, m *Match, cl *subsecond.Classes) (func(int) bool, error) {
		re, err := compileParam("function", f.Function)
		if re == nil || err != nil {
			return nil, err
		}
		fn, stacks := functionNodes(m.c, cl.Order, re), m.c.Samples.Stack
		return func(i int) bool { return fn[stacks[i]] }, nil
	}},
	{fields: []string{"Cgroup"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		re, err := compileParam("cgroup", f.Cgroup)
		if re == nil || err != nil {
			return nil, err
		}
		state := make([]uint8, len(m.c.Strings)) // per string: 0 unknown, 1 no, 2 yes
		cgroups := m.c.Samples.Cgroup
		return func(i int) bool {
			s := cgroups[i]
			if state[s] == 0 {
				state[s] = 1
				if re.MatchString(m.c.Strings[s]) {
					state[s] = 2
				}
			}
			return state[s] == 2
		}, nil
	}},
	{fields: []string{"Only"}, compile: func(f *Filter, m *Match, _ *subsecond.Classes) (func(int) bool, error) {
		var bit subsecond.Class
		switch f.Only {
		case "":
			return nil, nil
		case "kernel":
			bit, m.frameKeep = subsecond.AnyKernel, frameKindsOf(m.c).kernel
		case "user":
			bit, m.frameKeep = subsecond.AnyUser, frameKindsOf(m.c).user
		default:
			return nil, Invalidf("only", "%q is not kernel or user", f.Only)
		}
		node, stacks := m.node, m.c.Samples.Stack
		return func(i int) bool { return node[stacks[i]]&bit == bit }, nil
	}},
}

// functionNodes reports per stack node whether some frame on its path has a
// symbol that re matches. Each distinct symbol is matched once.
func functionNodes(c *subsecond.Capture, order []int32, re *regexp.Regexp) []bool {
	const (
		seen  = 1
		match = 2
	)
	sym := make([]uint8, len(c.Strings))
	out := make([]bool, len(c.Nodes))
	subsecond.EachParentFirst(len(c.Nodes), order, func(n int32) {
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

// test returns the per-sample test that col[i] is in the set, nil when the
// set restricts nothing.
func (s idSet) test(col []int32) func(i int) bool {
	if !s.active() {
		return nil
	}
	return func(i int) bool { return s.has(col[i]) }
}

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
	return m.pass(i), idle
}

// Keep reports whether sample i passes the filter.
func (m *Match) Keep(i int) bool {
	if m.c.Samples.Event[i] != m.event || !m.idle && m.sampleIdle[i/64]&(1<<(i%64)) != 0 {
		return false
	}
	return m.pass(i)
}

// Idle reports whether sample i is idle (see IsIdleFunc), whatever the
// filter.
func (m *Match) Idle(i int) bool { return m.sampleIdle[i/64]&(1<<(i%64)) != 0 }

// Simple reports whether the filter judges a sample by its event and
// idleness alone, as the zero Filter does, so that a hot loop can test
// Samples.Event[i] == event && (idle || !m.Idle(i)) instead of calling
// Keep.
func (m *Match) Simple() (event uint16, idle, ok bool) { return m.event, m.idle, len(m.tests) == 0 }

// pass checks the criteria besides event and idleness.
func (m *Match) pass(i int) bool {
	for _, t := range m.tests {
		if !t(i) {
			return false
		}
	}
	return true
}

// KeepFrame reports whether frame (an index of Capture.Frames) is shown
// under the filter's Only setting.
func (m *Match) KeepFrame(frame int32) bool {
	return m.frameKeep == nil || m.frameKeep[frame]
}

// Capture returns the capture m was compiled for.
func (m *Match) Capture() *subsecond.Capture { return m.c }
