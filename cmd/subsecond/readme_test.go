package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shellFences are the info strings of the README's fenced blocks that hold
// commands; blocks of output are fenced without one.
var shellFences = map[string]bool{"sh": true, "bash": true, "shell": true}

// cliDocs are the Markdown files whose shell blocks hold `subsecond …`
// examples: the README and the CLI reference it links to. Between them
// every command has an example.
var cliDocs = []string{"../../README.md", "../../docs/cli.md"}

// readmeInvocation is one `subsecond …` command line found in the README.
type readmeInvocation struct {
	file string // where it was found, as in cliDocs
	line int    // 1-based line in file
	text string
	args []string // after the program name
}

// TestReadmeCommands checks every `subsecond …` (and `go run ./cmd/subsecond
// …`) command in the shell blocks of README.md and docs/cli.md against the
// real command table and FlagSets: the command exists, its flags parse, and
// no flag follows a positional argument (where Go's flag package would take
// it for one). Every command must have an example in one of them.
func TestReadmeCommands(t *testing.T) {
	var invs []readmeInvocation
	for _, path := range cliDocs {
		found, err := readmeInvocations(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) < 10 {
			t.Errorf("found %d subsecond command lines in %s; want its examples (at least 10)", len(found), path)
		}
		invs = append(invs, found...)
	}
	cmds := commands()
	used := map[string]bool{}
	for _, inv := range invs {
		name, args := "serve", inv.args
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			name, args = args[0], args[1:]
		}
		if name == "help" {
			if len(args) > 0 {
				if _, ok := cmds[args[0]]; !ok {
					t.Errorf("%s:%d: %s: 'help %s' names no command", inv.file, inv.line, inv.text, args[0])
				}
			}
			continue
		}
		if _, ok := cmds[name]; !ok {
			t.Errorf("%s:%d: %s: no command %q", inv.file, inv.line, inv.text, name)
			continue
		}
		used[name] = true
		_, err := commandFlags(t, name, args...)
		if err != nil {
			t.Errorf("%s:%d: %s: %v", inv.file, inv.line, inv.text, err)
			continue
		}
	}
	for name := range cmds {
		if !used[name] {
			t.Errorf("neither README.md nor docs/cli.md has an example of 'subsecond %s'", name)
		}
	}
}

// TestReadmeExtraction checks the extraction on a made-up README, so that
// TestReadmeCommands cannot pass by finding nothing.
func TestReadmeExtraction(t *testing.T) {
	readme := "# x\n\n```sh\n" +
		"go run ./cmd/subsecond      # serve\n" +
		"ID=$(subsecond list | awk 'NR==2 {print $1}')\n" +
		"subsecond flamegraph --start 1 \\\n    --end 2 \"$ID\" > out.svg   # a comment\n" +
		"curl -s x | subsecond collapse -; echo 'subsecond not-a-command'\n" +
		"```\n\n```\nsubsecond output --not parsed\n```\n\n```bash\n$ ./subsecond cpus --cpu 39 $ID && true\n```\n"
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	invs, err := readmeInvocations(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, inv := range invs {
		got = append(got, fmt.Sprintf("%d:%q", inv.line, inv.args))
	}
	want := []string{`4:[]`, `5:["list"]`, `6:["flamegraph" "--start" "1" "--end" "2" "$ID"]`,
		`8:["collapse" "-"]`, `16:["cpus" "--cpu" "39" "$ID"]`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("readmeInvocations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// And the checks catch what they should: an unknown flag, a flag
	// without its value; flags after the ID are parsed.
	for _, bad := range [][]string{{"list", "--no-such-flag"}, {"cpus", "--bucket"}} {
		if _, err := commandFlags(t, bad[0], bad[1:]...); err == nil {
			t.Errorf("commandFlags(%q) = nil error; want a flag error", bad)
		}
	}
	fs, err := commandFlags(t, "hotspots", "ID", "--limit", "3")
	if err != nil || len(fs.Args()) != 1 || fs.Lookup("limit").Value.String() != "3" {
		t.Errorf("commandFlags(hotspots ID --limit 3): args %v, err %v; want the flag after the argument parsed", fs.Args(), err)
	}
	fs, err = commandFlags(t, "hotspots", "--", "ID", "--limit", "3")
	if err != nil || strings.Join(fs.Args(), " ") != "ID --limit 3" || fs.Lookup("limit").Value.String() != "" {
		t.Errorf("commandFlags(hotspots -- ID --limit 3): args %v, err %v; want everything after -- as arguments", fs.Args(), err)
	}
}

// readmeInvocations returns the subsecond command lines in the shell blocks
// of the Markdown file at path.
func readmeInvocations(path string) ([]readmeInvocation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var invs []readmeInvocation
	inShell, inFence := false, false
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "```") {
			if inFence {
				inFence, inShell = false, false
			} else {
				inFence, inShell = true, shellFences[strings.TrimSpace(strings.TrimPrefix(line, "```"))]
			}
			continue
		}
		if !inShell {
			continue
		}
		start := i
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		line = strings.TrimPrefix(line, "$ ")
		words, err := shellWords(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, start+1, err)
		}
		for _, cmd := range simpleCommands(words) {
			if args, ok := subsecondArgs(cmd); ok {
				invs = append(invs, readmeInvocation{file: path, line: start + 1, text: line, args: args})
			}
		}
	}
	return invs, nil
}

