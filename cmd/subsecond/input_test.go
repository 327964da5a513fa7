package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

// fakePerf puts a perf on PATH that runs script as a shell script with the
// arguments given to perf, and returns the directory it is in.
func fakePerf(t *testing.T, script string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "perf"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// perfDataFile writes a file that starts as a perf.data file does.
func perfDataFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(p, []byte("PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPerfDataThroughPerfScript gives perf.data files where perf script text
// is expected: perf (a fake that checks its arguments) converts them,
// streamed, and the commands say so; a failing perf is reported with its
// message; without perf the error gives the command to run.
func TestPerfDataThroughPerfScript(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(corpus, "flamegraph", "perf-funcab-cmd-01.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := runCmd(t, text, "collapse", "-")
	if err != nil || want == "" {
		t.Fatalf("collapse of the text: %q, %v", want, err)
	}
	data := perfDataFile(t)
	textFile := filepath.Join(t.TempDir(), "capture.txt")
	os.WriteFile(textFile, text, 0o644)
	fakePerf(t, `[ "$1 $2 $3 $4" = "script --header -i `+data+`" ] || { echo "unexpected arguments: $*" >&2; exit 2; }
cat `+textFile+"\n")

	got, stderr, err := runCmd(t, nil, "collapse", data)
	note := "subsecond: " + data + " is a perf.data file; reading it through perf script --header -i " + data + "\n"
	if err != nil || got != want || stderr != note {
		t.Errorf("collapse perf.data = %q, stderr %q, %v; want the text's folded stacks and the note %q", got, stderr, err, note)
	}
	db := filepath.Join(t.TempDir(), "s.db")
	out, stderr, err := runStoreCmd(t, "", "import", "--db", db, data)
	if err != nil || !strings.Contains(out, "perf.data: ") || !strings.Contains(stderr, "reading it through perf script --header -i "+data) {
		t.Errorf("import perf.data: %q, stderr %q, %v; want it stored, with the note", out, stderr, err)
	}
	if out, _, err := runCmd(t, nil, "heatmap", "--format", "csv", data); err != nil || !strings.HasPrefix(out, "col,row,") {
		t.Errorf("heatmap of perf.data: %.80q, %v", out, err)
	}

	// perf fails: its exit status and message end the command.
	fakePerf(t, "echo 'incompatible file format' >&2; exit 255\n")
	if _, _, err := runCmd(t, nil, "collapse", data); err == nil ||
		!strings.Contains(err.Error(), "perf script --header -i "+data+" failed (exit status 255): incompatible file format") {
		t.Errorf("collapse with a failing perf: %v; want perf's status and message", err)
	}

	// No perf: the error says what to run.
	t.Setenv("PATH", t.TempDir())
	_, _, err = runCmd(t, nil, "collapse", data)
	if err == nil || !strings.Contains(err.Error(), "perf is not installed here") || !strings.Contains(err.Error(), "perf script --header -i "+data+" > "+data+".txt") {
		t.Errorf("collapse without perf: %v; want the perf script command", err)
	}
}

// TestPerfDataRecorded records a real perf.data when perf may, and imports
// it: the conversion through the real perf script yields its samples.
func TestPerfDataRecorded(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	data := filepath.Join(t.TempDir(), "perf.data")
	rec := exec.Command(perf, "record", "-F", "999", "-g", "-o", data, "--", "sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record is not permitted here: %v\n%s", err, out)
	}
	out, stderr, err := runCmd(t, nil, "collapse", data)
	if err != nil || !strings.Contains(out, "sh;") || !strings.Contains(stderr, "reading it through perf script") {
		t.Errorf("collapse of a recorded perf.data: %.200q, stderr %q, %v; want sh's stacks", out, stderr, err)
	}
}

// TestPerfDataWallClockUTC imports real perf.data files, one recorded with
// -k CLOCK_REALTIME and one with perf's default clock, with TZ set to New
// York and to UTC: perf script prints "# captured on" and the reference
// time in the local zone, so the conversion must run it in UTC for the
// wall clock (and the stored text) not to depend on TZ.
func TestPerfDataWallClockUTC(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not installed")
	}
	for _, file := range []string{"realtime.perf.data", "default-clock.perf.data"} {
		data := filepath.Join("..", "..", "testdata", "perf", file)
		type result struct {
			start      int64
			capturedOn string
			sha        string
		}
		got := map[string]result{}
		for _, tz := range []string{"America/New_York", "UTC"} {
			t.Setenv("TZ", tz)
			db := filepath.Join(t.TempDir(), "tz.db")
			if _, stderr, err := runCmd(t, nil, "import", "--db", db, data); err != nil {
				t.Fatalf("import %s with TZ=%s: %v\n%s", file, tz, err, stderr)
			}
			out, _, err := runCmd(t, nil, "list", "--db", db, "--format", "json")
			if err != nil {
				t.Fatal(err)
			}
			var list struct{ Profiles []subsecond.Profile }
			if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Profiles) != 1 {
				t.Fatalf("list: %v, %d profiles\n%s", err, len(list.Profiles), out)
			}
			p := list.Profiles[0]
			if !p.Wall.Known() {
				t.Fatalf("%s: no wall clock: %+v", file, p.Wall)
			}
			got[tz] = result{p.Wall.Wall(p.Start), p.Meta.CapturedOn, p.Digest}
		}
		ny, utc := got["America/New_York"], got["UTC"]
		if ny.start != utc.start {
			t.Errorf("%s: wall-clock start with TZ=America/New_York %v; with TZ=UTC %v",
				file, time.Unix(0, ny.start).UTC(), time.Unix(0, utc.start).UTC())
		}
		if ny.capturedOn != utc.capturedOn || ny.sha != utc.sha {
			t.Errorf("%s: captured on %q (text %.8s) with TZ=America/New_York; %q (text %.8s) with TZ=UTC",
				file, ny.capturedOn, ny.sha, utc.capturedOn, utc.sha)
		}
	}
}
