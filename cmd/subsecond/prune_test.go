package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// TestImportDirectoryAndPrune imports a folder of rolling captures in the
// order they were recorded, with --host; then prunes by their wall-clock
// time.
func TestImportDirectoryAndPrune(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps")
	os.Mkdir(caps, 0o755)
	now := time.Now()
	// Recorded c, a, b (c's samples are 100 h old, a's and b's recent),
	// copied in the order b, c, a, which gave them their modification times;
	// d has no wall-clock time.
	for i, f := range []struct {
		name string
		sec  int64
	}{{"b.txt", now.Add(-time.Hour).Unix()}, {"c.txt", now.Add(-100 * time.Hour).Unix()}, {"a.txt", now.Add(-2 * time.Hour).Unix()}, {"d.txt", 0}} {
		p := filepath.Join(caps, f.name)
		text := nightCapture("node-1", int(f.sec))
		if f.sec == 0 {
			text = "kubelet 300/301 [000] 5.000100: 20408163 cpu-clock:pppH: \n\tffffffff81001100 mem_cgroup_nr_lru_pages+0x1a ([kernel.kallsyms])\n\n"
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := now.Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(p, mt, mt)
	}
	os.WriteFile(filepath.Join(caps, ".hidden"), []byte("x"), 0o644)
	db := filepath.Join(dir, "n.db")
	out, _, err := runStoreCmd(t, "", "import", "--db", db, "--host", "node-9", caps)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "c.txt") || !strings.Contains(lines[1], "a.txt") || !strings.Contains(lines[2], "b.txt") || !strings.Contains(lines[3], "d.txt") {
		t.Errorf("import of the folder printed:\n%s\nwant c.txt, a.txt, b.txt in the order recorded, then d.txt without a time; no hidden file", out)
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, filepath.Join(caps, "*.zst")); err == nil || !strings.Contains(err.Error(), "no files match") {
		t.Errorf("pattern matching nothing: %v; want 'no files match'", err)
	}
	out, _, err = runStoreCmd(t, "", "import", "--db", db, filepath.Join(caps, "[ab].txt"))
	if err != nil || strings.Count(out, "(already stored, imported ") != 2 {
		t.Errorf("pattern import: %v\n%s; want a.txt and b.txt, already stored", err, out)
	}

	out, _, err = runStoreCmd(t, "", "prune", "--db", db, "--older-than", "72h", "--dry-run")
	if err != nil || !strings.Contains(out, "would delete 1 captures") || !strings.Contains(out, "c.txt") {
		t.Errorf("prune --dry-run: %v\n%s; want c.txt named, nothing deleted", err, out)
	}
	out, _, err = runStoreCmd(t, "", "prune", "--db", db, "--older-than", "72h", "--host", "other")
	if err != nil || !strings.Contains(out, "deleted 0 captures") {
		t.Errorf("prune --host other: %v\n%s; want nothing deleted", err, out)
	}
	out, _, err = runStoreCmd(t, "", "prune", "--db", db, "--older-than", "72h")
	if err != nil || !strings.Contains(out, "deleted 1 captures") {
		t.Errorf("prune: %v\n%s", err, out)
	}
	list, _, _ := runStoreCmd(t, "", "list", "--db", db)
	if strings.Contains(list, "c.txt") || !strings.Contains(list, "a.txt") || !strings.Contains(list, "b.txt") {
		t.Errorf("after prune, list:\n%s\nwant a.txt and b.txt only", list)
	}
	if _, _, err := runStoreCmd(t, "", "prune", "--db", db); err == nil {
		t.Error("prune without --older-than: no error")
	}
}

// TestServeRetain: serve --retain deletes old captures at start-up and
// keeps recent ones.
func TestServeRetain(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.txt")
	recent := filepath.Join(dir, "recent.txt")
	os.WriteFile(old, []byte(nightCapture("node-1", int(time.Now().Add(-80*time.Hour).Unix()))), 0o644)
	os.WriteFile(recent, []byte(nightCapture("node-1", int(time.Now().Add(-time.Hour).Unix()))), 0o644)
	db := filepath.Join(dir, "s.db")
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, old, recent); err != nil {
		t.Fatal(err)
	}
	url, _, stop := startServe(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--retain", "72h")
	defer stop()
	var list struct {
		Profiles []struct {
			FileName string `json:"file_name"`
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		getJSON(t, url+"/api/profiles", &list)
		if len(list.Profiles) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(list.Profiles) != 1 || list.Profiles[0].FileName != recent {
		t.Errorf("serve --retain 72h keeps %+v; want only %s", list.Profiles, recent)
	}
}

// TestPruneSeries: prune deletes the hosts' series before the cutoff with
// their captures, and --dry-run and --host keep the others.
func TestPruneSeries(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "p.db")
	s, err := sqlite.OpenStore(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, recent := time.Now().Add(-100*time.Hour).UnixNano(), time.Now().Add(-time.Hour).UnixNano()
	for _, h := range []string{"node-1", "node-2"} {
		ss := []subsecond.Series{{Name: "load1", CPU: subsecond.Unknown, Points: []subsecond.Point{{Time: old, Value: 1}, {Time: recent, Value: 2}}}}
		if _, err := s.AddSeries(ctx, h, ss); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	points := func(h string) int {
		t.Helper()
		s, err := sqlite.OpenStore(ctx, db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss, err := s.Series(ctx, h, "load1", 0, math.MaxInt64)
		if err != nil || len(ss) != 1 {
			t.Fatalf("Series of %s = %+v, %v", h, ss, err)
		}
		return len(ss[0].Points)
	}
	for _, step := range []struct {
		args   []string
		n1, n2 int
	}{
		{[]string{"--dry-run"}, 2, 2},
		{[]string{"--host", "node-1"}, 1, 2},
		{nil, 1, 1},
	} {
		args := append([]string{"prune", "--db", db, "--older-than", "72h"}, step.args...)
		if out, _, err := runStoreCmd(t, "", args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if n1, n2 := points("node-1"), points("node-2"); n1 != step.n1 || n2 != step.n2 {
			t.Errorf("after %v: node-1 has %d points, node-2 %d; want %d and %d", step.args, n1, n2, step.n1, step.n2)
		}
	}
}
