package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// errStop ends a command right after its flags are parsed.
var errStop = errors.New("stop after parsing flags")

// commandFlags returns the FlagSet command name parses args with, without
// running the command.
func commandFlags(t *testing.T, name string, args ...string) (*flag.FlagSet, error) {
	t.Helper()
	c, ok := commands()[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	var fs *flag.FlagSet
	var stderr bytes.Buffer
	err := c.run(context.Background(), env{args: args, stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		parsed: func(f *flag.FlagSet) error { fs = f; return errStop }})
	if errors.Is(err, errStop) {
		return fs, nil
	}
	if err == nil {
		t.Fatalf("%s %q: ran without calling parseFlags", name, args)
	}
	return nil, err
}

// TestHelperMain is not a test on its own: TestHelp runs the test binary
// again with SUBSECOND_HELP_ARGS set, and this function then runs main with
// those arguments, exiting as the binary would.
func TestHelperMain(t *testing.T) {
	args, ok := os.LookupEnv("SUBSECOND_HELP_ARGS")
	if !ok {
		return
	}
	os.Args = append([]string{"subsecond"}, strings.Fields(args)...)
	main()
	os.Exit(0)
}

// runMain runs the binary's main with args in a child process and returns
// its standard output, standard error and exit code.
func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMain$")
	cmd.Env = append(os.Environ(), "SUBSECOND_HELP_ARGS="+strings.Join(args, " "),
		"SUBSECOND_DB="+t.TempDir()+"/never-opened.db")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestHelp runs every command with -h, -help and --help as the binary and
// checks that the help goes to standard output, exits 0, and describes
// every flag of the command's real FlagSet.
func TestHelp(t *testing.T) {
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fs, err := commandFlags(t, name)
			if err != nil {
				t.Fatalf("%s with no arguments: %v before parsing flags", name, err)
			}
			for _, h := range []string{"--help", "-help", "-h"} {
				stdout, stderr, code := runMain(t, name, h)
				if code != 0 {
					t.Errorf("subsecond %s %s exits %d; want 0 (stderr %q)", name, h, code, stderr)
				}
				if stderr != "" {
					t.Errorf("subsecond %s %s writes to stderr: %q; want help on stdout only", name, h, stderr)
				}
				if !strings.HasPrefix(stdout, "Usage: subsecond "+name) {
					t.Errorf("subsecond %s %s: stdout starts %q; want \"Usage: subsecond %s\"", name, h, firstLine(stdout), name)
				}
				if h != "--help" {
					continue
				}
				fs.VisitAll(func(f *flag.Flag) {
					if strings.TrimSpace(f.Usage) == "" {
						t.Errorf("subsecond %s: flag -%s has no description", name, f.Name)
						return
					}
					if !hasFlagLine(stdout, f.Name) {
						t.Errorf("subsecond %s --help does not list -%s:\n%s", name, f.Name, stdout)
					}
					_, usage := flag.UnquoteUsage(f)
					if !strings.Contains(stdout, usage) {
						t.Errorf("subsecond %s --help lacks the description of -%s (%q)", name, f.Name, usage)
					}
					// A switch takes no value: its help says what it
					// does, not "1 to …" as the URL parameter's does.
					if isBool(f) && (strings.HasPrefix(usage, "1 ") || strings.Contains(usage, " 1 to ")) {
						t.Errorf("subsecond %s: switch -%s is described as taking a value: %q", name, f.Name, usage)
					}
				})
			}
		})
	}
}

