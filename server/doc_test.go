package server

import (
	"bufio"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/subsecond/subsecond/query"
)

// routes returns the server's routes as "METHOD pattern".
func routes(t *testing.T) (chi.Routes, []string) {
	t.Helper()
	mux, ok := New(Config{}).Handler().(chi.Routes)
	if !ok {
		t.Fatal("Handler is not a chi router")
	}
	var list []string
	err := chi.Walk(mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		list = append(list, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mux, list
}

// TestRoutesDocumented checks the package doc's tables of routes (what `go
// doc ./server` shows, and the README points to) against the routes the
// server registers, both ways.
func TestRoutesDocumented(t *testing.T) {
	_, registered := routes(t)
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lineRE := regexp.MustCompile(`^//\s+(GET|POST|PUT|PATCH|DELETE)\s+(/\S*)`)
	var documented []string
	sc := bufio.NewScanner(strings.NewReader(string(doc)))
	for sc.Scan() {
		if m := lineRE.FindStringSubmatch(sc.Text()); m != nil {
			path, _, _ := strings.Cut(m[2], "?")
			documented = append(documented, m[1]+" "+path)
		}
	}
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in the package doc's tables", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("the package doc lists %s, which the server does not route", d)
		}
	}
	if len(registered) < 20 {
		t.Errorf("found %d routes; want the server's", len(registered))
	}
}

// readmeParams are the query parameters of the README's API examples that
// are not in the query table: chosen per route.
var readmeParams = []string{"format", "name", "host", "match", "comm"}

// TestReadmeRoutes checks each curl command of the README's shell blocks
// against the server's routes: the method it sends (-X, or POST with a
// body) and its path are routed, and its query parameters are ones the
// server reads.
func TestReadmeRoutes(t *testing.T) {
	mux, _ := routes(t)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	known := slices.Clone(readmeParams)
	for _, p := range query.Params() {
		known = append(known, p.Name)
	}
	urlRE := regexp.MustCompile(`https?://(?:HOST|127\.0\.0\.1|localhost)(?::\d+)?(/[^'"\s]*)`)
	methodRE := regexp.MustCompile(`-X\s*([A-Z]+)`)
	n := 0
	inShell := false
	for i, line := range strings.Split(string(readme), "\n") {
		if f := strings.TrimSpace(line); strings.HasPrefix(f, "```") {
			inShell = !inShell && (f == "```sh" || f == "```bash")
			continue
		}
		if !inShell || !strings.Contains(line, "curl ") {
			continue
		}
		cmd, _, _ := strings.Cut(line[strings.Index(line, "curl "):], " # ")
		m := urlRE.FindStringSubmatch(cmd)
		if m == nil {
			continue
		}
		n++
		method := http.MethodGet
		if mm := methodRE.FindStringSubmatch(cmd); mm != nil {
			method = mm[1]
		} else if strings.Contains(cmd, "--data") || strings.Contains(cmd, " -d ") || strings.Contains(cmd, " -F ") {
			method = http.MethodPost
		}
		u, err := url.Parse(m[1])
		if err != nil {
			t.Errorf("README.md:%d: %v", i+1, err)
			continue
		}
		path := strings.ReplaceAll(u.Path, "$ID", "ID")
		if !mux.Match(chi.NewRouteContext(), method, path) {
			t.Errorf("README.md:%d: %s %s is not a route of the server", i+1, method, path)
		}
		for k := range u.Query() {
			if !slices.Contains(known, k) {
				t.Errorf("README.md:%d: %s %s: no query parameter %q (the query table's and %v)", i+1, method, path, k, readmeParams)
			}
		}
	}
	if n < 15 {
		t.Errorf("found %d curl commands in README.md's shell blocks; want the API's examples", n)
	}
}
