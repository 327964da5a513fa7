package folded

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

var update = flag.Bool("update", false, "rewrite the golden files of documented deviations")

// corpusDir is the conformance corpus: perf script inputs and the folded
// stacks reference collapsers made of them (MANIFEST.tsv; origins and
// licences in its NOTICE).
const corpusDir = "testdata/corpus"

type row struct {
	n                      int // line in MANIFEST.tsv
	input, expected, flags string
	producer, note         string
}

func (r row) inferno() bool { return strings.HasPrefix(r.expected, "expected/inferno/") }

// golden names the file holding Subsecond's own expected output for a row
// listed in deviations.
func (r row) golden() string {
	name := strings.TrimPrefix(r.expected, "expected/")
	return filepath.Join("testdata", strings.ReplaceAll(name, "/", "__"))
}

func readManifest(t *testing.T) []row {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("conformance corpus: %v", err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 5 {
			t.Fatalf("MANIFEST.tsv:%d: %d columns; want 5", n, len(c))
		}
		rows = append(rows, row{n, c[0], c[1], c[2], c[3], c[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// optionsFor turns a manifest flags column into Options.
func optionsFor(t *testing.T, flags string) Options {
	t.Helper()
	var o Options
	switch strings.Fields(flags)[0] {
	case "(default)":
	case "--pid":
		o.PID = true
	case "--tid":
		o.TID = true
	case "--kernel":
		o.Kernel = true
	case "--jit":
		o.JIT = true
	case "--all":
		o = o.All()
	case "--addrs":
		o.Addrs = true
	case "--srcline":
		o.SrcLine = true
	default:
		t.Fatalf("unknown flags %q", flags)
	}
	return o
}

// collapse runs the parser and a Collapser over a corpus input.
func collapse(t *testing.T, path string, o Options) (lines []string, warnings int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := decompress.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := parser.NewScanner(r, parser.Options{})
	c := New(o)
	for sc.Scan() {
		c.Add(sc.Sample())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	warnings, _ = sc.Warnings()
	return c.Lines(), warnings
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

func dropQuotes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.NewReplacer(`'`, "", `"`, "").Replace(l)
	}
	sort.Strings(out)
	return out
}

// diff describes how two sorted multisets of lines differ.
func diff(got, want []string) string {
	count := map[string]int{}
	for _, l := range want {
		count[l]++
	}
	for _, l := range got {
		count[l]--
	}
	var b strings.Builder
	keys := make([]string, 0, len(count))
	for l := range count {
		keys = append(keys, l)
	}
	sort.Strings(keys)
	shown := 0
	for _, l := range keys {
		n := count[l]
		if n == 0 {
			continue
		}
		if shown == 12 {
			b.WriteString("\t…\n")
			break
		}
		shown++
		if n > 0 {
			fmt.Fprintf(&b, "\t- %s (missing ×%d)\n", l, n)
		} else {
			fmt.Fprintf(&b, "\t+ %s (extra ×%d)\n", l, -n)
		}
	}
	return b.String()
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConformance runs every row of the corpus manifest. Rows either match
// the reference exactly (as sorted multisets of lines) or are listed in
// deviations, documented in docs/conformance.md, and compared with
// Subsecond's own golden output, which must differ from the reference.
func TestConformance(t *testing.T) {
	rows := readManifest(t)
	matched, documented := 0, 0
	for _, r := range rows {
		name := fmt.Sprintf("%d:%s:%s", r.n, filepath.Base(r.expected), strings.Fields(r.flags)[0])
		if r.expected == "" {
			name = fmt.Sprintf("%d:%s:warning", r.n, filepath.Base(r.input))
		}
		t.Run(name, func(t *testing.T) {
			got, warnings := collapse(t, filepath.Join(corpusDir, r.input), optionsFor(t, r.flags))
			if r.expected == "" {
				// The reference expects one warning about the bad line.
				if warnings != 1 {
					t.Errorf("warnings = %d; want 1", warnings)
				}
				matched++
				return
			}
			want := readLines(t, filepath.Join(corpusDir, r.expected))
			cmpGot := got
			if r.inferno() {
				cmpGot, want = dropQuotes(got), dropQuotes(want)
			}
			reason, deviates := deviations[r.expected]
			if !deviates {
				if !equal(cmpGot, want) {
					t.Errorf("output differs from %s (row %d, %s):\n%s", r.expected, r.n, r.note, diff(cmpGot, want))
					return
				}
				matched++
				return
			}
			if equal(cmpGot, want) {
				t.Errorf("documented deviation (%s) now matches %s; remove it from deviations and docs/conformance.md", reason, r.expected)
				return
			}
			if *update {
				if err := os.WriteFile(r.golden(), []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g := readLines(t, r.golden())
			if !equal(got, g) {
				t.Errorf("output differs from golden %s (deviation: %s):\n%s", r.golden(), reason, diff(got, g))
				return
			}
			documented++
		})
	}
	t.Logf("conformance: %d rows, %d match the reference exactly, %d documented deviations (golden), %d failing",
		len(rows), matched, documented, len(rows)-matched-documented)
}

// Reasons for documented deviations (docs/conformance.md).
const (
	devComm        = "command names keep their digit words: 'job 42 x' is job_42_x, not job (the reference takes a digit word for the pid)"
	devSyswide     = "command names keep their digit words (job_42_x), an exiting task's comm is ':-1' not its whole header line, and tid 0 is a tid (swapper-0/0, not swapper-?/0)"
	devNoCallchain = "samples recorded without call chains carry their frame on the header line; the reference prints nothing for them"
	devBadRecord   = "a sample with a malformed stack line is dropped and counted as a warning, not counted with the frames before the bad line"
	devCRLF        = "CRLF line endings are read as line endings; the reference never sees a blank separator and merges every sample into one stack"
	devJitdump     = "--jit also marks jitdump DSOs (/tmp/jitted-PID-N.so) and [JIT] frames, not only /tmp/perf-PID.map"
	devVmlinux     = "--kernel also marks versioned vmlinux (vmlinux-5.4.14-…) and kernel module (.ko) DSOs, not only paths ending in vmlinux"
	devRust        = "symbols are printed as perf printed them; legacy Rust mangling ($LT$, ::h<hash>) is not rewritten as inferno does"
	devTemplate    = "a C++ argument list is cut at the first '(' outside template arguments (std::function<int (int, int)>::operator), not inside them (std::function<int ) as stackcollapse-perf.pl does"
)

// deviations maps a manifest row's expected file to the reason Subsecond
// deliberately differs from it. docs/conformance.md explains each one.
var deviations = map[string]string{
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-addrs.txt":  devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-all.txt":    devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-jit.txt":    devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-kernel.txt": devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-pid.txt":    devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed-tid.txt":    devTemplate,
	"expected/stackcollapse-perf/inferno/cpp-stacks-std-function-collapsed.txt":        devTemplate,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-addrs.txt":                     devRust,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-all.txt":                       devRust,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-jit.txt":                       devRust,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-kernel.txt":                    devRust,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-pid.txt":                       devRust,
	"expected/inferno/perf-rust-Yamakaky-dcpu-collapsed-tid.txt":                       devRust,
	"expected/inferno/single-event-collapsed.txt":                                      devRust,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-addrs.txt":       devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-all.txt":         devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-jit.txt":         devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-kernel.txt":      devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-pid.txt":         devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed-tid.txt":         devNoCallchain,
	"expected/stackcollapse-perf/inferno/single-line-stacks-collapsed.txt":             devNoCallchain,
	"expected/stackcollapse-perf/inferno/sourcepawn-jitdump-collapsed-all.txt":         devJitdump,
	"expected/stackcollapse-perf/inferno/sourcepawn-jitdump-collapsed-jit.txt":         devJitdump,
	"expected/stackcollapse-perf/inferno/versioned-vmlinux-collapsed-all.txt":          devVmlinux,
	"expected/stackcollapse-perf/inferno/versioned-vmlinux-collapsed-kernel.txt":       devVmlinux,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-addrs.txt":         devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-all.txt":           devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-jit.txt":           devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-kernel.txt":        devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-pid.txt":           devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed-tid.txt":           devBadRecord,
	"expected/stackcollapse-perf/inferno/weird-stack-line-collapsed.txt":               devBadRecord,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-addrs.txt":          devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-all.txt":            devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-jit.txt":            devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-kernel.txt":         devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-pid.txt":            devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed-tid.txt":            devSyswide,
	"expected/stackcollapse-perf/local/a-syswide-default-collapsed.txt":                devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-addrs.txt":           devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-all.txt":             devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-jit.txt":             devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-kernel.txt":          devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-pid.txt":             devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed-tid.txt":             devSyswide,
	"expected/stackcollapse-perf/local/b-syswide-fields-collapsed.txt":                 devSyswide,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-addrs.txt":              devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-all.txt":                devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-jit.txt":                devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-kernel.txt":             devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-pid.txt":                devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed-tid.txt":                devComm,
	"expected/stackcollapse-perf/local/c-cmd-default-collapsed.txt":                    devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-addrs.txt":              devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-all.txt":                devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-jit.txt":                devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-kernel.txt":             devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-pid.txt":                devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-srcline.txt":            devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed-tid.txt":                devComm,
	"expected/stackcollapse-perf/local/d-cmd-srcline-collapsed.txt":                    devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-addrs.txt":             devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-all.txt":               devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-jit.txt":               devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-kernel.txt":            devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-pid.txt":               devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed-tid.txt":               devComm,
	"expected/stackcollapse-perf/local/f-fixed-period-collapsed.txt":                   devComm,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-addrs.txt":             devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-all.txt":               devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-jit.txt":               devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-kernel.txt":            devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-pid.txt":               devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed-tid.txt":               devNoCallchain,
	"expected/stackcollapse-perf/local/h-no-callchain-collapsed.txt":                   devNoCallchain,
	"expected/stackcollapse-perf/synthetic/crlf-funcab-cmd-head-collapsed.txt":         devCRLF,
}
