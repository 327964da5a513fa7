// Command testsum reads the events of `go test -json` on standard input
// and writes what a reader of the test run wants: a line per package with
// its tests passed, failed and skipped, the reasons tests were skipped,
// the output of each failed test, and a closing line with the totals:
//
//	go test -json ./... 2>&1 | go run ./internal/testsum
//	…
//	in 25 packages
//	tests: 669 passed, 0 failed, 36 skipped
//
// It exits 1 when a test or a package failed (a build error, a panic
// outside a test, a run cut short) or when no package ran, so that a make
// target piping into it fails as `go test` would. Lines that are not JSON
// (go's own messages) are copied through. It lives in internal/ because it
// is a tool of this repository's test run, not part of what subsecond ships.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	line := flag.String("line", "", "also write the closing line to this `file`")
	flag.Parse()
	s, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
	if *line != "" {
		if err := os.WriteFile(*line, []byte(s.closing()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(1)
		}
	}
	if !s.ok() {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail
	Test       string
	Elapsed    float64 // seconds
	Output     string
}

// pkg is what was seen of one package so far.
type pkg struct {
	passed, failed, skipped int
	output                  map[string][]string // each test's output lines ("" for the package's own)
	skips                   map[string][]string // skip reason → tests skipped for it
	done                    bool
}

// totals is the whole run.
type totals struct {
	passed, failed, skipped int
	packages                int // packages that finished
	brokenPackages          int // failed without a failed test: build error, panic, cut short
}

func (s totals) ok() bool { return s.failed == 0 && s.brokenPackages == 0 && s.packages > 0 }

// packagesLine is the line before the closing one: "in 25 packages", and
// how many failed outside their tests.
func (s totals) packagesLine() string {
	line := fmt.Sprintf("in %d %s", s.packages, plural(s.packages, "package"))
	if s.brokenPackages > 0 {
		line += fmt.Sprintf("; %d %s failed outside their tests", s.brokenPackages, plural(s.brokenPackages, "package"))
	}
	return line
}

// closing is the run's last line, in the plain form test-result readers
// count: "tests: 669 passed, 0 failed, 36 skipped".
func (s totals) closing() string {
	return fmt.Sprintf("tests: %d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped)
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// summarize reads go test -json events from r and writes the summary to
// w, returning the totals.
func summarize(r io.Reader, w io.Writer) (totals, error) {
	var s totals
	pkgs := map[string]*pkg{}
	builds := map[string][]string{} // import path → build output
	get := func(name string) *pkg {
		p := pkgs[name]
		if p == nil {
			p = &pkg{output: map[string][]string{}, skips: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		switch e.Action {
		case "build-output":
			builds[e.ImportPath] = append(builds[e.ImportPath], e.Output)
			continue
		case "build-fail":
			fmt.Fprintf(w, "BUILD FAIL %s\n%s", e.ImportPath, strings.Join(builds[e.ImportPath], ""))
			continue
		}
		p := get(e.Package)
		switch e.Action {
		case "output":
			p.output[e.Test] = append(p.output[e.Test], e.Output)
		case "pass", "fail", "skip":
			if e.Test != "" {
				p.test(w, e)
				continue
			}
			p.done = true
			if e.Action == "skip" {
				continue // no test files
			}
			s.packages++
			s.passed += p.passed
			s.failed += p.failed
			s.skipped += p.skipped
			p.report(w, e)
			if e.Action == "fail" && p.failed == 0 {
				s.brokenPackages++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	names := make([]string, 0, len(pkgs))
	for name, p := range pkgs {
		if !p.done {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "FAIL  %s: the run ended before the package did\n", name)
		s.brokenPackages++
	}
	fmt.Fprintln(w, s.packagesLine())
	fmt.Fprintln(w, s.closing())
	return s, nil
}

// test counts the end of one test, printing its output when it failed
// and noting its reason when it was skipped.
func (p *pkg) test(w io.Writer, e event) {
	switch e.Action {
	case "pass":
		p.passed++
	case "fail":
		p.failed++
		fmt.Fprintf(w, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
		for _, l := range p.output[e.Test] {
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(strings.TrimSpace(l), "--- ") {
				fmt.Fprint(w, l)
			}
		}
	case "skip":
		p.skipped++
		reason := skipReason(p.output[e.Test])
		p.skips[reason] = append(p.skips[reason], e.Test)
	}
	delete(p.output, e.Test)
}

// skipReason returns what a skipped test said, the message of its t.Skip:
// its output less the lines go test adds ("=== RUN", "--- SKIP"), and
// less the file:line prefix.
func skipReason(lines []string) string {
	var said []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if i := strings.Index(t, ".go:"); i > 0 && !strings.Contains(t[:i], " ") {
			if j := strings.Index(t[i:], ": "); j > 0 {
				t = t[i+j+2:]
			}
		}
		said = append(said, t)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}

// report writes the package's line, its skip reasons with the tests
// skipped for each (the first three named), and, when it failed outside
// its tests, its own output.
func (p *pkg) report(w io.Writer, e event) {
	status := "ok  "
	if e.Action == "fail" {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s  %s  %d passed, %d failed, %d skipped  %s\n", status, e.Package, p.passed, p.failed, p.skipped,
		time.Duration(e.Elapsed*float64(time.Second)).Round(10*time.Millisecond))
	reasons := make([]string, 0, len(p.skips))
	for r := range p.skips {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		tests := p.skips[r]
		names := strings.Join(tests[:min(3, len(tests))], ", ")
		if len(tests) > 3 {
			names += fmt.Sprintf(" and %d more", len(tests)-3)
		}
		fmt.Fprintf(w, "      skipped %d: %s (%s)\n", len(tests), r, names)
	}
	if e.Action == "fail" && p.failed == 0 {
		for _, l := range p.output[""] {
			fmt.Fprint(w, l)
		}
	}
}