// shellOps are the operators that end a simple command, longest first.
var shellOps = []string{"&&", "||", "$(", "|", ";", "&", ")", ">", "<"}

// shellWords splits a line of shell into words and operators, following
// quotes and backslashes and dropping a trailing comment. Operators come
// back prefixed with NUL so they cannot be mistaken for words.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				w.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, errors.New("unterminated double quote")
			}
			inWord, i = true, j
		case c == '\\' && i+1 < len(line):
			w.WriteByte(line[i+1])
			inWord, i = true, i+1
		default:
			op := ""
			for _, o := range shellOps {
				if strings.HasPrefix(line[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				w.WriteByte(c)
				inWord = true
				continue
			}
			flush()
			words = append(words, "\x00"+op)
			i += len(op) - 1
		}
	}
	flush()
	return words, nil
}

// simpleCommands splits words at operators; a redirection's target is
// dropped with it.
func simpleCommands(words []string) [][]string {
	var cmds [][]string
	var cur []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "\x00") {
			cur = append(cur, w)
			continue
		}
		if w == "\x00>" || w == "\x00<" {
			i++ // the file
			if n := len(cur); n > 0 && (cur[n-1] == "2" || cur[n-1] == "1") {
				cur = cur[:n-1] // 2>/dev/null
			}
			continue
		}
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// subsecondArgs reports whether cmd runs subsecond (as subsecond,
// ./subsecond, /path/subsecond or go run ./cmd/subsecond), and with which
// arguments. Leading VAR=value assignments are skipped.
func subsecondArgs(cmd []string) ([]string, bool) {
	for len(cmd) > 0 && strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "-") {
		cmd = cmd[1:]
	}
	switch {
	case len(cmd) > 0 && filepath.Base(cmd[0]) == "subsecond":
		return cmd[1:], true
	case len(cmd) > 2 && cmd[0] == "go" && cmd[1] == "run" && strings.HasSuffix(cmd[2], "cmd/subsecond"):
		return cmd[3:], true
	}
	return nil, false
}

// TestReadmeConfiguration checks docs/configuration.md's table of serve's
// flags against serve's FlagSet both ways: every flag it names exists, with
// the environment variable it names mentioned in the flag's help, and every
// flag of serve has a row. The flags its section on limits names must exist
// too.
func TestReadmeConfiguration(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := commandFlags(t, "serve")
	if err != nil {
		t.Fatal(err)
	}
	config := readmeSection(string(data), "## Flags and environment")
	limits := readmeSection(string(data), "## Limits")
	if config == "" || limits == "" {
		t.Fatal(`docs/configuration.md has no "## Flags and environment" or "## Limits" section`)
	}
	flagRE := regexp.MustCompile("`--([a-z][a-z0-9-]*)")
	envRE := regexp.MustCompile(`\b(SUBSECOND_[A-Z_]+|GOMEMLIMIT)\b`)
	rows := map[string]bool{}
	for _, line := range strings.Split(config, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], "`--") {
			continue
		}
		for _, m := range flagRE.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			rows[name] = true
			f := fs.Lookup(name)
			if f == nil {
				t.Errorf("docs/configuration.md's table names --%s, which serve does not have", name)
				continue
			}
			for _, env := range envRE.FindAllString(cells[2], -1) {
				if !strings.Contains(f.Usage, "$"+env) {
					t.Errorf("docs/configuration.md's table reads --%s from $%s; serve's help for it (%q) does not say so", name, env, f.Usage)
				}
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !rows[f.Name] {
			t.Errorf("serve's --%s has no row in docs/configuration.md's table", f.Name)
		}
	})
	n := 0
	for _, m := range flagRE.FindAllStringSubmatch(limits, -1) {
		n++
		if fs.Lookup(m[1]) == nil {
			t.Errorf("docs/configuration.md's limits names --%s, which serve does not have", m[1])
		}
	}
	if len(rows) < 10 || n < 10 {
		t.Errorf("found %d flags in docs/configuration.md's table and %d in its limits; want them", len(rows), n)
	}
}

// readmeSection returns the text under heading up to the next heading of
// the same or a higher level (outside fenced blocks, where # starts a
// comment), or "" when there is no such heading.
func readmeSection(readme, heading string) string {
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := readme[i+len(heading)+2:]
	level := strings.Fields(heading)[0]
	inFence := false
	at := 0
	for _, line := range strings.SplitAfter(rest, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		} else if h, _, _ := strings.Cut(line, " "); !inFence && h != "" && len(h) <= len(level) && strings.Trim(h, "#") == "" {
			return rest[:at]
		}
		at += len(line)
	}
	return rest
}

