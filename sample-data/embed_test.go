package sampledata

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/subsecond/subsecond/parser"
)

// TestIncidentRegenerates checks the bundled incident against its truth and
// against a fresh run of the generator with the recorded configuration: the
// decompressed text hashes to the recorded SHA-256, and regeneration writes
// the same bytes and counts the same truth. It reads and writes 888 MB of
// text twice over (a few seconds): `go test -short` leaves it out, `make
// test` and CI run it.
func TestIncidentRegenerates(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates the 888 MB incident capture; run without -short")
	}
	truth, err := IncidentTruth()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(truth.Config.NICCPUs, []int{32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47}) ||
		truth.Config.CPUs != 96 || truth.Config.Seconds != 120 || truth.Config.IncidentCPU != 39 {
		t.Errorf("bundled config %+v; want the 96-CPU, 120 s incident on CPU 39", truth.Config)
	}
	// Regenerate while the bundled text is hashed: two cores, half the time.
	type result struct {
		truth Truth
		err   error
	}
	regenerated := make(chan result, 1)
	go func() {
		again, err := Generate(io.Discard, truth.Config)
		regenerated <- result{again, err}
	}()
	r, err := Incident()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != truth.SHA256 || n != truth.Bytes {
		t.Errorf("bundled text: %d bytes, sha256 %s; truth says %d bytes, %s", n, got, truth.Bytes, truth.SHA256)
	}

	res := <-regenerated
	if res.err != nil {
		t.Fatal(res.err)
	}
	if again := res.truth; !reflect.DeepEqual(again, truth) {
		t.Errorf("regenerated truth differs from the bundled one:\nbundled %s %d samples %+v\nagain   %s %d samples %+v",
			truth.SHA256, truth.Samples, truth.Incidents, again.SHA256, again.Samples, again.Incidents)
	}
	if len(truth.Incidents) < 3 {
		t.Errorf("%d incident windows; want 3 or 4", len(truth.Incidents))
	}
	for i, w := range truth.Incidents {
		if w.Samples == 0 || w.ByComm["kubelet"] != w.Samples || w.MemcgLeaf != w.Samples || w.NICPoll != 0 {
			t.Errorf("window %d: %+v; want only kubelet memcg samples, no NIC polling", i, w)
		}
	}
}

// TestReal reads the bundled real capture with the parser: perf's header,
// both CPUs, no malformed records.
func TestReal(t *testing.T) {
	r, err := Real()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := parser.NewScanner(r, parser.Options{Strict: true})
	cpus := map[int32]int{}
	comms := map[string]int{}
	n := 0
	for sc.Scan() {
		s := sc.Sample()
		n++
		cpus[s.CPU]++
		comms[s.Comm]++
		if len(s.Frames) == 0 {
			t.Fatalf("line %d: sample without frames", s.Line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	m := sc.Metadata()
	if !strings.Contains(m.Cmdline, "perf record -F 499 -a -g") || m.NrCPUs != 2 {
		t.Errorf("metadata %+v; want the perf record -F 499 -a -g command line and 2 CPUs", m)
	}
	if n < 4000 || len(cpus) != 2 || comms["python3"] == 0 || comms["gzip"] == 0 || comms["sha256sum"] == 0 {
		t.Errorf("%d samples on CPUs %v, comms %v; want about 5000 on 2 CPUs with the workload's python3, gzip and sha256sum", n, cpus, comms)
	}
}
