package subsecond_test

import (
	"testing"

	"github.com/subsecond/subsecond"
)

// frame is a frame of a test stack: its function and kind.
type frame struct {
	sym  string
	kind subsecond.FrameKind
}

// classOf folds Class.Child over stack, root-first, from RootClass.
func classOf(stack []frame) subsecond.Class {
	c := subsecond.RootClass
	for _, f := range stack {
		c = c.Child(subsecond.SymbolClass(f.sym), f.kind)
	}
	return c
}

func TestClassChild(t *testing.T) {
	const (
		idle = subsecond.IdleStack
		kern = subsecond.AnyKernel
		user = subsecond.AnyUser
		leaf = subsecond.KernelLeaf
		all  = idle | kern | user | leaf
	)
	k, u := subsecond.KindKernel, subsecond.KindUser
	tests := []struct {
		name  string
		stack []frame // root-first
		want  subsecond.Class
	}{
		{"empty", nil, idle},
		{"user", []frame{{"main", u}, {"run", u}}, user},
		{"unknown counts as user", []frame{{"??", subsecond.KindUnknown}}, user},
		{"syscall", []frame{{"main", u}, {"do_syscall_64", k}}, user | kern | leaf},
		{"kernel under user leaf", []frame{{"do_syscall_64", k}, {"memcpy", u}}, user | kern},
		{"idle loop", []frame{{"do_idle", k}, {"default_idle", k}, {"native_safe_halt", k}}, idle | kern | leaf},
		{"idle driver prefix", []frame{{"cpuidle_enter", k}, {"intel_idle_irq", k}}, idle | kern | leaf},
		{"interrupt while idle", []frame{{"do_idle", k}, {"common_interrupt", k}, {"e1000_intr", k}}, kern | leaf},
		{"interrupt above the idle frame", []frame{{"__sysvec_apic_timer_interrupt", k}, {"do_idle", k}}, kern | leaf},
		{"user frame under idle", []frame{{"do_idle", k}, {"helper", u}}, idle | kern | user},
	}
	for _, tt := range tests {
		if got := classOf(tt.stack) & all; got != tt.want {
			t.Errorf("%s: classOf(%v) = %04b; want %04b", tt.name, tt.stack, got, tt.want)
		}
	}
}

func TestIdleSampleAndTime(t *testing.T) {
	idleStack := classOf([]frame{{"do_idle", subsecond.KindKernel}})
	sysStack := classOf([]frame{{"main", subsecond.KindUser}, {"read", subsecond.KindKernel}})
	userStack := classOf([]frame{{"main", subsecond.KindUser}})
	tests := []struct {
		c                  subsecond.Class
		pid                int32
		idleComm           bool
		idle, busy, system bool
	}{
		{idleStack, 0, false, true, false, false},
		{idleStack, 7, true, true, false, false},
		{idleStack, 7, false, false, true, true}, // not the idle task: busy in the kernel
		{sysStack, 0, true, false, true, true},
		{userStack, 0, true, false, true, false},
		{subsecond.RootClass, 0, false, true, false, false}, // the idle task without frames
		{subsecond.RootClass, 9, false, false, true, false},
	}
	for _, tt := range tests {
		idle := tt.c.IdleSample(tt.pid, tt.idleComm)
		busy, sys := tt.c.Time(idle)
		if idle != tt.idle || busy != tt.busy || sys != tt.system {
			t.Errorf("class %04b, pid %d, idle comm %v: idle %v, busy %v, system %v; want %v, %v, %v",
				tt.c, tt.pid, tt.idleComm, idle, busy, sys, tt.idle, tt.busy, tt.system)
		}
	}
}