// walkthroughScript is the `subsecond` that checkReadmeWalkthrough puts
// first on the shell's PATH: the test binary, run as TestHelperSubsecond
// with the arguments as SUBSECOND_TEST_ARGS (a JSON list).
const walkthroughScript = `#!/bin/bash
json="[" sep=""
for a in "$@"; do a=${a//\\/\\\\}; a=${a//\"/\\\"}; json+="$sep\"$a\""; sep=","; done
SUBSECOND_TEST_MAIN=1 SUBSECOND_TEST_ARGS="$json]" exec "$SUBSECOND_TEST_BINARY" -test.run='^TestHelperSubsecond$'
`

// walkthroughExpect is a trailing comment that states what a command line
// prints, such as # "total":103.
var walkthroughExpect = regexp.MustCompile(`#\s+("[a-z_]+":\S+)\s*$`)

// checkReadmeWalkthrough runs the README's five-step walkthrough, each
// command line of its shell blocks (but go run and curl, the server being
// up already) in bash with subsecond reading db, and checks what they
// print: the output block that follows a shell block must be its
// commands' output, line for line (a line ending in … as a prefix: the
// README cuts long lines), or, where a comment says "below:" what it
// shows, an excerpt of it, its lines in the same order; and a comment
// such as # "total":103 must be in its line's output. The README says
// every output there is real, from the bundled capture.
func checkReadmeWalkthrough(t *testing.T, db string) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	walk := readmeSection(string(data), "## Finding the pegged core: a five-step walkthrough")
	if walk == "" {
		t.Fatal("README.md has no five-step walkthrough")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "subsecond"), []byte(walkthroughScript), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SUBSECOND_DB="+db, "SUBSECOND_TEST_BINARY="+bin)
	sh := func(script string) string {
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README.md's walkthrough: %s: %v\n%s", script, err, out)
		}
		return string(out)
	}

	var assigns []string // ID=…, kept for the later blocks
	var got strings.Builder
	excerpt := false
	lines := strings.Split(walk, "\n")
	blocks, checked := 0, 0
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if shellFences[strings.TrimPrefix(fence, "```")] {
			blocks++
			got.Reset()
			excerpt = false
			for _, line := range body {
				cmd := strings.TrimSpace(line)
				excerpt = excerpt || strings.Contains(cmd, "# below:")
				if cmd == "" || strings.HasPrefix(cmd, "#") || strings.HasPrefix(cmd, "go run") || strings.HasPrefix(cmd, "curl") {
					continue
				}
				out := sh(strings.Join(append(assigns, cmd), "\n"))
				if m := walkthroughExpect.FindStringSubmatch(cmd); m != nil && !strings.Contains(out, m[1]) {
					t.Errorf("README.md's walkthrough: %s\nprints %q; the README says %s", cmd, out, m[1])
				}
				if regexp.MustCompile(`^[A-Z_]+=`).MatchString(cmd) {
					assigns = append(assigns, cmd)
				}
				got.WriteString(out)
			}
			continue
		}
		if fence != "```" || blocks == 0 || got.Len() == 0 {
			continue
		}
		checked++
		out := strings.Split(strings.TrimRight(got.String(), "\n"), "\n")
		if !excerpt && len(out) != len(body) {
			t.Errorf("README.md's walkthrough shows %d lines:\n%s\nits commands print %d:\n%s", len(body), strings.Join(body, "\n"), len(out), got.String())
		}
		j := 0
		for _, want := range body {
			want = strings.TrimRight(want, " ")
			prefix, cut := strings.CutSuffix(want, "…")
			for ; j < len(out); j++ {
				line := strings.TrimRight(out[j], " ")
				if line == want || cut && strings.HasPrefix(line, prefix) {
					break
				}
				if !excerpt {
					j = len(out)
					break
				}
			}
			if j == len(out) {
				t.Errorf("README.md's walkthrough shows\n%s\nwhich its commands no longer print (in that order); they print:\n%s", want, got.String())
				break
			}
			j++
		}
		got.Reset()
	}
	if blocks < 5 || checked < 3 {
		t.Errorf("ran %d shell blocks of README.md's walkthrough and checked %d outputs; want its five steps and three outputs", blocks, checked)
	}
}

// TestDocLinks checks every relative link and image of README.md and
// docs/*.md: the file it points to exists (anchors are not checked).
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)|^\[[^\]]+\]:\s*(\S+)`)
	n := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1] + m[2]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				n++
				if _, err := os.Stat(filepath.Join(filepath.Dir(file), target)); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", strings.TrimPrefix(file, "../../"), i+1, target)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d relative links in README.md and docs/*.md; want the README's links to docs/", n)
	}
}
