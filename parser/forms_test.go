package parser

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// formsDir holds real captures, one per perf script form, with the perf
// command lines that made them in MANIFEST.tsv.
var formsDir = filepath.Join("..", "testdata", "perf")

// scanForm reads one capture of formsDir strictly: every line must parse.
func scanForm(t *testing.T, name string) ([]subsecond.Sample, *Scanner) {
	t.Helper()
	sc := strictScanner(t, filepath.Join(formsDir, name))
	var out []subsecond.Sample
	for sc.Scan() {
		s := *sc.Sample()
		s.Frames = append([]subsecond.Frame(nil), s.Frames...)
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, sc
}

func TestFormNoTime(t *testing.T) {
	for _, tt := range []struct {
		file    string
		samples int
		chain   bool
	}{
		{"no-time-callchain.perf.txt.gz", 242, true},
		{"no-time-no-callchain.perf.txt.gz", 234, false},
	} {
		got, _ := scanForm(t, tt.file)
		if len(got) != tt.samples {
			t.Errorf("%s: %d samples; want %d", tt.file, len(got), tt.samples)
		}
		deep := 0
		for _, s := range got {
			if s.Comm != "dd" || s.TID <= 0 || s.CPU != U || s.Time != subsecond.NoTime || s.Event != "" || s.Period != 0 {
				t.Fatalf("%s line %d: sample %+v; want dd with a tid and nothing else", tt.file, s.Line, s)
			}
			if len(s.Frames) == 0 {
				t.Fatalf("%s line %d: no frames", tt.file, s.Line)
			}
			for _, f := range s.Frames {
				if f.Addr == 0 || f.Symbol == "" || f.DSO == "" || f.Offset != 0 {
					t.Fatalf("%s line %d: frame %+v; want address, symbol and DSO without offset", tt.file, s.Line, f)
				}
			}
			if len(s.Frames) > 1 {
				deep++
			}
		}
		if tt.chain != (deep > 0) {
			t.Errorf("%s: %d samples with call chains; want some: %v", tt.file, deep, tt.chain)
		}
	}
}

// TestFormInline reads the same samples printed with and without source
// lines: frame for frame they must agree, inlined frames included, and the
// source lines must be those perf printed, without the "(inlined)" marker.
func TestFormInline(t *testing.T) {
	plain, _ := scanForm(t, "inline.perf.txt.gz")
	src, _ := scanForm(t, "inline-srcline.perf.txt.gz")
	if len(plain) != 75 || len(src) != len(plain) {
		t.Fatalf("%d and %d samples; want 75 in both", len(plain), len(src))
	}
	inlined := map[string]int{}
	for i := range plain {
		a, b := plain[i], src[i]
		if len(a.Frames) != len(b.Frames) {
			t.Fatalf("sample %d: %d frames without source lines, %d with", i, len(a.Frames), len(b.Frames))
		}
		for j := range a.Frames {
			fa, fb := a.Frames[j], b.Frames[j]
			if fb.SrcLine == "" || strings.Contains(fb.SrcLine, "inlined") {
				t.Errorf("line %d frame %d: source line %q", b.Line, j, fb.SrcLine)
			}
			fb.SrcLine = ""
			if fa != fb {
				t.Errorf("line %d frame %d: %+v with source lines; want %+v as without", b.Line, j, fb, fa)
			}
			if fa.Inline {
				if fa.Kind != subsecond.KindInlined || fa.DSO != "" {
					t.Errorf("line %d: inlined frame %+v; want kind inlined without a DSO", a.Line, fa)
				}
				inlined[fa.Symbol]++
			}
		}
	}
	for _, sym := range []string{"mix", "inner", "__libc_start_main_impl"} {
		if inlined[sym] == 0 {
			t.Errorf("no inlined %s frame; got %v", sym, inlined)
		}
	}
	// The first sample as perf printed it: mix and inner inlined into
	// compute, each with its own source line.
	first := src[0].Frames
	want := []struct{ sym, src string }{{"mix", "forms.c:19"}, {"inner", "forms.c:25"}, {"compute", "forms.c:29"}, {"main", "forms.c:68"}}
	for i, w := range want {
		if first[i].Symbol != w.sym || first[i].SrcLine != w.src || first[i].Inline != (i < 2) {
			t.Errorf("first sample frame %d = %+v; want %s at %s, inlined %v", i, first[i], w.sym, w.src, i < 2)
		}
	}
	if last := first[len(first)-1]; last.Symbol != "_start" || last.SrcLine != "??:0" {
		t.Errorf("first sample's last frame = %+v; want _start at ??:0", last)
	}
}

// TestInlinedFrameIDs checks that a frame turned inlined by its source line
// shares its ID with the same frame printed as "sym (inlined)" and not with
// the same text left as a plain frame.
func TestInlinedFrameIDs(t *testing.T) {
	text := "a 1 [000] 1.000001: 5 cycles: \n" +
		"\t10 f+0x2\n" +
		"  a.c:3 (inlined)\n" +
		"\t10 f+0x2 (inlined)\n" +
		"\t10 f+0x2\n" +
		"  a.c:3\n" +
		"\t20 g+0x1 (/bin/a)\n" +
		"  a.c:9 (inlined)\n" +
		"\t20 g+0x1 (/bin/a)\n"
	sc := NewScanner(strings.NewReader(text), Options{Strict: true})
	if !sc.Scan() {
		t.Fatal(sc.Err())
	}
	fr, ids := sc.Sample().Frames, sc.FrameIDs()
	if len(fr) != 5 {
		t.Fatalf("%d frames; want 5", len(fr))
	}
	wantInline := []bool{true, true, false, true, false}
	for i, f := range fr {
		if f.Inline != wantInline[i] || (f.Kind == subsecond.KindInlined) != wantInline[i] {
			t.Errorf("frame %d = %+v; want inlined %v", i, f, wantInline[i])
		}
	}
	if ids[0] != ids[1] || ids[0] == ids[2] || ids[3] == ids[4] {
		t.Errorf("frame IDs %v; want 0 = 1 ≠ 2 and 3 ≠ 4", ids)
	}
	if fr[0].SrcLine != "a.c:3" || fr[1].SrcLine != "" || fr[3].SrcLine != "a.c:9" || fr[3].DSO != "/bin/a" {
		t.Errorf("frames %+v", fr)
	}
}

func TestFormDSOs(t *testing.T) {
	got, _ := scanForm(t, "dso-forms.perf.txt.gz")
	if len(got) != 231 {
		t.Errorf("%d samples; want 231", len(got))
	}
	kinds := map[string]subsecond.FrameKind{}
	syms := map[string]string{}
	for _, s := range got {
		for _, f := range s.Frames {
			kinds[f.DSO] = f.Kind
			if f.Kind != subsecond.KindKernel {
				syms[f.DSO] = f.Symbol
			}
		}
	}
	for dso, want := range map[string]subsecond.FrameKind{
		"/tmp/pf/w/lib dir (copy)/libspin.so": subsecond.KindUser,
		"/tmp/pf/w/libgone.so (deleted)":      subsecond.KindUser,
		"/memfd:jitcode (deleted)":            subsecond.KindUser,
		"/tmp/perf-22179.map":                 subsecond.KindJIT,
		"[kernel.kallsyms]":                   subsecond.KindKernel,
	} {
		k, ok := kinds[dso]
		if !ok || k != want {
			t.Errorf("DSO %q: kind %v (seen %v); want %v", dso, k, ok, want)
		}
	}
	if syms["/tmp/pf/w/lib dir (copy)/libspin.so"] != "lib_spin" || syms["/memfd:jitcode (deleted)"] != "[unknown]" {
		t.Errorf("symbols by DSO: %q", syms)
	}
}

func TestFormTracepointFirst(t *testing.T) {
	got, _ := scanForm(t, "tracepoint-first.perf.txt.gz")
	n := map[string]int{}
	for _, s := range got {
		n[s.Event]++
	}
	if got[0].Event != "sched:sched_switch" || n["sched:sched_switch"] != 282 || n["cpu-clock"] != 656 || len(n) != 2 {
		t.Errorf("first event %q, counts %v; want sched:sched_switch first, 282 of it and 656 cpu-clock", got[0].Event, n)
	}
	if len(got[0].Frames) == 0 || got[0].Frames[0].Symbol != "__schedule" {
		t.Errorf("first sample's frames %+v; want its call chain from __schedule, not its payload", got[0].Frames)
	}
}

// TestBareHeaders covers headers without an event (perf script -F
// comm,pid,…): a call chain must follow, and once a header with an event
// was seen, lines without one are not headers.
func TestBareHeaders(t *testing.T) {
	// A bare header followed by frames, then a line that looks like one
	// but has no call chain.
	text := "job 42 x 7 \n\t1 f (/bin/a)\n\nname 12\n\n"
	got, sc := scanAll(t, text, Options{})
	if len(got) != 1 || got[0].Comm != "job 42 x" || got[0].TID != 7 {
		t.Fatalf("got %+v; want one sample of job 42 x, tid 7", got)
	}
	if n, ws := sc.Warnings(); n != 1 || ws[0].Line != 4 || !strings.Contains(ws[0].Message, "call chain") {
		t.Errorf("warnings %d %+v; want one about line 4 having no call chain", n, ws)
	}
	_, sc = scanAll(t, text, Options{Strict: true})
	var se *SyntaxError
	if err := sc.Err(); !errors.As(err, &se) || se.Line != 4 {
		t.Errorf("strict: err = %v; want a SyntaxError at line 4", err)
	}
	// Prose with numbers is not perf script text.
	_, sc = scanAll(t, "Chapter 12\n\nVersion 2\n", Options{})
	if err := sc.Err(); !errors.Is(err, subsecond.ErrNotPerf) {
		t.Errorf("prose: err = %v; want ErrNotPerf", err)
	}
	// Inside a capture with events, an indented "word 12" is a bad stack
	// line, not a new sample.
	text = "a 1 [000] 1.000001: 5 cycles: \n\t1 f (/bin/a)\n\tfoo 12\n\n"
	got, sc = scanAll(t, text, Options{})
	if n, ws := sc.Warnings(); len(got) != 0 || n != 1 || ws[0].Line != 3 {
		t.Errorf("got %d samples, warnings %+v; want the record dropped with a warning about line 3", len(got), ws)
	}
}
