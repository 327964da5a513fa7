package symbol_test

import (
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/symbol"
)

func TestNames(t *testing.T) {
	tests := []struct {
		sym, dso string
		kind     subsecond.FrameKind
		java     bool
		o        symbol.Options
		want     string
	}{
		{"main", "/bin/x", subsecond.KindUser, false, symbol.Options{}, "main"},
		{"[unknown]", "/usr/lib/libc.so.6", subsecond.KindUser, false, symbol.Options{}, "[libc.so.6]"},
		{"[unknown]", "[unknown]", subsecond.KindUnknown, false, symbol.Options{}, "[unknown]"},
		{"[unknown]", "/usr/lib/libc.so.6", subsecond.KindUser, false, symbol.Options{Addrs: true}, "[libc.so.6 <1234>]"},
		{"a;b", "", subsecond.KindUser, false, symbol.Options{}, "a:b"},
		{"Foo<T>::bar(int) const", "", subsecond.KindUser, false, symbol.Options{}, "Foo<T>::bar"},
		{"std::function<int (int, int)>::operator()(int, int) const", "", subsecond.KindUser, false, symbol.Options{}, "std::function<int (int, int)>::operator"},
		{"operator<<(std::ostream&)", "", subsecond.KindUser, false, symbol.Options{}, "operator<<"},
		{"(anonymous namespace)::f", "", subsecond.KindUser, false, symbol.Options{}, "(anonymous namespace)::f"},
		{`say "hi"`, "", subsecond.KindUser, false, symbol.Options{}, "say hi"},
		{"main.(*T).Run", "/bin/x", subsecond.KindUser, false, symbol.Options{}, "main.(*T).Run"},
		{"inl_a->inl_b", "/bin/x", subsecond.KindUser, false, symbol.Options{}, "inl_a;inl_b_[i]"},
		{"Ljava/lang/Thread;::run", "/tmp/perf-1.map", subsecond.KindJIT, true, symbol.Options{JIT: true}, "java/lang/Thread:::run_[j]"},
		{"do_syscall_64", "[kernel.kallsyms]", subsecond.KindKernel, false, symbol.Options{Kernel: true}, "do_syscall_64_[k]"},
		{"do_syscall_64", "[kernel.kallsyms]", subsecond.KindKernel, false, symbol.Options{}, "do_syscall_64"},
		{"__vdso_clock_gettime", "[vdso]", subsecond.KindUser, false, symbol.Options{Kernel: true}, "__vdso_clock_gettime_[k]"},
	}
	for _, tt := range tests {
		got := strings.Join(symbol.Names(tt.sym, tt.dso, "", 0x1234, tt.kind, tt.java, tt.o), ";")
		if got != tt.want {
			t.Errorf("Names(%q, %q, %v, java=%v, %+v) = %q; want %q", tt.sym, tt.dso, tt.kind, tt.java, tt.o, got, tt.want)
		}
	}
	if got := symbol.Names("leaf", "/bin/a", "a.c:12 [libc.so.6][27b25]", 0, subsecond.KindUser, false, symbol.Options{SrcLine: true}); got[0] != "leaf:a.c:12" {
		t.Errorf("Names with a source line = %q; want leaf:a.c:12", got)
	}
	if got := symbol.Comm("nccl proxy"); got != "nccl_proxy" {
		t.Errorf("Comm(nccl proxy) = %q; want nccl_proxy", got)
	}
	if got := symbol.Tidy("f(int);g"); got != "f" {
		t.Errorf("Tidy(f(int);g) = %q; want f", got)
	}
}
