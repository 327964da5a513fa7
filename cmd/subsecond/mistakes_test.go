package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistakes runs the binary's commands with the mistakes a newcomer
// makes and checks that each is one error that says what to do instead,
// with nothing else written around it: the usage lines of the command
// follow a flag error, not its whole help.
func TestMistakes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	for _, tc := range []struct {
		args []string
		want string // the error's text, its first line
		more int    // lines after the first (the command's usage lines)
	}{
		{[]string{"hotspot"}, `unknown command "hotspot"; did you mean "hotspots"?`, 0},
		{[]string{"lst"}, `unknown command "lst"; did you mean "list"?`, 0},
		{[]string{"flamegrpah", "ID"}, `unknown command "flamegrpah"; did you mean "flamegraph"?`, 0},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; 'subsecond help' lists the commands`, 0},
		{[]string{"help", "nosuch"}, `unknown help topic "nosuch"; 'subsecond help' lists the commands`, 0},
		{[]string{"help", "hotspot"}, `unknown help topic "hotspot"; did you mean "hotspots"?`, 0},
		{[]string{"cpus", "--fromat", "csv", "ID"}, "cpus: unknown flag --fromat; did you mean --format?", 1},
		{[]string{"heatmap", "--rwos=5", "ID"}, "heatmap: unknown flag --rwos; did you mean --rows?", 1},
		{[]string{"list", "--no-such-flag"}, "list: unknown flag --no-such-flag; see 'subsecond list --help'", 1},
		{[]string{"serve", "--db", db, "--adr", ":0"}, "serve: unknown flag --adr; did you mean --addr?", 1},
		{[]string{"serve", "--db", db, "--addr", "8080"}, "serve: --addr 8080: missing the colon before the port; did you mean --addr :8080 (every interface) or --addr localhost:8080?", 0},
		{[]string{"serve", "--db", db, "--addr", "localhost"}, "serve: --addr localhost: want HOST:PORT, such as localhost:8080, or :PORT for every interface", 0},
	} {
		stdout, stderr, err := runCmd(t, nil, tc.args...)
		if err == nil {
			t.Errorf("subsecond %s succeeds; want the error %q", strings.Join(tc.args, " "), tc.want)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if lines[0] != tc.want || len(lines)-1 != tc.more || stdout != "" || stderr != "" {
			t.Errorf("subsecond %s = error %q, stdout %q, stderr %q; want the error %q and %d usage lines, nothing written",
				strings.Join(tc.args, " "), err, stdout, stderr, tc.want, tc.more)
		}
		if tc.more > 0 && len(lines) > 1 && !strings.HasPrefix(lines[1], "Usage: subsecond "+tc.args[0]) {
			t.Errorf("subsecond %s: error's second line %q; want the usage line", strings.Join(tc.args, " "), lines[1])
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("serve with a mistaken flag created %s; want nothing done", db)
	}
}

// TestVersionCommand checks that `subsecond version`, --version, -version
// and -v all print the version line, and nothing else.
func TestVersionCommand(t *testing.T) {
	want, _, err := runCmd(t, nil, "--version")
	if err != nil || !strings.HasPrefix(want, "subsecond ") {
		t.Fatalf("subsecond --version = %q, %v; want the version line", want, err)
	}
	for _, args := range [][]string{{"version"}, {"-version"}, {"-v"}} {
		if got, stderr, err := runCmd(t, nil, args...); got != want || stderr != "" || err != nil {
			t.Errorf("subsecond %s = %q, stderr %q, %v; want %q", strings.Join(args, " "), got, stderr, err, want)
		}
	}
}

// TestEmptyInput runs every command that reads a capture on an empty file
// (and on empty standard input) and checks that each says so in the same
// sentence, naming it, and fails.
func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	for _, tc := range []struct {
		args []string
		name string // what the error calls the input
	}{
		{[]string{"heatmap", empty}, empty},
		{[]string{"cpus", empty}, empty},
		{[]string{"flamegraph", empty}, empty},
		{[]string{"hotspots", empty}, empty},
		{[]string{"import", "--db", db, empty}, empty},
		{[]string{"collapse", empty}, empty},
		{[]string{"collapse"}, "stdin"},
		{[]string{"heatmap", "-"}, "stdin"},
		{[]string{"import", "--db", db, "-"}, "stdin"},
	} {
		stdout, stderr, err := runCmd(t, nil, tc.args...)
		want := tc.args[0] + ": " + tc.name + " is empty: a capture is the text perf script prints (perf script > FILE)"
		got := stderr
		if err != nil {
			got += err.Error()
		}
		if tc.args[0] == "import" {
			// import goes on to its other files: each error on stderr,
			// then the count of those that failed.
			want = "subsecond: " + want + "\nimport: 1 of 1 files failed"
		}
		if err == nil || got != want || stdout != "" {
			t.Errorf("subsecond %s = error %v, stdout %q, stderr %q; want %q alone",
				strings.Join(tc.args, " "), err, stdout, stderr, want)
		}
	}
}

// TestFlagHelpPerCommand checks that a flag shared by several commands
// is described, in each command's help, by the text for the view that
// command shows and not by that of another view.
func TestFlagHelpPerCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag   string
		want, avoid string
	}{
		{"cpus", "comm", "exact command name", "comm shares"},
		{"heatmap", "comm", "exact command name", "comm shares"},
		{"cpus", "bucket", "cores map", "timeline"},
		{"hotspots", "bucket", "hot spots", "timeline"},
		{"timeline", "bucket", "at least 1 s", "cores map"},
		{"hotspots", "limit", "hot spots", "comm shares"},
		{"flamegraph", "from", "instead of start", "session"},
		{"timeline", "from", "session", "instead of start"},
		{"timeline", "to", "session", "instead of end"},
	} {
		fs, err := commandFlags(t, tc.cmd)
		if err != nil {
			t.Fatalf("%s: %v", tc.cmd, err)
		}
		f := fs.Lookup(tc.flag)
		if f == nil {
			t.Errorf("%s has no flag -%s", tc.cmd, tc.flag)
			continue
		}
		if !strings.Contains(f.Usage, tc.want) || strings.Contains(f.Usage, tc.avoid) {
			t.Errorf("%s -%s help = %q; want it to say %q, not %q", tc.cmd, tc.flag, f.Usage, tc.want, tc.avoid)
		}
	}
}
