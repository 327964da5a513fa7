package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// corpus holds the conformance corpus's perf script inputs.
const corpus = "../../folded/testdata/corpus/inputs"

func runCmd(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, bytes.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestCollapseCommand(t *testing.T) {
	in := filepath.Join(corpus, "flamegraph", "perf-cycles-instructions-01.txt")
	out, stderr, err := runCmd(t, nil, "collapse", "--kernel", in)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		t.Fatalf("collapse printed %d lines; want many", len(lines))
	}
	if !strings.Contains(out, "\nnoploop;") || !strings.Contains(out, "_[k]") {
		t.Errorf("output does not look like kernel-annotated folded stacks: %q", lines[0])
	}
	if !strings.Contains(stderr, `kept event "instructions"`) {
		t.Errorf("stderr = %q; want a note that only instructions were kept", stderr)
	}

	// The same capture through stdin, zstd-compressed, with --event.
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw, _ := zstd.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	cycles, _, err := runCmd(t, z.Bytes(), "collapse", "--event", "cycles", "-")
	if err != nil {
		t.Fatal(err)
	}
	if cycles == "" || cycles == out {
		t.Error("--event cycles printed nothing or the same as the default event")
	}
	plain, _, err := runCmd(t, raw, "collapse", "--event=cycles:")
	if err != nil {
		t.Fatal(err)
	}
	if plain != cycles {
		t.Error("plain stdin and zstd stdin collapse differently")
	}
}

func TestCollapseCommandErrors(t *testing.T) {
	if _, _, err := runCmd(t, nil, "collapse", "no-such-file.txt"); err == nil || !strings.Contains(err.Error(), "no-such-file.txt") {
		t.Errorf("missing file: err = %v; want it named", err)
	}
	if _, _, err := runCmd(t, nil, "collapse", "a", "b"); err == nil {
		t.Error("two inputs accepted")
	}
	weird := filepath.Join(corpus, "inferno", "weird-stack-line.txt")
	_, _, err := runCmd(t, nil, "collapse", "--strict", weird)
	if err == nil || !strings.Contains(err.Error(), "line 5:") {
		t.Errorf("--strict on a malformed line: err = %v; want it to name line 5", err)
	}
	out, stderr, err := runCmd(t, nil, "collapse", weird)
	if err != nil {
		t.Fatal(err)
	}
	if out != "inline-counter;main 250000\n" || !strings.Contains(stderr, "skipped 1 malformed records") || !strings.Contains(stderr, "line 5:") {
		t.Errorf("tolerant: out %q, stderr %q", out, stderr)
	}
	if _, _, err := runCmd(t, []byte("hello world\nthis is not perf\n"), "collapse"); err == nil {
		t.Error("prose accepted as a capture")
	}
}
