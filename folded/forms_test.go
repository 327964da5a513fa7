package folded

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

// collapseForm folds one of the real captures in ../testdata/perf.
func collapseForm(t *testing.T, name string, opt Options) []string {
	t.Helper()
	return collapserOf(t, name, opt).Lines()
}

// collapserOf returns the Collapser that folded a capture of ../testdata/perf.
func collapserOf(t *testing.T, name string, opt Options) *Collapser {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "perf", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := decompress.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := parser.NewScanner(r, parser.Options{Strict: true})
	c := New(opt)
	for sc.Scan() {
		c.AddFrames(sc.Sample(), sc.FrameIDs())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// balanced reports whether s's brackets and parentheses pair up.
func balanced(s string) bool {
	var open []rune
	for _, r := range s {
		switch r {
		case '[', '(':
			open = append(open, r)
		case ']', ')':
			if len(open) == 0 || open[len(open)-1] != map[rune]rune{']': '[', ')': '('}[r] {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return len(open) == 0
}

// TestFormDSONames folds frames in a deleted DSO, a memfd, a DSO path with
// spaces and parentheses and an anonymous mapping: every name stays
// balanced, and unresolved frames are named after their DSO's file name.
func TestFormDSONames(t *testing.T) {
	for _, opt := range []Options{{}, {Addrs: true}, Options{}.All()} {
		lines := collapseForm(t, "dso-forms.perf.txt.gz", opt)
		names := map[string]bool{}
		for _, l := range lines {
			stack := l[:strings.LastIndexByte(l, ' ')]
			for _, fr := range strings.Split(stack, ";") {
				if !balanced(fr) {
					t.Errorf("%+v: unbalanced frame %q in %q", opt, fr, l)
				}
				if i := strings.Index(fr, " <"); i > 0 && opt.Addrs {
					fr = fr[:i] + "]" // [dso <addr>] → [dso]
				}
				names[strings.TrimSuffix(strings.TrimSuffix(fr, "_[j]"), "_[k]")] = true
			}
		}
		for _, want := range []string{"[libgone.so (deleted)]", "[memfd:jitcode (deleted)]", "lib_spin", "[perf-22179.map]"} {
			if !names[want] {
				t.Errorf("%+v: no frame named %q", opt, want)
			}
		}
	}
}

func TestUnknownNames(t *testing.T) {
	tests := []struct {
		dso   string
		addrs bool
		want  string
	}{
		{"/usr/lib/libc.so.6", false, "[libc.so.6]"},
		{"/memfd:name (deleted)", false, "[memfd:name (deleted)]"},
		{"/tmp/build (copy)/app (deleted)", true, "[app (deleted) <c584f>]"},
		{"[unknown]", false, "[unknown]"},
		{"", false, "[unknown]"},
		{"/srv/it's;odd", false, "[its:odd]"},
	}
	for _, tt := range tests {
		got := Names("[unknown]", tt.dso, "", 0xc584f, false, Options{Addrs: tt.addrs})
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("Names([unknown], %q) = %q; want %q", tt.dso, got, tt.want)
		}
	}
}

// TestFormInlineFolding folds the same samples printed with and without
// source lines: the stacks agree, and --srcline appends each frame's own
// source line, inlined frames included.
func TestFormInlineFolding(t *testing.T) {
	plain := collapseForm(t, "inline.perf.txt.gz", Options{})
	src := collapseForm(t, "inline-srcline.perf.txt.gz", Options{})
	if !slices.Equal(plain, src) {
		t.Errorf("folded stacks differ with source lines:\n%s\nwithout:\n%s", strings.Join(src, "\n"), strings.Join(plain, "\n"))
	}
	if !slices.ContainsFunc(plain, func(l string) bool { return strings.Contains(l, ";main;compute;inner;mix ") }) {
		t.Errorf("no stack main;compute;inner;mix in\n%s", strings.Join(plain, "\n"))
	}
	lines := collapseForm(t, "inline-srcline.perf.txt.gz", Options{SrcLine: true})
	want := ";main:forms.c:68;compute:forms.c:29;inner:forms.c:25;mix:forms.c:19 "
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }) {
		t.Errorf("no stack with %q in\n%s", want, strings.Join(lines, "\n"))
	}
}

// TestFormTracepointFirst folds a capture whose first sample is a
// sched:sched_switch tracepoint: by default the cpu-clock samples that
// follow are kept, not the tracepoints.
func TestFormTracepointFirst(t *testing.T) {
	for _, tt := range []struct {
		event, want   string
		added, period int64
	}{
		{"", "cpu-clock", 656, 1001001},
		{"cpu-clock", "cpu-clock", 656, 1001001},
		{"sched:sched_switch", "sched:sched_switch", 282, 1},
	} {
		c := collapserOf(t, "tracepoint-first.perf.txt.gz", Options{Event: tt.event})
		added, skipped := c.Counts()
		if c.Event() != tt.want || added != tt.added || skipped != 938-tt.added {
			t.Errorf("Event %q: kept %q, %d samples, %d skipped; want %q, %d, %d", tt.event, c.Event(), added, skipped, tt.want, tt.added, 938-tt.added)
		}
		var total int64
		for _, l := range c.Lines() {
			n, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		if total != tt.added*tt.period {
			t.Errorf("Event %q: folded counts sum to %d; want %d samples × period %d", tt.event, total, tt.added, tt.period)
		}
	}
}
