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
