package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond/internal/nightgen"
)

// TestNightCommands imports a folder of rolling captures and a kernel log,
// then reads the night back with hosts, timeline and hotspots --host.
func TestNightCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	importNight(t, db)
	out, _, err := runStoreCmd(t, "", "hosts", "--db", db)
	if err != nil || !strings.Contains(out, "node-1") || !strings.Contains(out, "2026-11-30T03:00:00.") || !strings.Contains(out, "2026-11-30T03:06:00.") {
		t.Errorf("hosts: %v\n%s; want node-1 from 03:00 to 03:06", err, out)
	}
	// A host's captures, in time order: two back to back, the pause, two
	// more.
	out, _, err = runStoreCmd(t, "", "hosts", "--db", db, "node-1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 5 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.Contains(lines[1], "2026-11-30T03:00:00.") || !strings.Contains(lines[2], "2026-11-30T03:01:00.") ||
		!strings.Contains(lines[3], "2026-11-30T03:04:00.") || !strings.Contains(lines[4], "2026-11-30T03:05:00.") ||
		!strings.HasSuffix(lines[1], "realtime") {
		t.Errorf("hosts node-1: %v\n%s; want its 4 captures from 03:00, 03:01, 03:04 and 03:05, on the realtime clock", err, out)
	}
	if _, _, err := runStoreCmd(t, "", "hosts", "--db", db, "node-9"); err == nil || !strings.Contains(err.Error(), `host "node-9"`) {
		t.Errorf("hosts node-9 = %v; want an error naming the unknown host", err)
	}

	out, _, err = runStoreCmd(t, "", "timeline", "--db", db, "--host", "node-1", "--bucket", "10s", "--measure", "system")
	if err != nil {
		t.Fatal(err)
	}
	// 37 columns of 10 s (the last capture ends one sample after 03:06): 12
	// for the first two captures, one they end in, 11 of pause, 13 more; the
	// burst takes half of column 26.
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "cpu" {
			rows[f[1]] = l[strings.Index(l, "│")+len("│") : strings.LastIndex(l, "│")]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "markers") {
			rows["markers"] = l
		}
	}
	cpu1 := []rune(rows["1"])
	if len(cpu1) != 37 || string(cpu1[13:24]) != strings.Repeat("·", 11) || cpu1[12] == '·' || cpu1[24] == '·' || cpu1[26] != '▒' {
		t.Errorf("timeline row of CPU 1 = %q; want 37 columns, the pause as ·, the burst half of column 26\n%s", string(cpu1), out)
	}
	if !strings.Contains(rows["markers"], "▼") || !strings.Contains(out, "NETDEV WATCHDOG") {
		t.Errorf("timeline without the marker:\n%s", out)
	}

	out, _, err = runStoreCmd(t, "", "hotspots", "--db", db, "--host", "node-1", "--measure", "system")
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(out, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[2], "1  1    2026-11-30T03:04:20.") || !strings.Contains(lines[2], "kubelet") ||
		!strings.Contains(lines[2], "before \"mlx5_core") {
		t.Errorf("hotspots --host:\n%s\nwant CPU 1's burst at 03:04:20 first, before the watchdog marker", out)
	}
	out, _, err = runStoreCmd(t, "", "markers", "list", "--db", db, "--host", "node-1")
	if err != nil || !strings.Contains(out, "--host node-1 --from 2026-11-30T03:04:19Z --to 2026-11-30T03:04:29Z") || strings.Contains(out, "not recorded") {
		t.Errorf("markers list: %v\n%s; want the 10 s before the marker as the host's range 03:04:19 to 03:04:29, all recorded", err, out)
	}
	if _, _, err := runStoreCmd(t, "", "timeline", "--db", db); err == nil {
		t.Error("timeline without --host: no error")
	}
	// The host commands' flags are the query table's, with its errors.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"timeline", "--host", "node-1", "--bucket", "0.5"}, "timeline: --bucket: 0.5 s is finer than the host timeline's one-second summaries"},
		{[]string{"timeline", "--host", "node-1", "--bucket", "x"}, `timeline: --bucket: "x" is not a duration such as 2, 2s or 1500ms`},
		{[]string{"timeline", "--host", "node-1", "--measure", "idle"}, `timeline: --measure: "idle" is not busy or system`},
		{[]string{"hotspots", "--host", "node-1", "--min", "0.5"}, "hotspots: --min: 0.5 s is less than 1 s, the resolution of a host's night"},
		{[]string{"hotspots", "--host", "node-1", "--near", "0"}, "hotspots: --near: 0 s is outside 1 s to 86400 s"},
		{[]string{"hotspots", "--host", "node-1", "--cpu", "1"}, "hotspots: --cpu is not used with --host"},
		{[]string{"hotspots", "--host", "node-1", "--system", "--measure", "busy"}, "hotspots: give --system or --measure busy, not both"},
		{[]string{"markers", "list", "--host", "node-1", "--from", "soon"}, `markers: --from: "soon" is neither an RFC 3339 time`},
		{[]string{"timeline", "--host", "node-1", "extra"}, `timeline: unexpected argument "extra"`},
		{[]string{"markers", "list", "--host", "node-1", "extra"}, `markers: unexpected argument "extra"`},
	} {
		_, _, err := runStoreCmd(t, "", append(tc.args, "--db", db)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("subsecond %s: %v; want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// importNight imports into db a night of host node-1: four one-minute
// captures of 4 CPUs from 2026-11-30 03:00 UTC, two minutes of pause after
// the second, a system-time burst on CPU 1 20 s into the third, and a
// kernel log whose NETDEV WATCHDOG line 4 s after the burst becomes a
// marker.
func importNight(t *testing.T, db string) *nightgen.Night {
	t.Helper()
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps")
	os.Mkdir(caps, 0o755)
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n := &nightgen.Night{Host: "node-1", CPUs: 4, Hz: 49, Start: start, Captures: 4, Length: time.Minute,
		Gaps: map[int]time.Duration{2: 2 * time.Minute}, Unanchored: -1, Seed: 5}
	n.Bursts = []nightgen.Burst{{CPU: 1, Start: n.CaptureStart(2).Add(20 * time.Second), End: n.CaptureStart(2).Add(25 * time.Second)}}
	for i := range n.Captures {
		f, err := os.Create(filepath.Join(caps, time.Unix(0, n.CaptureStart(i).UnixNano()).UTC().Format("perf-150405.txt")))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Write(f, i, nil); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, caps); err != nil {
		t.Fatal(err)
	}
	reset := n.Bursts[0].End.Add(4 * time.Second)
	log := filepath.Join(dir, "dmesg.txt")
	os.WriteFile(log, []byte("["+reset.Format(time.ANSIC)+"] mlx5_core 0000:3b:00.0 eth0: NETDEV WATCHDOG: transmit queue 3 timed out\n"+
		"["+reset.Format(time.ANSIC)+"] eth0: carrier on\n"), 0o644)
	out, _, err := runStoreCmd(t, "", "markers", "import", "--db", db, "--host", "node-1", "--match", "NETDEV WATCHDOG|reset", log)
	if err != nil || !strings.Contains(out, "1 markers of node-1, 1 new") {
		t.Fatalf("markers import: %v\n%s", err, out)
	}
	return n
}

// TestHostSessionsCommand: a capture of node-1 months before its night is
// a session of its own; hosts HOST numbers each capture's session and
// lists both, and timeline shows the latest unless given --session.
func TestHostSessionsCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	importNight(t, db)
	early := &nightgen.Night{Host: "node-1", CPUs: 2, Hz: 49, Start: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Captures: 1, Length: 10 * time.Second, Unanchored: -1, Seed: 2}
	f := filepath.Join(dir, "early.txt")
	w, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := early.Write(w, 0, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, f); err != nil {
		t.Fatal(err)
	}
	out, _, err := runStoreCmd(t, "", "hosts", "--db", db, "node-1")
	lines := strings.Split(out, "\n")
	if err != nil || len(lines) < 10 || !strings.Contains(lines[0], "SESSION") || !strings.Contains(lines[1], "2026-07-01T12:00:00.") ||
		!strings.Contains(out, "2 recording sessions") || !regexp.MustCompile(`(?m)^1\s+2026-07-01T12:00:00\.\S+\s+\S+\s+1\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^2\s+2026-11-30T03:00:00\.\S+\s+2026-11-30T03:06:00\.\S+\s+4\s`).MatchString(out) {
		t.Errorf("hosts node-1: %v\n%s; want the early capture in session 1, the night in session 2, both sessions listed", err, out)
	}
	for _, tt := range []struct{ args, want string }{
		{"", "4 captures from 2026-11-30T03:00:00.000Z"},
		{"--session 1", "1 captures from 2026-07-01T12:00:00.000Z"},
	} {
		args := append([]string{"timeline", "--db", db, "--host", "node-1"}, strings.Fields(tt.args)...)
		out, _, err := runStoreCmd(t, "", args...)
		if err != nil || !strings.Contains(out, tt.want) {
			t.Errorf("timeline %s: %v\n%s; want %q", tt.args, err, out, tt.want)
		}
	}
	// So do the hot spots: the night's burst, or none in the early capture.
	for _, tt := range []struct{ args, want string }{
		{"", "1 episodes on node-1 in recording session 2 "},
		{"--session 1", "No CPU of node-1 stayed "},
	} {
		args := append([]string{"hotspots", "--db", db, "--host", "node-1", "--measure", "system"}, strings.Fields(tt.args)...)
		out, _, err := runStoreCmd(t, "", args...)
		if err != nil || !strings.Contains(out, tt.want) || strings.Contains(tt.args, "1") != strings.Contains(out, "in recording session 1") {
			t.Errorf("hotspots %s: %v\n%s; want %q", tt.args, err, out, tt.want)
		}
	}
}
