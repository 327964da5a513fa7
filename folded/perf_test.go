package folded

import (
	"bytes"
	"fmt"
	"github.com/subsecond/subsecond/symbol"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/subsecond/subsecond/parser"
)

// TestPerfReference records a real capture of a small workload with perf and
// compares Subsecond's folding of `perf script` text with perf's own
// `perf script report stackcollapse` of the same perf.data. The two differ
// in documented ways, normalised here: perf's script counts samples where
// the folded format sums periods, names unknown symbols [unknown] where the
// folded format names their DSO ([libc.so.6]), and keeps argument lists the
// folded format cuts.
func TestPerfReference(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	spin := filepath.Join(dir, "spin")
	if out, err := exec.Command("go", "build", "-o", spin, "./testdata/spin").CombinedOutput(); err != nil {
		t.Fatalf("build the workload: %v\n%s", err, out)
	}
	rec := exec.Command(perf, "record", "-F", "999", "-g", "-o", data, "--", spin)
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record is not permitted here: %v\n%s", err, out)
	}

	text, err := exec.Command(perf, "script", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	ref, err := exec.Command(perf, "script", "report", "stackcollapse", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script report stackcollapse: %v", err)
	}

	sc := parser.NewScanner(bytes.NewReader(text), parser.Options{Strict: true})
	c := New(Options{})
	samples := 0
	for sc.Scan() {
		s := sc.Sample()
		s.Period = 0 // count samples, as perf's script does
		c.AddFrames(s, sc.FrameIDs())
		samples++
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("parse perf script output: %v", err)
	}
	if samples < 50 {
		t.Fatalf("only %d samples recorded", samples)
	}

	got := normalise(c.Lines(), false)
	want := normalise(strings.Split(strings.TrimSpace(string(ref)), "\n"), true)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("folded stacks differ from perf script report stackcollapse:\n%s", diff(got, want))
	}
	if !strings.Contains(string(ref), "spinInner") || !strings.Contains(strings.Join(got, "\n"), "main.spinInner") {
		t.Errorf("the workload's spinInner frame is missing from the folded stacks:\n%s", strings.Join(got, "\n"))
	}
	t.Logf("%d samples, %d distinct stacks agree with perf's stackcollapse", samples, len(got))
}

// normalise rewrites folded lines so that the two collapsers' documented
// naming differences vanish, then merges equal stacks.
func normalise(lines []string, perfSide bool) []string {
	counts := map[string]int{}
	for _, l := range lines {
		sp := strings.LastIndexByte(l, ' ')
		if sp < 0 {
			continue
		}
		var n int
		fmt.Sscan(l[sp+1:], &n)
		frames := strings.Split(l[:sp], ";")
		for i, f := range frames {
			if i == 0 {
				continue // comm
			}
			if perfSide {
				f = symbol.Tidy(f)
			}
			if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
				f = "[unknown]"
			}
			frames[i] = f
		}
		counts[strings.Join(frames, ";")] += n
	}
	out := make([]string, 0, len(counts))
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return out
}
