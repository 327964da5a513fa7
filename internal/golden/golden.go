// Package golden checks generated files against what their generator
// gives now: a test builds the file's bytes and calls Check, which fails
// with the command that regenerates it when the committed file differs,
// and rewrites the file instead when update is set (a test's -update
// flag).
//
//	golden.Check(t, "../web/src/links.ts", linksTS(), *update, "go test ./link -run TestLinksTS -update")
package golden

import (
	"bytes"
	"os"
	"testing"
)

// Check compares the file at path with want. With update it first writes
// want to path. On a difference it reports both texts and regen, the
// command that rewrites the file.
func Check(t testing.TB, path string, want []byte, update bool, regen string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what its generator gives; run %s\ngot:\n%s\nwant:\n%s", path, regen, got, want)
	}
}
