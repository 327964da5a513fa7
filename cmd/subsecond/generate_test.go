package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
