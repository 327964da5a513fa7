package main

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// teamDir is contrib/team, whose README's commands TestTeamContrib runs.
const teamDir = "../../contrib/team"

// teamStubs are the commands TestTeamContrib puts first on the README's
// PATH. sudo runs its command as the test's user (dropping -u USER); psql
// is the real one with the test's role and database names (the CI
// cluster's superuser and database are called subsecond already); sudoedit
// writes $TEAM_ENV into /etc/subsecond/env, as the reader would, and
// leaves other files as they are; systemctl and nginx only log. Each logs
// its command line to $TEAM_LOG.
var teamStubs = map[string]string{
	"sudo":      `[ "$1" != -u ] || shift 2; exec "$@"`,
	"psql":      `exec "$TEAM_PSQL" -v role="$TEAM_ROLE" -v db="$TEAM_ROLE" "$@"`,
	"sudoedit":  `case $1 in */etc/subsecond/env) cat "$TEAM_ENV" >"$1";; esac`,
	"systemctl": `:`,
	"nginx":     `:`,
}

// TestTeamContrib runs the commands of contrib/team/README.md, each of its
// sh blocks as written, with /etc/ and /usr/local/ under a temporary root
// and its PostgreSQL part against $SUBSECOND_TEST_POSTGRES's server, as a
// role and a database of the test's own, and checks what they leave: the
// role with the password the README made, owning a UTF8 database; the
// unit, the environment file (0600, in a 0750 directory) and nginx's conf
// where the README says. It then starts the installed unit's ExecStart
// with its environment, as systemd would, and expects /readyz 200, then a
// clean exit on its KillSignal. postgres.sql run without a password must
// fail, saying so, and create nothing.
func TestTeamContrib(t *testing.T) {
	base := os.Getenv("SUBSECOND_TEST_POSTGRES")
	if base == "" {
		t.Skip("needs PostgreSQL: set SUBSECOND_TEST_POSTGRES=postgres://… (.ci/postgres starts a server)")
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("needs psql (Debian's postgresql-client)")
	}
	readme, err := os.ReadFile(filepath.Join(teamDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var scripts []string
	var envBlock string
	for _, b := range fencedBlocks(string(readme)) {
		switch {
		case b.info == "sh":
			scripts = append(scripts, b.body)
		case b.info == "" && strings.HasPrefix(b.body, "SUBSECOND_DB="):
			envBlock = b.body
		}
	}
	if len(scripts) != 3 || envBlock == "" {
		t.Fatalf("contrib/team/README.md has %d sh blocks and env block %q; want PostgreSQL's, the app servers', nginx's and /etc/subsecond/env's", len(scripts), envBlock)
	}

	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	role := "team_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		admin.Exec(`DROP DATABASE IF EXISTS "` + role + `" WITH (FORCE)`)
		admin.Exec(`DROP ROLE IF EXISTS "` + role + `"`)
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	root, stubs := t.TempDir(), t.TempDir()
	for _, dir := range []string{"etc/systemd/system", "etc/nginx/conf.d", "usr/local/bin"} { // the packages' own
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range teamStubs {
		script := "#!/bin/sh\necho \"" + name + " $*\" >>\"$TEAM_LOG\"\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// "install the binary as /usr/local/bin/subsecond"
	if err := os.WriteFile(filepath.Join(root, "usr/local/bin/subsecond"), []byte(walkthroughScript), 0o755); err != nil {
		t.Fatal(err)
	}
	logFile, envFile := filepath.Join(stubs, "log"), filepath.Join(stubs, "env")
	env := append(os.Environ(), "PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TEAM_LOG="+logFile, "TEAM_ENV="+envFile, "TEAM_PSQL="+psql, "TEAM_ROLE="+role,
		"PGHOST="+cmp.Or(u.Query().Get("host"), u.Hostname()), "PGPORT="+cmp.Or(u.Port(), "5432"),
		"PGUSER="+u.User.Username(), "PGDATABASE="+strings.TrimPrefix(u.Path, "/"))
	rooted := strings.NewReplacer(" /etc/", " "+root+"/etc/", " /usr/local/", " "+root+"/usr/local/")
	sh := func(script string) (string, string, error) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", rooted.Replace(script))
		var stdout, stderr bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = teamDir, env, &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	// Without the password: the command fails, says why, and
	// creates nothing.
	out, errs, err := sh("sudo -u postgres psql -f postgres.sql")
	var role0 int
	admin.QueryRow("SELECT count(*) FROM pg_roles WHERE rolname = $1", role).Scan(&role0)
	if err == nil || !strings.Contains(errs, "postgres.sql needs the role's password: psql -v password=") || role0 != 0 {
		t.Errorf("postgres.sql without -v password: %v, %d roles, output\n%s%s\nwant it to fail, say so and create no role", err, role0, out, errs)
	}

	// 1. PostgreSQL.
	out, errs, err = sh(scripts[0])
	if err != nil {
		t.Fatalf("contrib/team/README.md's PostgreSQL block: %v\n%s%s", err, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	password := lines[len(lines)-1]
	if !regexp.MustCompile(`^[0-9a-f]{32,}$`).MatchString(password) {
		t.Fatalf("contrib/team/README.md's PostgreSQL block prints %q last; want the password it made, in hex", password)
	}
	var scram, owner, encoding string
	var login bool
	err = admin.QueryRow(`SELECT a.rolcanlogin, a.rolpassword, o.rolname, pg_encoding_to_char(d.encoding)
		FROM pg_authid a, pg_database d JOIN pg_roles o ON o.oid = d.datdba
		WHERE a.rolname = $1 AND d.datname = $1`, role).Scan(&login, &scram, &owner, &encoding)
	if err != nil {
		t.Fatalf("the role and database postgres.sql makes: %v", err)
	}
	if !login || owner != role || encoding != "UTF8" || !scramMatches(scram, password) {
		t.Errorf("postgres.sql made a role (login %v, the printed password %v) and a database owned by %q in %s; want a login role with the printed password, owning a UTF8 database",
			login, scramMatches(scram, password), owner, encoding)
	}

	// 2. App servers: /etc/subsecond/env as the README shows it, with the
	// test's database for SUBSECOND_DB.
	dsn := *u
	dsn.User, dsn.Path = url.UserPassword(role, password), "/"+role
	var envText strings.Builder
	for _, line := range strings.Split(envBlock, "\n") {
		if v, ok := strings.CutPrefix(line, "SUBSECOND_DB="); ok {
			shown, err := url.Parse(v)
			if pw, _ := shown.User.Password(); err != nil || shown.User.Username() != "subsecond" || pw != "PASSWORD" || shown.Path != "/subsecond" {
				t.Errorf("contrib/team/README.md's SUBSECOND_DB=%s; want postgres://subsecond:PASSWORD@…/subsecond, the names postgres.sql gives", v)
			}
			line = "SUBSECOND_DB=" + dsn.String()
		}
		envText.WriteString(line + "\n")
	}
	if err := os.WriteFile(envFile, []byte(envText.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, err := sh(scripts[1]); err != nil {
		t.Fatalf("contrib/team/README.md's app server block: %v\n%s%s", err, out, errs)
	}
	unitPath := filepath.Join(root, "etc/systemd/system/subsecond.service")
	checkInstalled(t, unitPath, filepath.Join(teamDir, "subsecond-team.service"), 0o644)
	checkInstalled(t, filepath.Join(root, "etc/subsecond/env"), envFile, 0o600)
	if fi, err := os.Stat(filepath.Join(root, "etc/subsecond")); err != nil || fi.Mode() != os.ModeDir|0o750 {
		t.Errorf("/etc/subsecond: %v, %v; want a directory, mode 0750", fi, err)
	}

	// What systemctl enable --now does: ExecStart with Environment= and
	// EnvironmentFile=, on a free port rather than :8080.
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	procEnv := []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "SUBSECOND_TEST_BINARY=" + bin}
	var argv []string
	var killSignal string
	for _, kv := range unitSettings(string(unit)) {
		switch kv[0] {
		case "ExecStart":
			argv = strings.Fields(kv[1])
			argv[0] = filepath.Join(root, argv[0])
		case "Environment":
			procEnv = append(procEnv, kv[1])
		case "EnvironmentFile":
			data, err := os.ReadFile(filepath.Join(root, kv[1]))
			if err != nil {
				t.Fatal(err)
			}
			procEnv = append(procEnv, environmentFile(string(data))...)
		case "KillSignal":
			killSignal = kv[1]
		}
	}
	if len(argv) == 0 || killSignal != "SIGTERM" {
		t.Fatalf("subsecond-team.service: ExecStart %q, KillSignal %q; want a command and SIGTERM", argv, killSignal)
	}
	host := ""
	for _, kv := range procEnv {
		if v, ok := strings.CutPrefix(kv, "SUBSECOND_ALLOWED_HOSTS="); ok {
			host = v
		}
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SUBSECOND_") && strings.ContainsAny(v, " \t#") {
			t.Errorf("the service's environment has %s; want no blanks or comments in a value", kv)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(procEnv, "SUBSECOND_ADDR=127.0.0.1:0")
	served := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = served, served
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	var addr string
	for deadline := time.After(10 * time.Second); addr == ""; {
		if m := servingRe.FindStringSubmatch(served.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the installed unit's %q exited before serving: %v\n%s", argv, err, served.String())
		case <-deadline:
			t.Fatalf("the installed unit's %q printed no URL within 10 s:\n%s", argv, served.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	req, _ := http.NewRequest(http.MethodGet, addr+"/readyz", nil)
	req.Host = host // as nginx sends it
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz (Host: %s) from the installed unit = %d; want 200\n%s", host, res.StatusCode, served.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the installed unit after SIGTERM: %v; want a clean exit\n%s", err, served.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the installed unit did not exit within 10 s of SIGTERM\n%s", served.String())
	}

	// 3. nginx.
	if out, errs, err := sh(scripts[2]); err != nil {
		t.Fatalf("contrib/team/README.md's nginx block: %v\n%s%s", err, out, errs)
	}
	checkInstalled(t, filepath.Join(root, "etc/nginx/conf.d/subsecond.conf"), filepath.Join(teamDir, "nginx.conf"), 0o644)

	log, _ := os.ReadFile(logFile)
	for _, want := range []string{"systemctl daemon-reload", "systemctl enable --now subsecond", "nginx -t", "systemctl reload nginx"} {
		if !strings.Contains(string(log), want+"\n") {
			t.Errorf("contrib/team/README.md's commands ran\n%s\nwithout %q", log, want)
		}
	}
}

// checkInstalled checks that the file at path has want's content and mode.
func checkInstalled(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("contrib/team/README.md's commands leave no %s: %v", path, err)
		return
	}
	if w, _ := os.ReadFile(want); !bytes.Equal(got, w) {
		t.Errorf("%s differs from %s", path, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
		t.Errorf("%s has mode %v; want %v", path, fi.Mode(), mode)
	}
}

// fencedBlock is a fenced block of a Markdown file: its info string and
// its lines, with the fence's indentation removed.
type fencedBlock struct{ info, body string }

func fencedBlocks(md string) []fencedBlock {
	var blocks []fencedBlock
	var cur *fencedBlock
	indent := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fencedBlock{info: strings.TrimPrefix(trimmed, "```")}
			indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.body += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	return blocks
}

// unitSettings returns the Key=Value lines of a systemd unit, in order.
func unitSettings(unit string) [][2]string {
	var kvs [][2]string
	for _, line := range strings.Split(unit, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, ";") {
			kvs = append(kvs, [2]string{k, v})
		}
	}
	return kvs
}

// environmentFile returns the variables of an EnvironmentFile= as systemd
// reads them (systemd.exec(5)): lines starting with # or ; are comments,
// and a # after a value is part of it. Quotes are not handled.
func environmentFile(text string) []string {
	var env []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			env = append(env, strings.TrimSpace(k)+"="+strings.TrimSpace(v))
		}
	}
	return env
}

// scramMatches reports whether stored, a pg_authid.rolpassword of the form
// SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, is password's.
func scramMatches(stored, password string) bool {
	m := regexp.MustCompile(`^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):`).FindStringSubmatch(stored)
	if m == nil {
		return false
	}
	iter, err1 := strconv.Atoi(m[1])
	salt, err2 := base64.StdEncoding.DecodeString(m[2])
	want, err3 := base64.StdEncoding.DecodeString(m[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return false
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, salted)
	mac.Write([]byte("Client Key"))
	key := sha256.Sum256(mac.Sum(nil))
	return hmac.Equal(key[:], want)
}
