package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTermWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\twith tab\n", "plain text\twith tab\n"},
		{"\x1b]0;PWNED\a\x1b[31mred", `\x1b]0;PWNED\x07\x1b[31mred`},
		{"del\x7f c1\u009b csi", `del\x7f c1\u009b csi`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"bad \xff\xc2 utf8", `bad \xff\xc2 utf8`},
		{"ünïcödé ░▒▓█ 中文", "ünïcödé ░▒▓█ 中文"},
	} {
		var b bytes.Buffer
		n, err := termWriter(&b).Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || b.String() != tc.want {
			t.Errorf("termWriter(%q) wrote %q (n %d, %v); want %q", tc.in, b.String(), n, err, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one too many", 11, "one too ma…"},
		{"äöüäöüäöü", 4, "äöü…"},
		{"tab\there", 20, `tab\there`},
		{"\x1b[31m", 20, `\x1b[31m`},
	} {
		if got := clip(tc.in, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q; want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := clip(strings.Repeat("x", 1<<20), nameWidth); len([]rune(got)) != nameWidth {
		t.Errorf("clip of 1 MB = %d characters; want %d", len([]rune(got)), nameWidth)
	}
}

// hostileCapture writes a capture whose hostname retitles and recolours a
// terminal, whose busy CPU runs a command with an escape in its name and a
// 100 KB function, and which holds a malformed record quoting an
// escape: what an attacker's upload looks like to the CLI. (The issue's
// symbol was a megabyte; 100 KB makes the same point at a fifth of the
// test's time.)
func hostileCapture(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# ========\n# hostname : \x1b]0;PWNED\a\x1b[31m\n# os release : 6.1\u202e\n# ========\n#\n")
	long := strings.Repeat("A", 100<<10) + "\x1b[2J"
	start := int64(5086_050_000_000)
	for i := 0; i < 200; i++ {
		tm := start + int64(i)*10_000_000
		for cpu := 0; cpu < 2; cpu++ {
			comm, leaf := "web", "handle_request"
			if cpu == 1 {
				comm, leaf = "evil\x1b[5m", long
			}
			fmt.Fprintf(&b, "%s 300/301 [%03d] %d.%06d: 10101010 cpu-clock:ppp: \n", comm, cpu, tm/1e9, tm%1e9/1e3)
			fmt.Fprintf(&b, "\tffffffff81001100 %s+0x1a ([kernel.kallsyms])\n", leaf)
			b.WriteString("\tffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])\n\n")
		}
		if i == 10 {
			b.WriteString("\x1b]0;PWNED\a this is not a sample\n\n")
		}
	}
	p := filepath.Join(t.TempDir(), "hostile\x1b[31m.perf.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostileOutput: no text output of the CLI carries a terminal control
// character from a capture, and long names are cut: before, `info` printed
// the hostname's escapes raw and `hotspots` padded its table to the
// megabyte-long function (29 MB of output).
func TestHostileOutput(t *testing.T) {
	file := hostileCapture(t)
	db := filepath.Join(t.TempDir(), "x.db")
	out, stderr, err := runCmd(t, nil, "import", "--db", db, "--name", "name\x1b[31m", file)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	id, _, _ := strings.Cut(out, " ")
	check := func(args []string, out, stderr string) {
		t.Helper()
		for name, s := range map[string]string{"stdout": out, "stderr": stderr} {
			if i := strings.IndexAny(s, "\x1b\a\u009b\u202e"); i >= 0 {
				t.Errorf("subsecond %s: %s holds a control character at %d: %q", strings.Join(args, " "), name, i, s[max(0, i-40):min(len(s), i+40)])
			}
			if len(s) > 64<<10 {
				t.Errorf("subsecond %s: %s is %d bytes; want long names cut", strings.Join(args, " "), name, len(s))
			}
		}
	}
	check([]string{"import"}, out, stderr)
	for _, args := range [][]string{
		{"info", "--db", db, id},
		{"list", "--db", db},
		{"hotspots", "--db", db, id},
		{"hotspots", file},
		{"cpus", file},
		{"heatmap", file},
		{"info", "--db", db, "no\x1b[31msuch"},
	} {
		out, stderr, err := runCmd(t, nil, args...)
		if err != nil && args[len(args)-1] != "no\x1b[31msuch" {
			t.Errorf("subsecond %s: %v", strings.Join(args, " "), err)
		}
		check(args, out, stderr)
		if args[0] == "info" && err == nil && !strings.Contains(out, `\x1b]0;PWNED\x07\x1b[31m`) {
			t.Errorf("info does not show the hostname's escapes as text:\n%s", out)
		}
		if args[0] == "hotspots" && !strings.Contains(out, "AAAA…") {
			t.Errorf("hotspots does not show the long function cut:\n%.500s", out)
		}
	}
}

// TestHostileMarkers: a kernel-log line is written by whoever can log, and
// reaches the terminal through `markers import` and `markers list`.
func TestHostileMarkers(t *testing.T) {
	dir := t.TempDir()
	db, log := filepath.Join(dir, "x.db"), filepath.Join(dir, "kern.log")
	line := "2026-11-30T03:12:05Z eth0: NETDEV WATCHDOG \x1b]0;PWNED\a\x1b[31m" + strings.Repeat("B", 10000) + "\n"
	if err := os.WriteFile(log, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"markers", "import", "--db", db, "--host", "node-1", log},
		{"markers", "list", "--db", db, "--host", "node-1"},
	} {
		out, stderr, err := runCmd(t, nil, args...)
		if err != nil {
			t.Fatalf("subsecond %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		if strings.ContainsAny(out+stderr, "\x1b\a") || len(out) > 2000 {
			t.Errorf("subsecond %s printed a control character or the whole marker:\n%q", strings.Join(args, " "), out)
		}
		if args[1] == "list" && !strings.Contains(out, `NETDEV WATCHDOG \x1b]0;PWNED\x07`) {
			t.Errorf("markers list does not show the marker, escaped:\n%q", out)
		}
	}
}
