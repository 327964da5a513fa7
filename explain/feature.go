package explain

import (
	"fmt"
	"strings"
)

// String names f for people: "kubelet", "kubelet in
// mem_cgroup_nr_lru_pages", "kubelet: a → b → c", "kubelet on CPU 39",
// "cpu.sys of CPU 39", "cgroups memory".
func (f Feature) String() string {
	switch f.Kind {
	case KindFunction, KindLeaf:
		return f.Comm + " in " + f.Function
	case KindStack:
		return f.Comm + ": " + strings.Join(f.Stack, " → ")
	case KindCPU:
		return fmt.Sprintf("%s on CPU %d", f.Comm, f.CPU)
	case KindKernelCore:
		return f.Comm + " pegging a CPU in the kernel"
	case KindSeries:
		s := f.Series
		if f.Label != "" {
			s += " " + f.Label
		}
		if f.CPU >= 0 {
			s += fmt.Sprintf(" of CPU %d", f.CPU)
		}
		return s
	}
	return f.Comm
}

// KindName says what sort of feature f is: "command", "command +
// function (on the stack)", "a core pegged in the kernel", "host series".
func (f Feature) KindName() string {
	return kindNames[f.Kind]
}

var kindNames = map[string]string{
	KindComm: "command", KindFunction: "command + function (on the stack)",
	KindLeaf: "command + function (the leaf)", KindStack: "stack prefix",
	KindCPU: "command + CPU", KindKernelCore: "a core pegged in the kernel",
	KindSeries: "host series",
}
