package web

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
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
