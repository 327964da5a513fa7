package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/web"
)

// TestFleetCommands imports two hosts with --label and --boot, labels
// them with hosts label (a hostile value printed escaped), and runs
// subsecond fleet: the hosts' list, a search, the contrasts and the
// errors naming their flags.
func TestFleetCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	for i, host := range []string{"node-1", "node-2"} {
		n := &nightgen.Night{Host: host, CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
			Captures: 1, Length: time.Minute, Unanchored: -1, Seed: 5}
		if i == 0 {
			n.Bursts = []nightgen.Burst{{CPU: 1, Start: n.Start.Add(10 * time.Second), End: n.Start.Add(40 * time.Second)}}
		}
		file := filepath.Join(dir, host+".txt")
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Write(f, 0, nil); err != nil {
			t.Fatal(err)
		}
		f.Close()
		zone := []string{"zone=a", "zone=b"}[i]
		if _, _, err := runStoreCmd(t, "", "import", "--db", db, "--label", zone, "--label", "image=v1", "--boot", "2026-11-29T03:00:00Z", file); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, "--label", "Zone=a", "x"); err == nil || !strings.Contains(err.Error(), `import: --label: "Zone=a": the key "Zone" does not start with a lower-case letter`) {
		t.Errorf("import --label Zone=a: %v; want the label refused by name", err)
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, "--boot", "yesterday", "x"); err == nil || !strings.Contains(err.Error(), "--boot") {
		t.Errorf("import --boot yesterday: %v; want the flag named", err)
	}

	out, _, err := runStoreCmd(t, "", "hosts", "label", "--db", db, "node-2", "owner=<b>\x1b[31m", "team=x", "-k", "image")
	if err == nil {
		t.Errorf("hosts label with a control character: %s; want it refused", out)
	}
	out, _, err = runStoreCmd(t, "", "hosts", "label", "--db", db, "node-2", "owner=<b>ü\"q\"", "team=x", "-k", "image")
	if err != nil || !strings.Contains(out, "node-2: ") || !strings.Contains(out, `owner  <b>ü"q"`) || strings.Contains(out, "image") {
		t.Errorf("hosts label: %v\n%s; want owner and team set, image removed", err, out)
	}
	out, _, err = runStoreCmd(t, "", "hosts", "--db", db)
	if err != nil || !strings.Contains(out, "zone=a") || !strings.Contains(out, `owner=<b>ü"q"`) {
		t.Errorf("hosts: %v\n%s; want the labels", err, out)
	}

	out, _, err = runStoreCmd(t, "", "fleet", "--db", db, "--group", "zone")
	if err != nil || !strings.Contains(out, "busiest core's system share") || !strings.Contains(out, "node-1") || !strings.Contains(out, "node-2") {
		t.Errorf("fleet: %v\n%s", err, out)
	}
	out, _, err = runStoreCmd(t, "", "fleet", "--db", db, "--comm", "kubelet", "--format", "json")
	var s web.FleetSearch
	if err != nil || json.Unmarshal([]byte(out), &s) != nil || len(s.Hosts) == 0 || s.Hosts[0].Host != "node-1" || s.Match != "^kubelet$" {
		t.Errorf("fleet --comm kubelet --format json: %v\n%s; want node-1 first", err, out)
	}
	out, _, err = runStoreCmd(t, "", "fleet", "--db", db, "--function", ".", "--label", "zone=a")
	if err != nil || !strings.Contains(out, "function=.") || strings.Contains(out, "node-2") {
		t.Errorf("fleet --function . --label zone=a: %v\n%s; want node-1 alone", err, out)
	}
	if out, _, err = runStoreCmd(t, "", "fleet", "--db", db, "--groups", "--group", "zone", "--permutations", "1000"); err != nil || !strings.Contains(out, "zone: a (1 hosts), b (1 hosts)") {
		t.Errorf("fleet --groups: %v\n%s", err, out)
	}
	if out, _, err = runStoreCmd(t, "", "fleet", "--db", db, "--uptime", "--permutations", "1000"); err != nil || !strings.Contains(out, "hosts") {
		t.Errorf("fleet --uptime: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--groups"}, "fleet: --groups compares the values of a label: give --group KEY"},
		{[]string{"--comm", "a", "--stack", "b"}, "fleet: --stack: the fleet searches one of"},
		{[]string{"--label", "zone"}, `fleet: --label: "zone" is not a label key=value`},
		{[]string{"--buckets", "0"}, "fleet: --buckets: 0 is outside 1 to 2000"},
	} {
		if _, _, err := runStoreCmd(t, "", append([]string{"fleet", "--db", db}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fleet %v: %v; want %q", tc.args, err, tc.want)
		}
	}
}

// TestParseBtime checks the boot time read from /proc/stat.
func TestParseBtime(t *testing.T) {
	got, err := parseBtime(strings.NewReader("cpu  1 2 3\nintr 1 2\nbtime 1796159055\nprocesses 3\n"))
	if err != nil || got != 1796159055e9 {
		t.Errorf("parseBtime = %d, %v; want 1796159055 s", got, err)
	}
	if _, err := parseBtime(strings.NewReader("cpu 1\n")); err == nil {
		t.Errorf("parseBtime without btime: no error")
	}
}