// TestHelpTopLevel checks `subsecond --help` and `subsecond help CMD`.
func TestHelpTopLevel(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		stdout, stderr, code := runMain(t, args...)
		if code != 0 || stderr != "" {
			t.Errorf("subsecond %s: exit %d, stderr %q; want 0 and nothing", args[0], code, stderr)
		}
		for name, c := range commands() {
			if !strings.Contains(stdout, "  "+name+" ") || !strings.Contains(stdout, c.summary) {
				t.Errorf("subsecond %s does not list %s (%q):\n%s", args[0], name, c.summary, stdout)
			}
		}
		for _, v := range []string{"SUBSECOND_DB", "SUBSECOND_ADDR", "SUBSECOND_TOKEN", "SUBSECOND_READ_ONLY"} {
			if !strings.Contains(stdout, v) {
				t.Errorf("subsecond %s does not describe $%s", args[0], v)
			}
		}
	}
	stdout, _, code := runMain(t, "help", "cpus")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: subsecond cpus") {
		t.Errorf("subsecond help cpus: exit %d, stdout %q; want 0 and the cpus usage", code, firstLine(stdout))
	}
	// Flags may follow arguments, a help flag too; after "--" it is an
	// argument.
	if stdout, stderr, code := runMain(t, "info", "no-such-profile", "--help"); code != 0 || !strings.HasPrefix(stdout, "Usage: subsecond info") {
		t.Errorf("subsecond info no-such-profile --help: exit %d, stdout %q, stderr %q; want 0 and the usage", code, firstLine(stdout), stderr)
	}
	if _, stderr, code := runMain(t, "info", "--", "--help"); code == 0 {
		t.Errorf("subsecond info -- --help exits 0; want an error, --help being the ID (stderr %q)", stderr)
	}
	// A bad flag is an error on stderr with the usage there too.
	stdout, stderr, code := runMain(t, "list", "--no-such-flag")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "no-such-flag") || !strings.Contains(stderr, "Usage: subsecond list") {
		t.Errorf("subsecond list --no-such-flag: exit %d, stdout %q, stderr %q; want non-zero, nothing, the error and usage", code, stdout, stderr)
	}
}

func TestWantsHelp(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("db", "", "")
	fs.Bool("idle", false, "")
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--help"}, true},
		{[]string{"-h"}, true},
		{[]string{"-help=1"}, true},
		{[]string{"--db", "x.db", "--help"}, true},
		{[]string{"--idle", "--help"}, true},
		{[]string{"--db", "--help"}, false}, // --help is the value of --db
		{[]string{"--db=--help"}, false},
		{[]string{"ID", "--help"}, true},
		{[]string{"--", "--help"}, false},
		{[]string{"ID", "--", "--help"}, false},
		{[]string{"-", "--help"}, true},
		{nil, false},
	} {
		if got := wantsHelp(fs, tc.args); got != tc.want {
			t.Errorf("wantsHelp(%q) = %v; want %v", tc.args, got, tc.want)
		}
	}
}

// hasFlagLine reports whether PrintDefaults-style help lists -name at the
// start of a line.
func hasFlagLine(help, name string) bool {
	for _, l := range strings.Split(help, "\n") {
		l = strings.TrimSpace(l)
		if l == "-"+name || strings.HasPrefix(l, "-"+name+" ") || strings.HasPrefix(l, "-"+name+"\t") {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestExtraArguments runs every command with an argument more than it
// takes and checks that it refuses it by name, followed by its usage
// lines, before doing anything; none ignores it.
func TestExtraArguments(t *testing.T) {
	extra := map[string][]string{
		"list":       {"extra"},
		"hosts":      {"HOST", "extra"},
		"info":       {"ID", "extra"},
		"prune":      {"--older-than", "72h", "extra"},
		"reindex":    {"extra"},
		"timeline":   {"--host", "h", "extra"},
		"markers":    {"list", "--host", "h", "extra"},
		"collapse":   {"FILE", "extra"},
		"generate":   {"extra"},
		"record":     {"extra"},
		"version":    {"extra"},
		"heatmap":    {"ID", "extra"},
		"cpus":       {"ID", "extra"},
		"flamegraph": {"ID", "extra"},
		"hotspots":   {"ID", "extra"},
		"state":      {"--host", "h", "extra"},
		"explain":    {"--host", "h", "extra"},
		"fleet":      {"extra"},
		// These take any number of arguments.
		"import": nil, "delete": nil, "serve": nil,
	}
	for name := range commands() {
		args, ok := extra[name]
		if !ok {
			t.Errorf("command %s: add it to TestExtraArguments", name)
		}
		if args == nil {
			continue
		}
		stdout, stderr, code := runMain(t, append([]string{name}, args...)...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code == 0 || stdout != "" || lines[0] != "subsecond: "+name+`: unexpected argument "extra"` ||
			len(lines) < 2 || !strings.HasPrefix(lines[1], "Usage: subsecond "+name) {
			t.Errorf("subsecond %s %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1, the argument refused and the usage line", name, strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
