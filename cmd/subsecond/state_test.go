package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mpstatText writes `mpstat -P ALL 1` text (LC_ALL=C) for 4 CPUs over
// [03:00:01, 03:01:00] on 2026-11-30, CPU 1 at 100% system time from
// 03:00:21 to 03:00:30 and idle otherwise.
func mpstatText() string {
	var b strings.Builder
	b.WriteString("Linux 6.1.0-28-amd64 (node-1) \t11/30/26 \t_x86_64_\t(4 CPU)\n\n")
	for s := 1; s <= 60; s++ {
		at := fmt.Sprintf("03:%02d:%02d", s/60, s%60)
		fmt.Fprintf(&b, "%s     CPU    %%usr   %%nice    %%sys %%iowait    %%irq   %%soft  %%steal  %%guest  %%gnice   %%idle\n", at)
		fmt.Fprintf(&b, "%s     all    0.00    0.00    %5.2f    0.00    0.00    0.00    0.00    0.00    0.00   %6.2f\n", at, 0.0, 100.0)
		for cpu := 0; cpu < 4; cpu++ {
			sys := 0.0
			if cpu == 1 && s > 20 && s <= 30 {
				sys = 100
			}
			fmt.Fprintf(&b, "%s       %d    0.00    0.00  %6.2f    0.00    0.00    0.00    0.00    0.00    0.00   %6.2f\n", at, cpu, sys, 100-sys)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestStateCommands imports mpstat text into a host's night and prints
// its system-time lane on the timeline's columns.
func TestStateCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	importNight(t, db)
	file := filepath.Join(dir, "mpstat.txt")
	os.WriteFile(file, []byte(mpstatText()), 0o644)
	out, _, err := runStoreCmd(t, "", "state", "import", "--db", db, "--host", "node-1", file)
	// 60 intervals × 5 rows (all and 4 CPUs) × 8 columns.
	if err != nil || !strings.Contains(out, "mpstat, 40 series, 2400 points of node-1, 2400 new") {
		t.Fatalf("state import: %v\n%s", err, out)
	}
	out, _, err = runStoreCmd(t, "", "state", "import", "--db", db, "--host", "node-1", file)
	if err != nil || !strings.Contains(out, "2400 points of node-1, 0 new") {
		t.Errorf("state import again: %v\n%s; want nothing new", err, out)
	}
	out, _, err = runStoreCmd(t, "", "state", "--db", db, "--host", "node-1", "--from", "2026-11-30T03:00:00Z", "--to", "2026-11-30T03:01:00Z", "--bucket", "10s")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "│"); i > 0 {
			rows[strings.TrimSpace(l[:i])] = l[i+len("│") : strings.LastIndex(l, "│")]
		}
	}
	// The points of 03:00:21–03:00:30 cover [03:00:20, 03:00:30): column 2.
	if got := rows["cpu 1"]; got != "  █   " {
		t.Errorf("cpu.sys of CPU 1 = %q; want full in column 2 alone\n%s", got, out)
	}
	if got := rows["cpu 0"]; got != "      " || rows["host"] != "      " {
		t.Errorf("cpu.sys of CPU 0 = %q, of the host %q; want idle\n%s", got, rows["host"], out)
	}

	// What moves with CPU 1's system time over the session's windows.
	out, _, err = runStoreCmd(t, "", "state", "--db", db, "--host", "node-1", "--moves", "--name", "cpu.sys", "--series_cpu", "1")
	if err != nil || !strings.Contains(out, "node-1: what moves with cpu.sys of CPU 1, over ") || !strings.Contains(out, "RHO") {
		t.Errorf("state --moves: %v\n%s", err, out)
	}
	if _, _, err := runStoreCmd(t, "", "state", "--db", db, "--host", "node-1", "--comm", "kubelet"); err == nil || !strings.Contains(err.Error(), "--moves") {
		t.Errorf("state --comm without --moves = %v; want a hint to add --moves", err)
	}

	// The real recordings in sysstat's testdata import too.
	real := filepath.Join("..", "..", "sysstat", "testdata", "mpstat-c.txt")
	if out, _, err := runStoreCmd(t, "", "state", "import", "--db", db, "--host", "node-2", real); err != nil || !strings.Contains(out, "mpstat,") {
		t.Errorf("state import of %s: %v\n%s", real, err, out)
	}
	for _, bad := range [][]string{
		{"state", "import", "--db", db, "--host", "node-1", filepath.Join(dir, "n.db")},
		{"state", "--db", db, "--host", "node-1", "--name", "cpu.bogus"},
	} {
		if _, _, err := runStoreCmd(t, "", bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestExplainCommand explains the night's one marker: the kubelet burst
// in the 10 s before it ranks first.
func TestExplainCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "n.db")
	importNight(t, db)
	out, _, err := runStoreCmd(t, "", "explain", "--db", db, "--host", "node-1", "--match", "NETDEV")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "1 window of 10 s before the markers matching NETDEV, against 15 control windows") ||
		!strings.HasPrefix(strings.TrimSpace(lines[3]), "1. kubelet") || !strings.Contains(out, "stood out before 1 of 1;") || !strings.Contains(out, "every relabeling") {
		t.Errorf("explain:\n%s\nwant the kubelet first, standing out before the one marker", out)
	}
	if _, _, err := runStoreCmd(t, "", "explain", "--db", db, "--host", "node-1", "--match", "nothing-matches"); err == nil || !strings.Contains(err.Error(), "nothing-matches") {
		t.Errorf("explain without a matching marker = %v; want an error naming the expression", err)
	}
}
