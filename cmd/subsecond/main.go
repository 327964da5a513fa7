// Command subsecond imports Linux perf captures and serves subsecond
// heatmaps and flame graphs of them. Run with no arguments it serves the
// bundled sample; `subsecond help` lists the other commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/subsecond/subsecond/query"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(termWriter(os.Stderr), "subsecond:", query.Message(err))
		os.Exit(1)
	}
}

// env is what every command receives: its arguments and standard streams.
type env struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// implicit is set when no command was named and the default, serve,
	// runs: a bare `subsecond` on a new machine imports the bundled sample.
	implicit bool
	// parsed, when set (by tests), is called once a command has parsed
	// its flags; a non-nil error ends the command there.
	parsed func(*flag.FlagSet) error
}

// command is one subcommand of the binary.
type command struct {
	summary string
	run     func(ctx context.Context, e env) error
}

// commands returns the subcommand table.
func commands() map[string]command {
	return map[string]command{
		"collapse":   {"print folded stacks of a perf script capture", runCollapse},
		"generate":   {"write a synthetic perf script capture with planted incidents", runGenerate},
		"import":     {"import captures into the database", runImport},
		"list":       {"list stored profiles", runList},
		"info":       {"show one stored profile", runInfo},
		"delete":     {"delete a stored profile", runDelete},
		"prune":      {"delete captures older than a duration", runPrune},
		"reindex":    {"build the fleet index of captures imported before it existed", runReindex},
		"hosts":      {"list the hosts of the stored captures", runHosts},
		"timeline":   {"print a host's cores × time map across its captures", runTimeline},
		"markers":    {"import event markers from a host's kernel log", runMarkers},
		"state":      {"print a host's series (per-CPU time, cgroups, interrupts) or import mpstat/sar text", runState},
		"explain":    {"rank what is unusual before a host's markers, with significance", runExplain},
		"fleet":      {"rank the hosts by a function's, command's or call edge's share; contrast label groups and uptimes", runFleet},
		"heatmap":    {"print a subsecond offset heatmap", runHeatmap},
		"cpus":       {"print the cores × time map", runCPUs},
		"flamegraph": {"render the flame graph of a time range", runFlamegraph},
		"hotspots":   {"list busy episodes worth a look", runHotspots},
		"serve":      {"serve the web app (the default command)", runServe},
		"record":     {"record this host with perf in rolling captures, importing or uploading each", runRecord},
		"version":    {"print the version and the revision it was built from", runVersion},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmds := commands()
	name, implicit := "serve", true
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		if args[0] == "help" && len(args) > 1 {
			c, ok := cmds[args[1]]
			if !ok {
				return unknownName("help topic", args[1], cmds)
			}
			// `subsecond help CMD` is `subsecond CMD --help`.
			return c.run(ctx, env{args: []string{"--help"}, stdin: stdin, stdout: stdout, stderr: stderr})
		}
		usage(stdout, cmds)
		return nil
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-v" || args[0] == "--v") {
		name, args, implicit = "version", args[1:], false
	}
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' && name == "serve" {
		name, args, implicit = args[0], args[1:], false
	}
	c, ok := cmds[name]
	if !ok {
		return unknownName("command", name, cmds)
	}
	return flagNames(c.run(ctx, env{args: args, stdin: stdin, stdout: stdout, stderr: stderr, implicit: implicit}))
}

// unknownName returns the error for a command or help topic (what) that
// is not in cmds, naming the closest command when one is near enough to
// be a typo: `unknown command "hotspot"; did you mean "hotspots"?`.
func unknownName(what, name string, cmds map[string]command) error {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	if s := suggest(name, names); s != "" {
		return fmt.Errorf("unknown %s %q; did you mean %q?", what, name, s)
	}
	return fmt.Errorf("unknown %s %q; 'subsecond help' lists the commands", what, name)
}

// runVersion implements `subsecond version` (also --version and -v): the
// line versionText writes.
func runVersion(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond version\n\nPrints the version, the revision it was built from and the Go toolchain.\n'subsecond --version' and 'subsecond -v' do the same.")
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionText(bi))
	return nil
}

// flagNames returns err as the CLI shows it: the parameter a
// *query.ParamError in it names is written as the flag that sets it,
// "--event: …", where the API writes the bare name, "event: …". It is the
// one place that does so: commands wrap parameter errors without adding
// the dashes.
func flagNames(err error) error {
	var pe *query.ParamError
	if err == nil || !errors.As(err, &pe) || pe.Name == "" || strings.HasPrefix(pe.Name, "-") {
		return err
	}
	msg, name := err.Error(), pe.Error()
	i := strings.LastIndex(msg, name)
	if i < 0 {
		return err
	}
	return &cliError{msg: msg[:i] + "--" + msg[i:], err: err}
}

// cliError is an error with the text the CLI shows for it; it unwraps to
// the error it rewords.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// versionText describes the binary from its build information: the
// module's version ("(devel)" when built from a checkout), the VCS
// revision, its time and whether the tree was modified, and the Go
// toolchain: "subsecond v1.4.0 (revision 3f2a…, 2026-11-30T10:00:00Z) go1.26.8".
func versionText(bi *debug.BuildInfo) string {
	if bi == nil {
		return "subsecond (version unknown: built without module information)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev := "revision unknown: built without VCS information (-buildvcs=false)"
	if r := settings["vcs.revision"]; r != "" {
		rev = "revision " + r
		if t := settings["vcs.time"]; t != "" {
			rev += ", " + t
		}
		if settings["vcs.modified"] == "true" {
			rev += ", modified"
		}
	}
	return fmt.Sprintf("subsecond %s (%s) %s", v, rev, bi.GoVersion)
}

// argAt returns args[i], or "" past the end.
func argAt(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: subsecond [COMMAND] [FLAGS] [ARGS]")
	fmt.Fprintln(w, "\nWith no command, subsecond serves the web app on the bundled sample.\n\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'subsecond COMMAND --help' (or 'subsecond help COMMAND') for a command's flags;")
	fmt.Fprintln(w, "\nEnvironment:")
	fmt.Fprintln(w, "  SUBSECOND_DB         database file (default $XDG_DATA_HOME/subsecond/subsecond.db,")
	fmt.Fprintln(w, "                       else ~/.local/share/subsecond/subsecond.db)")
	fmt.Fprintln(w, "  SUBSECOND_ADDR       serve: listen address (default localhost:8080)")
	fmt.Fprintln(w, "  SUBSECOND_TOKEN      serve: bearer token required for uploads and deletes")
	fmt.Fprintln(w, "  SUBSECOND_READ_ONLY  serve: 1 refuses uploads and deletes")
}
