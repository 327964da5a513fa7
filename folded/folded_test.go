package folded

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

func sample(comm string, period uint64, leafFirst ...string) *subsecond.Sample {
	s := &subsecond.Sample{Comm: comm, PID: 10, TID: 11, Period: period, Event: "cycles"}
	for _, f := range leafFirst {
		sym, dso, _ := strings.Cut(f, "@")
		s.Frames = append(s.Frames, subsecond.Frame{Symbol: sym, DSO: dso, Addr: 0x1234})
	}
	return s
}

func TestNames(t *testing.T) {
	tests := []struct {
		sym, dso string
		java     bool
		o        Options
		want     string
	}{
		{"main", "/bin/a", false, Options{}, "main"},
		{"[unknown]", "/usr/lib/libc.so.6", false, Options{}, "[libc.so.6]"},
		{"[unknown]", "[unknown]", false, Options{}, "[unknown]"},
		{"[unknown]", "[unknown]", false, Options{Addrs: true}, "[unknown <1234>]"},
		{"[unknown]", "[kernel.kallsyms]", false, Options{}, "[[kernel.kallsyms]]"},
		{"foo(int, char*)", "/bin/a", false, Options{}, "foo"},
		{"net/http.(*Client).Do", "/bin/a", false, Options{}, "net/http.(*Client).Do"},
		{"(anonymous namespace)::f(int)", "/bin/a", false, Options{}, "(anonymous namespace)::f"},
		{`RegExp:[&<>"']`, "/tmp/perf-1.map", false, Options{}, "RegExp:[&<>]"},
		{"Lorg/x/Y;.call(Lorg/x/Z;)V", "/tmp/perf-1.map", true, Options{JIT: true}, "org/x/Y:.call_[j]"},
		{"Lorg/x/Y;.call(Lorg/x/Z;)V", "/tmp/perf-1.map", false, Options{}, "Lorg/x/Y:.call"},
		{"A->B->C", "/tmp/perf-1.map", false, Options{JIT: true}, "A_[j];B_[i];C_[i]"},
		{"schedule", "[kernel.kallsyms]", false, Options{Kernel: true}, "schedule_[k]"},
		{"tcp_sendmsg", "/boot/vmlinux-6.1.0", false, Options{Kernel: true}, "tcp_sendmsg_[k]"},
		{"__vdso_time", "[vdso]", false, Options{Kernel: true}, "__vdso_time_[k]"},
		{"fib", "/tmp/jitted-12-3.so", false, Options{JIT: true}, "fib_[j]"},
		{"main", "/bin/a", false, Options{Kernel: true, JIT: true}, "main"},
		{"", "/lib/libc.so", false, Options{}, " "},
		{"std::function<int (int, int)>::operator()(int, int) const", "/bin/a", false, Options{}, "std::function<int (int, int)>::operator"},
		{"std::operator<< <std::char_traits<char> >(std::ostream&, char const*)", "/bin/a", false, Options{}, "std::operator<< <std::char_traits<char> >"},
		{"Foo::operator<(Foo const&) const", "/bin/a", false, Options{}, "Foo::operator<"},
		{"Foo::operator->() const", "/bin/a", false, Options{}, "Foo::operator->"},
		{"Foo::operator<=>(Foo const&)", "/bin/a", false, Options{}, "Foo::operator<=>"},
		{"Foo::operator>>=(int)", "/bin/a", false, Options{}, "Foo::operator>>="},
		{"a>b(c)", "/bin/a", false, Options{}, "a>b"},
		{"unbalanced<(x)", "/bin/a", false, Options{}, "unbalanced<(x)"},
	}
	for _, tt := range tests {
		got := strings.Join(Names(tt.sym, tt.dso, "", 0x1234, tt.java, tt.o), ";")
		if got != tt.want {
			t.Errorf("Names(%q, %q, java=%v, %+v) = %q; want %q", tt.sym, tt.dso, tt.java, tt.o, got, tt.want)
		}
	}
	if got := Names("leaf", "/bin/a", "  [kernel.kallsyms][ff]  ", 0, false, Options{SrcLine: true}); got[0] != "leaf" {
		t.Errorf("srcline of bracketed parts only = %q; want leaf", got)
	}
	if got := Names("leaf", "/bin/a", "a.c:12", 0, false, Options{SrcLine: true}); got[0] != "leaf:a.c:12" {
		t.Errorf("srcline = %q; want leaf:a.c:12", got)
	}
}

func TestCollapser(t *testing.T) {
	c := New(Options{TID: true})
	c.Add(sample("V8 WorkerThread", 5, "leaf@/bin/a", "main@/bin/a"))
	c.Add(sample("V8 WorkerThread", 7, "leaf@/bin/a", "main@/bin/a"))
	c.Add(sample("V8 WorkerThread", 0, "main@/bin/a")) // no period counts 1
	other := sample("x", 100, "main@/bin/a")
	other.Event = "instructions"
	c.Add(other)
	got := strings.Join(c.Lines(), "\n")
	want := "V8_WorkerThread-10/11;main 1\nV8_WorkerThread-10/11;main;leaf 12"
	if got != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got, want)
	}
	if added, skipped := c.Counts(); added != 3 || skipped != 1 || c.Event() != "cycles" {
		t.Errorf("Counts = %d, %d, event %q; want 3, 1, cycles", added, skipped, c.Event())
	}
}

// TestSortOrder checks that the name-by-name comparison orders lines exactly
// as a byte comparison of the rendered lines, including names that are
// prefixes of each other and names holding spaces and punctuation.
func TestSortOrder(t *testing.T) {
	names := []string{"foo", "foo.bar", "foo bar", "fo", "foo;x", "foo9", "a", "a b", "a!", "b", "foo 1"}
	c := New(Options{})
	n := 0
	for _, x := range names {
		for _, y := range names {
			n++
			c.Add(sample("p", uint64(n), x+"@/bin/a"))
			c.Add(sample("p", uint64(n), y+"@/bin/a", x+"@/bin/a"))
			c.Add(sample("p", uint64(n), "z@/bin/a", y+"@/bin/a", x+"@/bin/a"))
		}
	}
	lines := c.Lines()
	if !sort.StringsAreSorted(lines) {
		for i := 1; i < len(lines); i++ {
			if lines[i-1] > lines[i] {
				t.Fatalf("out of order:\n%q\n%q", lines[i-1], lines[i])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != strings.Join(lines, "\n")+"\n" {
		t.Error("WriteTo and Lines disagree")
	}
	if c.Len() != len(lines) {
		t.Errorf("Len = %d; want %d", c.Len(), len(lines))
	}
}

// TestAddFramesMatchesAdd checks that the ID-cached path folds exactly as
// the by-value path.
func TestAddFramesMatchesAdd(t *testing.T) {
	a, b := New(Options{Kernel: true}), New(Options{Kernel: true})
	for i := range 200 {
		s := sample(fmt.Sprintf("java%d", i%3), uint64(i), fmt.Sprintf("Lx/F%d;.m@/tmp/perf-1.map", i%7), "k@[kernel.kallsyms]", "main@/bin/a")
		ids := []uint32{uint32(i % 7), 100, 101}
		a.Add(s)
		b.AddFrames(s, ids)
	}
	if x, y := strings.Join(a.Lines(), "\n"), strings.Join(b.Lines(), "\n"); x != y {
		t.Errorf("Add:\n%s\nAddFrames:\n%s", x, y)
	}
}
