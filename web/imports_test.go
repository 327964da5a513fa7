package web

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond/link"
)

// importRE matches a module's imports of its siblings: import … from "./x",
// type-only ones included, and export … from "./x".
var importRE = regexp.MustCompile(`(?m)^(?:import|export)\b[^;]*?\bfrom\s+"\./([\w-]+)(?:\.ts)?"`)

// TestScriptImports checks that the modules of web/src import one another
// without a cycle, type-only imports included: wire types come from
// wire.ts, formatters from format.ts, and no widget is imported by the
// modules it needs.
func TestScriptImports(t *testing.T) {
	files, err := filepath.Glob("src/*.ts")
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".ts")
		deps[name] = nil
		for _, m := range importRE.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(deps[name], m[1]) {
				deps[name] = append(deps[name], m[1])
			}
		}
	}
	if len(deps) == 0 || len(deps["app"]) == 0 {
		t.Fatalf("found no imports in web/src (%d modules)", len(deps))
	}
	for _, c := range importCycles(deps) {
		t.Errorf("import cycle in web/src: %s", strings.Join(c, " → "))
	}
}

// importCycles returns a cycle through each module that is on one, as the
// path from the module back to itself; each cycle is reported once.
func importCycles(deps map[string][]string) [][]string {
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	slices.Sort(names)
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var cycles [][]string
	var visit func(n string)
	visit = func(n string) {
		state[n] = open
		stack = append(stack, n)
		for _, d := range deps[n] {
			switch state[d] {
			case unseen:
				visit(d)
			case open:
				i := slices.Index(stack, d)
				cycles = append(cycles, append(slices.Clone(stack[i:]), d))
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range names {
		if state[n] == unseen {
			visit(n)
		}
	}
	return cycles
}

func TestImportCycles(t *testing.T) {
	for _, tc := range []struct {
		deps map[string][]string
		want string
	}{
		{map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}, ""},
		{map[string][]string{"state": {"types"}, "types": {"wallclock"}, "wallclock": {"state"}}, "state → types → wallclock → state"},
		{map[string][]string{"a": {"a"}}, "a → a"},
	} {
		var got []string
		for _, c := range importCycles(tc.deps) {
			got = append(got, strings.Join(c, " → "))
		}
		if s := strings.Join(got, "; "); s != tc.want {
			t.Errorf("importCycles(%v) = %q; want %q", tc.deps, s, tc.want)
		}
	}
}

// TestScriptPaths checks that no module of web/src but links.ts, which is
// generated from package link, spells a page's or the API's path: each
// builds its links with links.ts's path and withQuery.
func TestScriptPaths(t *testing.T) {
	files, err := filepath.Glob("src/*.ts")
	if err != nil {
		t.Fatal(err)
	}
	re := pathRE(link.Routes)
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "links.ts" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for i, line := range strings.Split(string(b), "\n") {
			if m := re.FindString(line); m != "" {
				t.Errorf("%s:%d: %q spells a route's path; build it with links.ts's path or withQuery", f, i+1, m)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no modules in web/src")
	}
}

// pathRE matches what begins a route's path, or a segment of one, in
// TypeScript: a quote, backquote or a template's closing brace, then "/"
// and a literal segment of one of routes ("/api/", "/p/", `${api}/heatmap`).
func pathRE(routes []struct {
	Name  string
	Route link.Route
}) *regexp.Regexp {
	var segs []string
	for _, r := range routes {
		for _, s := range strings.Split(string(r.Route), "/") {
			if s != "" && !strings.HasPrefix(s, "{") && !slices.Contains(segs, s) {
				segs = append(segs, regexp.QuoteMeta(s))
			}
		}
	}
	slices.Sort(segs)
	return regexp.MustCompile("([\"'`]|\\})/(?:" + strings.Join(segs, "|") + ")\\b")
}

func TestPathRE(t *testing.T) {
	re := pathRE(link.Routes)
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`fetch("/api/profiles")`, true},
		{"const t = `/p/${id}/diff?${q}`;", true},
		{"getJSON(`${api}/heatmap?${q}`)", true},
		{`u.pathname.startsWith('/hosts')`, true},
		{`withQuery("flamePage", q, id)`, false},
		{`// opens /p/ID/diff?base=ID2`, false},
		{`"/static/app.js"`, false},
		{`"/profile"`, false},
		{`a / p`, false},
	} {
		if got := re.MatchString(tc.line); got != tc.want {
			t.Errorf("pathRE matches %q = %v; want %v", tc.line, got, tc.want)
		}
	}
}
