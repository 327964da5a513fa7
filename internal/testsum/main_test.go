package main

import (
	"strings"
	"testing"
)

// TestSummarize feeds summarize the events of a small run: a package with
// a pass, a skip and a failure, and a package that failed to build.
func TestSummarize(t *testing.T) {
	in := `{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0.01}
{"Action":"run","Package":"ex/a","Test":"TestDB/postgres"}
{"Action":"output","Package":"ex/a","Test":"TestDB/postgres","Output":"=== RUN   TestDB/postgres\n"}
{"Action":"output","Package":"ex/a","Test":"TestDB/postgres","Output":"    db_test.go:12: no server\n"}
{"Action":"output","Package":"ex/a","Test":"TestDB/postgres","Output":"--- SKIP: TestDB/postgres (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestDB/postgres"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"    bad_test.go:3: F(1) = 2; want 3\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBad","Elapsed":0.02}
{"Action":"fail","Package":"ex/a","Elapsed":0.5}
go: downloading example.com/x v1.0.0
{"Action":"build-output","ImportPath":"ex/b","Output":"b.go:1: syntax error\n"}
{"Action":"build-fail","ImportPath":"ex/b"}
{"Action":"fail","Package":"ex/b","Elapsed":0}
`
	var out strings.Builder
	s, err := summarize(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"--- FAIL: ex/a TestBad (0.02s)\n    bad_test.go:3: F(1) = 2; want 3\n",
		"FAIL  ex/a  1 passed, 1 failed, 1 skipped  500ms\n",
		"      skipped 1: no server (TestDB/postgres)\n",
		"go: downloading example.com/x v1.0.0\n",
		"BUILD FAIL ex/b\nb.go:1: syntax error\n",
		"FAIL  ex/b  0 passed, 0 failed, 0 skipped  0s\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	last := out.String()[strings.LastIndex(strings.TrimSuffix(out.String(), "\n"), "\n")+1:]
	if want := "tests: 1 passed, 1 failed, 1 skipped\n"; last != want || !strings.Contains(out.String(), "\nin 2 packages; 1 package failed outside their tests\n") {
		t.Errorf("closing line = %q; want %q", last, want)
	}
	if s.ok() {
		t.Errorf("ok() = true after a failure; want false")
	}
	if s, _ := summarize(strings.NewReader(""), &out); s.ok() {
		t.Errorf("ok() = true for a run with no package; want false")
	}
}
