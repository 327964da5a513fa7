package flame

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestScriptSyntax checks the SVG's embedded script with node, which CI
// installs for the front end's build.
func TestScriptSyntax(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	p := filepath.Join(t.TempDir(), "svg.js")
	if err := os.WriteFile(p, []byte(svgScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}
