package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/decompress"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// TestGenerateCommand writes plain, gzip and zstd captures and checks each
// file's text against the truth written beside it.
func TestGenerateCommand(t *testing.T) {
	dir := t.TempDir()
	var hashes []string
	for _, name := range []string{"g.txt", "g2.txt.gz", "g3.txt.zst"} {
		out := filepath.Join(dir, name)
		_, stderr, err := runCmd(t, nil, "generate", "--cpus", "8", "--seconds", "4", "--seed", "5", "--nic-cpus", "2-3", "-o", out)
		if err != nil {
			t.Fatalf("generate -o %s: %v", name, err)
		}
		if !strings.Contains(stderr, "1568 samples") {
			t.Errorf("stderr = %q; want the sample count, 1568 (8 CPUs × 4 s × 49 Hz)", stderr)
		}
		tb, err := os.ReadFile(strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".zst") + ".truth.json")
		if err != nil {
			t.Fatal(err)
		}
		var truth sampledata.Truth
		if err := json.Unmarshal(tb, &truth); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		io.ReadFull(f, head)
		f.Seek(0, io.SeekStart)
		want := map[string]decompress.Format{".txt": decompress.Plain, ".gz": decompress.Gzip, ".zst": decompress.Zstd}[filepath.Ext(name)]
		if got := decompress.Detect(head); got != want {
			t.Errorf("%s is %v; want %v", name, got, want)
		}
		r, err := decompress.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		if sum != truth.SHA256 || n != truth.Bytes || truth.Samples != 1568 {
			t.Errorf("%s: %d bytes, sha256 %s; truth %d bytes, %s, %d samples", name, n, sum, truth.Bytes, truth.SHA256, truth.Samples)
		}
		if truth.Config.IncidentCPU != 3 || len(truth.Incidents) == 0 || truth.Incidents[0].CPU != 3 {
			t.Errorf("%s: incident on CPU %d, windows %+v; want CPU 3 (39/96 of 8 CPUs)", name, truth.Config.IncidentCPU, truth.Incidents)
		}
		hashes = append(hashes, sum)
	}
	if hashes[0] != hashes[1] || hashes[1] != hashes[2] {
		t.Errorf("the same flags gave different text per compression: %v", hashes)
	}
	if _, err := os.Stat(filepath.Join(dir, "g.txt.tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpus", "0"}, "cpus = 0"},
		{[]string{"--cpus", "8", "--incident-cpu", "8"}, "incident cpu 8"},
		{[]string{"--nic-cpus", "5-2"}, "--nic-cpus"},
		{[]string{"--nic-cpus", "x"}, "--nic-cpus"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		_, _, err := runCmd(t, nil, append([]string{"generate"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("generate %v: error %v; want one containing %q", tt.args, err, tt.want)
		}
	}
}

// TestGenerateBundledFlags holds the command that made the bundled incident
// capture, as sample-data/README.md gives it, to the configuration its
// truth file records (which TestIncidentRegenerates holds to its bytes).
func TestGenerateBundledFlags(t *testing.T) {
	readme, err := os.ReadFile("../../sample-data/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(readme), "\n") {
		if _, cmd, ok := strings.Cut(line, "go run ./cmd/subsecond generate "); ok {
			if args, err = shellWords(cmd); err != nil {
				t.Fatal(err)
			}
		}
	}
	if args == nil {
		t.Fatal("sample-data/README.md gives no 'go run ./cmd/subsecond generate' command")
	}
	g := newGenerateFlags()
	if err := g.fs.Parse(args); err != nil || g.fs.NArg() > 0 {
		t.Fatalf("generate %s: %v, arguments %q", strings.Join(args, " "), err, g.fs.Args())
	}
	cfg, err := g.config()
	if err != nil {
		t.Fatal(err)
	}
	truth, err := sampledata.IncidentTruth()
	if err != nil {
		t.Fatal(err)
	}
	want := truth.Config
	// The truth records the NIC cores the default (CPUs/3 up to CPUs/2) chose.
	if !reflect.DeepEqual(want.NICCPUs, []int{32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47}) {
		t.Fatalf("bundled NIC cores %v; want the default 32-47", want.NICCPUs)
	}
	want.NICCPUs = nil
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("generate %s gives\n%+v\nthe bundled capture was made with\n%+v", strings.Join(args, " "), cfg, want)
	}
}

// TestGenerateHostAndTime checks that generated captures carry a host and
// a time of their own, away from the bundled incident's gpu-node-17 in
// March 2025, and that consecutive --start-times make consecutive captures
// of one host on its timeline.
func TestGenerateHostAndTime(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "gen.db")
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if _, _, err := runCmd(t, nil, "generate", "--cpus", "4", "--seconds", "4", "-o", a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, nil, "generate", "--cpus", "4", "--seconds", "4", "--seed", "2", "--start-time", "2026-01-01T02:00:04Z", "-o", b); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# captured on    : Thu Jan  1 02:00:04 2026\n", "# hostname : synthetic-gpu-node\n", "\n# ========\n#\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("generated header lacks %q:\n%.600s", want, text)
		}
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, a, b); err != nil {
		t.Fatal(err)
	}
	out, _, err := runStoreCmd(t, "", "timeline", "--db", db, "--host", "synthetic-gpu-node", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Captures []struct {
			Start int64 `json:"start_ns"`
			End   int64 `json:"end_ns"`
		} `json:"captures"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).UnixNano()
	near := func(got, want int64) bool { return got > want-int64(time.Second) && got < want+int64(time.Second) }
	// A capture's end is a sampling period (20 ms) after its last sample;
	// the next one's first sample may come a little before that.
	if len(g.Captures) != 2 || !near(g.Captures[0].Start, start) || !near(g.Captures[1].Start, start+4e9) ||
		g.Captures[1].Start < g.Captures[0].End-int64(50*time.Millisecond) || !near(g.Captures[1].End, start+8e9) {
		t.Errorf("synthetic-gpu-node's captures: %+v; want two, one after the other from 2026-01-01T02:00:00Z, 4 s each", g.Captures)
	}
}

// TestGenerateFleet imports a generated fleet of 4 hosts and reads it back
// through the other commands: every host with its zone, and the search
// for the planted function ranking the zone-a hosts first.
func TestGenerateFleet(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fleet.db")
	_, stderr, err := runCmd(t, nil, "generate", "fleet", "--db", db, "--hosts", "4", "--seed", "2")
	if err != nil {
		t.Fatalf("generate fleet: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "imported 72 captures of 4 hosts") {
		t.Errorf("generate fleet said %q; want 72 captures of 4 hosts", stderr)
	}
	out, _, err := runCmd(t, nil, "hosts", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-01", "node-02", "zone=a", "node-03", "node-04", "zone=b"} {
		if !strings.Contains(out, want) {
			t.Errorf("hosts lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCmd(t, nil, "fleet", "--db", db, "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-08T00:00:00Z", "--function", "^mem_cgroup_nr_lru_pages$")
	if err != nil {
		t.Fatal(err)
	}
	a1, a2, b := strings.Index(out, "node-01"), strings.Index(out, "node-02"), min(strings.Index(out, "node-03"), strings.Index(out, "node-04"))
	if a1 < 0 || a2 < 0 || b < 0 || max(a1, a2) > b {
		t.Errorf("the search does not rank the zone-a hosts (node-01, node-02) first:\n%s", out)
	}
	if _, _, err := runCmd(t, nil, "generate", "fleet", "--db", db, "--hosts", "1"); err == nil || !strings.Contains(err.Error(), "--hosts 1") {
		t.Errorf("generate fleet --hosts 1: %v; want an error naming --hosts", err)
	}
}
