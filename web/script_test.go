package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runScript runs the pages' own TypeScript in node, for tests that check
// it against the Go it mirrors: it fills script (an ES module reading a
// JSON table on standard input and writing JSON) with the absolute paths of
// srcs (files under web/src, for its imports), bundles it with the front
// end's esbuild, runs it on in as JSON and decodes its answer into out. It
// skips t when node or esbuild (npm ci) is not installed.
func runScript(t *testing.T, script string, srcs []string, in, out any) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	esbuild, err := filepath.Abs("../node_modules/.bin/esbuild")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(esbuild); err != nil {
		t.Skip("esbuild not installed (npm ci)")
	}
	paths := make([]any, len(srcs))
	for i, s := range srcs {
		if paths[i], err = filepath.Abs(filepath.Join("src", s)); err != nil {
			t.Fatal(err)
		}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entry := filepath.Join(dir, "entry.mjs")
	if err := os.WriteFile(entry, fmt.Appendf(nil, script, paths...), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle.mjs")
	build := exec.Command(esbuild, entry, "--bundle", "--platform=node", "--format=esm", "--define:TEST_HOOKS=false", "--log-level=warning", "--outfile="+bundle)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	run := exec.Command(node, bundle)
	run.Stdin = bytes.NewReader(stdin)
	run.Stderr = os.Stderr
	b, err := run.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node's answer %q: %v", b, err)
	}
}
