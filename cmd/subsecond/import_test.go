package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

const cliCapture = `# ========
# hostname : buildbox
# os release : 6.8.0
# ========
#
java 1234/1240 [001] 100.250000:   10101010 cpu-clock:
	7f0000001000 run+0x10 (/usr/bin/java)
	400100 main+0x20 (/usr/bin/java)

java 1234/1241 [000] 100.500000:   10101010 cpu-clock:
	400100 main+0x20 (/usr/bin/java)

this is not a sample header
	400100 main+0x20 (/usr/bin/java)

swapper 0/0 [002] 102.750000:   10101010 cpu-clock:
	ffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])

`

// runStoreCmd runs the binary's run function with args and stdin, returning
// standard output, standard error and the error.
func runStoreCmd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

var idRE = regexp.MustCompile(`^[a-z2-7]{26}\b`)

func TestImportListInfoDelete(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cli.db")
	plain := filepath.Join(dir, "capture.perf")
	if err := os.WriteFile(plain, []byte(cliCapture), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(cliCapture))
	zw.Close()
	packed := filepath.Join(dir, "capture.perf.gz")
	if err := os.WriteFile(packed, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runStoreCmd(t, "", "import", "--db", db, "--name", "first run", plain)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	id := idRE.FindString(out)
	if id == "" || !strings.Contains(out, "first run: 3 samples, 2.5 s, 3 CPUs, 2 warnings") ||
		!strings.Contains(out, "warning: line 13:") {
		t.Errorf("import printed %q; want the ID, 3 samples, 2.5 s, 3 CPUs, 2 warnings from line 13", out)
	}
	if errOut != "" {
		t.Errorf("import wrote %q to a non-terminal stderr; want nothing (no progress bar)", errOut)
	}

	out, _, err = runStoreCmd(t, "", "import", "--db", db, packed)
	if err != nil || !strings.HasPrefix(out, id) || !strings.Contains(out, "(already stored, imported ") {
		t.Errorf("import of the same capture gzipped = %q, %v; want %s (already stored)", out, err, id)
	}

	out, _, err = runStoreCmd(t, "", "list", "--db", db)
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "first run") || strings.Count(out, "\n") != 2 {
		t.Errorf("list = %q, %v; want a header and the one profile", out, err)
	}

	out, _, err = runStoreCmd(t, "", "info", "--db", db, id)
	for _, want := range []string{"ID:", id, "buildbox", "6.8.0", "cpu-clock: 3 samples", "Warnings: 2", "line 13:", "capture.perf"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
	if err != nil {
		t.Errorf("info: %v", err)
	}
	out, _, err = runStoreCmd(t, "", "info", "--db", db, "--format", "json", id)
	var p subsecond.Profile
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.ID != id || p.Samples != 3 || p.Meta.Hostname != "buildbox" {
		t.Errorf("info --format json = %q, %v; want the profile as JSON", out, err)
	}

	out, _, err = runStoreCmd(t, "", "delete", "--db", db, id)
	if err != nil || out != "deleted "+id+"\n" {
		t.Errorf("delete = %q, %v; want \"deleted %s\"", out, err, id)
	}
	if _, _, err := runStoreCmd(t, "", "info", "--db", db, id); !errors.Is(err, subsecond.ErrNotFound) {
		t.Errorf("info of a deleted profile: %v; want ErrNotFound", err)
	}
	if _, _, err := runStoreCmd(t, "", "delete", "--db", db, id); !errors.Is(err, subsecond.ErrNotFound) {
		t.Errorf("delete of a deleted profile: %v; want ErrNotFound", err)
	}
	out, _, err = runStoreCmd(t, "", "list", "--db", db, "--format", "json")
	if err != nil || strings.Join(strings.Fields(out), "") != `{"profiles":[]}` {
		t.Errorf("list --format json of an empty database = %q, %v; want {\"profiles\": []}, as the API", out, err)
	}
}

func TestImportStdinAndEnvDB(t *testing.T) {
	db := filepath.Join(t.TempDir(), "nested", "env.db")
	t.Setenv("SUBSECOND_DB", db)
	out, errOut, err := runStoreCmd(t, cliCapture, "import", "-")
	if err != nil {
		t.Fatalf("import -: %v\n%s", err, errOut)
	}
	if !idRE.MatchString(out) || !strings.Contains(out, "stdin: 3 samples") {
		t.Errorf("import - printed %q; want an ID and \"stdin: 3 samples\"", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("$SUBSECOND_DB %s was not created: %v", db, err)
	}
	out, _, err = runStoreCmd(t, "", "list")
	if err != nil || !strings.Contains(out, "stdin") {
		t.Errorf("list with $SUBSECOND_DB = %q, %v; want the stdin profile", out, err)
	}
}

func TestImportRefusesNonPerfAndContinues(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	page := filepath.Join(dir, "login.html")
	os.WriteFile(page, []byte("<!DOCTYPE html>\n<html><body>Please sign in</body></html>\n"), 0o644)
	good := filepath.Join(dir, "good.perf")
	os.WriteFile(good, []byte(cliCapture), 0o644)
	missing := filepath.Join(dir, "missing.perf")
	// A truncated gzip file whose name would recolour a terminal.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(cliCapture, 50)))
	zw.Close()
	truncated := filepath.Join(dir, "cut\x1b[31m.gz")
	os.WriteFile(truncated, gz.Bytes()[:gz.Len()/2], 0o644)

	out, errOut, err := runStoreCmd(t, "", "import", "--db", db, page, good, missing, truncated)
	if err == nil || !strings.Contains(err.Error(), "3 of 4 files failed") {
		t.Errorf("import error = %v; want \"3 of 4 files failed\"", err)
	}
	if !strings.Contains(errOut, "login.html") || !strings.Contains(errOut, "looks like HTML") ||
		!strings.Contains(errOut, "missing.perf") || !strings.Contains(errOut, `cut\x1b[31m.gz: truncated gzip input: the compressed stream ends early`+"\n") {
		t.Errorf("import stderr = %q; want the HTML file refused, the missing file named and the truncated one said to be so", errOut)
	}
	if strings.Contains(errOut, ": invalid\n") || strings.Contains(errOut, "\x1b") {
		t.Errorf("import stderr = %q; want no sentinel word at a line's end and no terminal escape", errOut)
	}
	if !strings.Contains(out, "good.perf: 3 samples") {
		t.Errorf("import stdout = %q; want the good file imported", out)
	}
	out, _, _ = runStoreCmd(t, "", "list", "--db", db)
	if strings.Count(out, "\n") != 2 {
		t.Errorf("list after a partly failed import = %q; want only the good profile", out)
	}
}

func TestImportStrict(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	_, errOut, err := runStoreCmd(t, cliCapture, "import", "--db", db, "--strict", "-")
	if err == nil || !strings.Contains(errOut, "line 13") {
		t.Errorf("import --strict = %v, stderr %q; want a failure naming line 13", err, errOut)
	}
	out, _, _ := runStoreCmd(t, "", "list", "--db", db)
	if !strings.Contains(out, "no profiles stored") {
		t.Errorf("list after a failed strict import = %q; want no profiles", out)
	}
}

func TestUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "u.db")
	for _, args := range [][]string{
		{"import", "--db", db},
		{"info", "--db", db},
		{"info", "--db", db, "a", "b"},
		{"delete", "--db", db},
		{"list", "--db", db, "--format", "xml"},
	} {
		if _, _, err := runStoreCmd(t, "", args...); err == nil {
			t.Errorf("run(%q) succeeded; want a usage error", args)
		}
	}
}

func TestDefaultDBPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SUBSECOND_DB": "/x/y.db", "XDG_DATA_HOME": "/d", "HOME": "/h"}, "/x/y.db"},
		{map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/subsecond/subsecond.db"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/subsecond/subsecond.db"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/subsecond/subsecond.db"},
	}
	for _, tt := range tests {
		got, err := defaultDBPath(func(k string) string { return tt.env[k] })
		if err != nil || got != tt.want {
			t.Errorf("defaultDBPath(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

// TestImportHost: --host names the captures' host over their "# hostname";
// a host that cannot be a URL segment is refused before anything is read.
func TestImportHost(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cli.db")
	file := filepath.Join(dir, "capture.perf")
	if err := os.WriteFile(file, []byte(cliCapture), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runStoreCmd(t, "", "import", "--db", db, "--host", "web-3", file)
	if err != nil {
		t.Fatal(err)
	}
	id := idRE.FindString(out)
	out, _, err = runStoreCmd(t, "", "info", "--db", db, "--format", "json", id)
	if err != nil {
		t.Fatal(err)
	}
	var p subsecond.Profile
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("info json: %v\n%s", err, out)
	}
	if p.Host != "web-3" || p.Meta.Hostname != "buildbox" {
		t.Errorf("host %q, hostname %q; want web-3 overriding buildbox", p.Host, p.Meta.Hostname)
	}
	if _, _, err := runStoreCmd(t, "", "import", "--db", db, "--host", "a b", file); err == nil || !strings.Contains(err.Error(), "host") {
		t.Errorf("import --host 'a b' = %v; want an error about the host", err)
	}
}

// TestReadOnlyCommandsNeedDatabase checks that commands that only read the
// database refuse a --db whose file or directory does not exist, naming
// it, and create nothing; import creates both.
func TestReadOnlyCommandsNeedDatabase(t *testing.T) {
	dir := t.TempDir()
	for _, db := range []string{filepath.Join(dir, "missing", "s.db"), filepath.Join(dir, "s.db")} {
		for _, args := range [][]string{{"list"}, {"info", "abc"}, {"heatmap", "abc"}, {"hotspots", "abc"}, {"hosts"}, {"delete", "abc"}} {
			_, _, err := runStoreCmd(t, "", append(args, "--db", db)...)
			if err == nil || !strings.Contains(err.Error(), "database "+db) || !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("subsecond %s --db %s: %v; want an error naming the database", strings.Join(args, " "), db, err)
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("subsecond %s --db %s created the database", strings.Join(args, " "), db)
			}
		}
	}
	db := filepath.Join(dir, "new", "s.db")
	if _, _, err := runStoreCmd(t, "x 1 [000] 1.0: cycles:\n\tf (/bin/x)\n\n", "import", "--db", db, "-"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runStoreCmd(t, "", "list", "--db", db); err != nil || !strings.Contains(out, "stdin") {
		t.Errorf("list after import into a new directory: %q, %v", out, err)
	}
}

// TestImportOnlyKeepsNothingLoaded: the store the import-only commands open
// keeps none of what it imports in its capture cache, where a store with
// the default options keeps each capture it imported (a night imported in
// one command held 512 MiB of captures no view would ask for: bench/nightload
// peaked at 1.1 GB).
func TestImportOnlyKeepsNothingLoaded(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opt  store.Options
		warm bool
	}{{"default", store.Options{}, true}, {"importOnly", importOnly, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := openStore(ctx, env{}, filepath.Join(t.TempDir(), "cli.db"), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, _, err := s.Import(ctx, strings.NewReader(cliCapture), store.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := s.CacheStats().Bytes; (got > 0) != tc.warm {
				t.Errorf("capture cache after an import holds %d bytes; want loaded: %v", got, tc.warm)
			}
		})
	}
}
