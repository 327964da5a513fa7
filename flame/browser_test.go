package flame_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/query"
)

// TestSVGInBrowser opens a standalone SVG in chromium (driven by
// playwright-core from the repository's node_modules, as the browser tests
// are) and checks click-zoom, reset, search and hover.
func TestSVGInBrowser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CHROMIUM") == "" {
		t.Skip("chromium not installed")
	}
	if _, err := os.Stat("../node_modules/playwright-core"); err != nil {
		t.Skip("playwright-core not installed (npm ci)")
	}
	_, c := data(t)
	t0 := c.Profile.T0()
	g, err := flame.Build(c, query.Filter{Idle: true}, subsecond.Range{Start: t0, End: t0 + 10e9})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "g.svg")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteSVG(f, flame.SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := exec.Command(node, "testdata/svg_browser.mjs", p, "^mem_cgroup")
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var out struct {
		Errors  []string
		Dialogs []string
		Frames  int
		Target  struct {
			Name string
			W    float64
		}
		Zoomed struct {
			Width         float64
			Hidden        int
			Parents       int
			UnzoomVisible bool
		}
		Unzoomed struct {
			Width  float64
			Hidden int
		}
		Search struct {
			Matched     string
			Highlighted []string
			Button      string
		}
		Details string
		Names   []string
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(out.Errors) > 0 {
		t.Errorf("script errors: %v", out.Errors)
	}
	if strings.Join(out.Dialogs, ",") != "prompt" {
		t.Errorf("dialogs = %v; want only the search prompt (a hostile name must not run)", out.Dialogs)
	}
	if out.Frames < 50 {
		t.Fatalf("%d frames drawn", out.Frames)
	}
	if out.Zoomed.Width < 1179 || out.Zoomed.Hidden == 0 || out.Zoomed.Parents != 3 || !out.Zoomed.UnzoomVisible {
		t.Errorf("after clicking %q (%.3f wide): %+v; want it 1180 px wide, others hidden, its 3 ancestors faded, Reset Zoom shown", out.Target.Name, out.Target.W, out.Zoomed)
	}
	if want := out.Target.W * 1180; out.Unzoomed.Hidden != 0 || out.Unzoomed.Width < want-0.1 || out.Unzoomed.Width > want+0.1 {
		t.Errorf("after Reset Zoom: %+v; want width %.1f and nothing hidden", out.Unzoomed, want)
	}
	if len(out.Search.Highlighted) == 0 || !strings.HasPrefix(out.Search.Matched, "Matched: ") || out.Search.Matched == "Matched: 0.0%" || out.Search.Button != "Reset Search" {
		t.Errorf("search: %+v", out.Search)
	}
	for _, n := range out.Search.Highlighted {
		if !strings.HasPrefix(n, "mem_cgroup") {
			t.Errorf("search highlighted %q", n)
		}
	}
	if !strings.HasPrefix(out.Details, out.Target.Name+" (") {
		t.Errorf("hover details = %q; want %q's", out.Details, out.Target.Name)
	}
	found := false
	for _, n := range out.Names {
		found = found || n == "<script>alert"
	}
	if !found {
		t.Error("the hostile name did not survive as text")
	}
}
