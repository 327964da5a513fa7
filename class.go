package subsecond

import "strings"

// Class is what a stack node says about the samples whose stack it is, the
// one definition of a sample's classes that filters, summaries, the cores
// map and the night read (see Classes). The flags fold along the path from
// the root, so a node's class describes its whole stack: a node's class is
// its parent's Child. A Class also carries unexported bits for its
// children; test it for the flags below, never compare it whole.
type Class uint8

// Classes of a stack node.
const (
	// IdleStack: the stack passes through an idle-loop function (see
	// IsIdleFunc) and no frame is interrupt or softirq work (IsIrqFunc). A
	// sample is idle when its stack is an IdleStack and it belongs to the
	// idle task (pid 0 or a command named swapper); the empty stack is an
	// IdleStack, so an idle-task sample without frames is idle.
	IdleStack Class = 1 << iota
	// AnyKernel: some frame is a kernel frame.
	AnyKernel
	// AnyUser: some frame is not a kernel frame (user, JIT, inlined and
	// unknown frames all count as user).
	AnyUser
	// KernelLeaf: the leaf frame (the first of the leaf-first stack) is a
	// kernel frame. A busy sample with a KernelLeaf stack is the CPU's
	// system time; a busy sample without one, its user time.
	KernelLeaf
)

// Classes is a capture's classes, computed once per capture (ClassesOf):
// per stack node its Class, and per sample whether it is idle. A sample is
//   - idle when Idle(i) (see IdleStack),
//   - busy when it is not idle,
//   - system when it is busy and its node is a KernelLeaf,
//   - user when it is busy and not system.
type Classes struct {
	Nodes []Class // per stack node (Capture.Nodes)
	// Order lists the stack nodes with every parent before its children,
	// or is nil when index order already is one (see EachParentFirst).
	Order []int32
	// IdleBits has bit i%64 of word i/64 set when sample i is idle.
	IdleBits []uint64
}

// Idle reports whether sample i is idle.
func (cl *Classes) Idle(i int) bool { return cl.IdleBits[i/64]&(1<<(i%64)) != 0 }

// System reports whether sample i, whose stack node is n, is system time:
// busy with a kernel leaf.
func (cl *Classes) System(i int, n int32) bool {
	_, sys := cl.Nodes[n].Time(cl.Idle(i))
	return sys
}

// Bytes returns the memory the classes hold.
func (cl *Classes) Bytes() int64 {
	return SliceBytes(cl.Nodes) + SliceBytes(cl.Order) + SliceBytes(cl.IdleBits)
}

type classesKey struct{}

// ClassesOf returns c's classes, computed at most once per capture and
// shared by every view of it (see Derived).
func ClassesOf(c *Capture) *Classes {
	return Derived(c, classesKey{}, func() *Classes { return newClasses(c) })
}

// Class bits a node keeps for its children: whether some frame on its path
// is an idle-loop function (viaIdle) or interrupt work (viaIrq). They let
// Child compute a node's class from its parent's and its own frame's alone.
const (
	viaIdle Class = 1 << (iota + 4)
	viaIrq
)

// RootClass is the class of the root stack node, the empty stack.
const RootClass = IdleStack

// SymbolClass returns what a frame whose function is sym says of the stacks
// through it, for Child: whether sym is an idle-loop function (IsIdleFunc)
// or interrupt work (IsIrqFunc).
func SymbolClass(sym string) Class {
	var c Class
	if IsIdleFunc(sym) {
		c |= viaIdle
	}
	if IsIrqFunc(sym) {
		c |= viaIrq
	}
	return c
}

// Child returns the class of the stack node whose parent node has class c
// and whose own frame, its leaf, is of kind kind with a function of class
// sym (SymbolClass). Every classification of stacks, over a capture
// (ClassesOf) or over the tables an import grows, folds Child from
// RootClass.
func (c Class) Child(sym Class, kind FrameKind) Class {
	via := (c | sym) & (viaIdle | viaIrq)
	fl := c&(AnyKernel|AnyUser) | via
	if kind == KindKernel {
		fl |= AnyKernel | KernelLeaf
	} else {
		fl |= AnyUser
	}
	if via == viaIdle {
		fl |= IdleStack
	}
	return fl
}

// IdleSample reports whether a sample whose stack node has class c is idle:
// an IdleStack of the idle task, pid 0 or a command that names it
// (idleComm: IsIdleComm of its command).
func (c Class) IdleSample(pid int32, idleComm bool) bool {
	return c&IdleStack != 0 && (pid == 0 || idleComm)
}

// Time returns whether a sample whose stack node has class c, and which is
// idle or not (IdleSample), is busy time, and whether it is system time:
// busy with a KernelLeaf.
func (c Class) Time(idle bool) (busy, system bool) {
	return !idle, !idle && c&KernelLeaf != 0
}

func newClasses(c *Capture) *Classes {
	const seen Class = 1 << 7
	symClass := make([]Class, len(c.Strings)) // per symbol string: SymbolClass|seen
	cl := &Classes{Order: parentFirst(c.Nodes), Nodes: make([]Class, len(c.Nodes))}
	EachParentFirst(len(c.Nodes), cl.Order, func(n int32) {
		if n == 0 {
			cl.Nodes[0] = RootClass
			return
		}
		nd := &c.Nodes[n]
		fr := &c.Frames[nd.Frame]
		sc := symClass[fr.Symbol]
		if sc&seen == 0 {
			sc = SymbolClass(c.Strings[fr.Symbol]) | seen
			symClass[fr.Symbol] = sc
		}
		cl.Nodes[n] = cl.Nodes[nd.Parent].Child(sc&^seen, fr.Kind)
	})
	// Per sample: an idle stack, and the idle task (by name or pid 0).
	smp := &c.Samples
	cl.IdleBits = make([]uint64, (smp.Len()+63)/64)
	commIdle := make([]uint8, len(c.Strings)) // 0 unknown, 1 no, 2 yes
	for i, n := range smp.Stack {
		if cl.Nodes[n]&IdleStack == 0 {
			continue
		}
		pid, idleComm := smp.PID[i], false
		if pid != 0 {
			cm := smp.Comm[i]
			if commIdle[cm] == 0 {
				commIdle[cm] = 1
				if IsIdleComm(c.Strings[cm]) {
					commIdle[cm] = 2
				}
			}
			idleComm = commIdle[cm] == 2
		}
		if cl.Nodes[n].IdleSample(pid, idleComm) {
			cl.IdleBits[i/64] |= 1 << (i % 64)
		}
	}
	return cl
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

// EachParentFirst calls visit for every node index below n, parents first,
// in order (Classes.Order) or, when order is nil, in index order.
func EachParentFirst(n int, order []int32, visit func(int32)) {
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
