package server

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
)

// pgCluster is a private PostgreSQL cluster that a test may stop: the
// shared one of $SUBSECOND_TEST_POSTGRES serves other tests meanwhile.
type pgCluster struct {
	t   *testing.T
	dir string
	bin string
}

// startCluster starts a cluster of its own with .ci/postgres, stopped when
// the test ends.
func startCluster(t *testing.T) *pgCluster {
	t.Helper()
	if os.Getenv("SUBSECOND_TEST_POSTGRES") == "" {
		t.Skip("PostgreSQL tests skipped; set SUBSECOND_TEST_POSTGRES=postgres://… to run them (.ci/postgres starts a server)")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL under /usr/lib/postgresql")
	}
	sort.Strings(bins)
	dir, err := os.MkdirTemp("", "subsecond-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{t: t, dir: dir, bin: bins[len(bins)-1]}
	t.Cleanup(func() {
		c.pgctl("-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	c.start()
	return c
}

func (c *pgCluster) url() string { return "postgres://subsecond@/subsecond?host=" + c.dir }

func (c *pgCluster) start() {
	c.t.Helper()
	out, err := exec.Command("../.ci/postgres", "start", c.dir).CombinedOutput()
	if err != nil {
		c.t.Fatalf(".ci/postgres start: %v: %s", err, out)
	}
}

// pgctl runs the cluster's pg_ctl, as nobody when root (as .ci/postgres).
func (c *pgCluster) pgctl(args ...string) {
	c.t.Helper()
	cmd := append([]string{filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data")}, args...)
	if os.Getuid() == 0 {
		cmd = append([]string{"runuser", "-u", "nobody", "--"}, cmd...)
	}
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		c.t.Logf("pg_ctl %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// outageEnv starts a cluster of its own and a server storing into it,
// uploads a profile and makes it durable (the cluster runs without
// synchronous commit, as tests do) before a test stops the cluster; db is
// a connection of the test's, closed when it ends.
func outageEnv(t *testing.T) (c *pgCluster, st *store.Store, e *testEnv, before subsecond.Profile, db *sql.DB) {
	t.Helper()
	c = startCluster(t)
	st, err := postgres.OpenStore(context.Background(), c.url(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e = newEnvOn(t, st, Config{})
	before = e.upload(perfText(2, 100, 2), "before")
	if db, err = sql.Open("pgx", c.url()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	return c, st, e, before, db
}

// TestPostgresOutage stops PostgreSQL under a serving server: reads,
// uploads and /readyz answer 503 with Retry-After (never 500) and /healthz
// 200; when PostgreSQL is back the server serves again with every
// profile stored before and nothing half-stored by the failed upload.
func TestPostgresOutage(t *testing.T) {
	c, st, e, before, db := outageEnv(t)
	ctx := context.Background()

	c.pgctl("-m", "immediate", "-w", "stop")
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/api/profiles", ""},
		{"GET", "/api/profiles/" + before.ID, ""},
		{"GET", "/", ""},
		{"POST", "/api/profiles?name=during", perfText(2, 100, 3)},
		{"GET", "/readyz", ""},
	} {
		res, body := e.do(req.method, req.path, strings.NewReader(req.body))
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with PostgreSQL down = %d, Retry-After %q; want 503 with Retry-After (body %.200s)",
				req.method, req.path, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	if res, body := e.do("GET", "/healthz", nil); res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz with PostgreSQL down = %d (%s); want 200", res.StatusCode, body)
	}

	c.start()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, body := e.do("GET", "/api/profiles", nil)
		if res.StatusCode == http.StatusOK {
			break
		}
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("GET /api/profiles while PostgreSQL restarts = %d (%s); want 200 or 503", res.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not serving 15 s after PostgreSQL restarted: %s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res, body := e.do("GET", "/readyz", nil); res.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz after the restart = %d (%s); want 200", res.StatusCode, body)
	}
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != before.ID || list[0].Samples != before.Samples {
		t.Fatalf("profiles after the restart = %+v; want only %q with %d samples", list, before.ID, before.Samples)
	}
	after := e.upload(perfText(2, 100, 3), "after")
	if after.Samples != 600 || e.count() != 2 {
		t.Errorf("upload after the restart: %d samples, %d profiles; want 600 and 2", after.Samples, e.count())
	}
	var rows int
	if err := db.QueryRow("SELECT count(*) FROM profiles").Scan(&rows); err != nil || rows != 2 {
		t.Errorf("profile rows = %d (%v); want 2, none left by the failed upload", rows, err)
	}
}

// TestPostgresOutageMidUpload stops PostgreSQL while an upload's body is
// half sent and read (the import parses it as it comes, and writes to the
// database once it has ended): the upload gets 503 with Retry-After once
// its body ends, and after the restart nothing of it is stored (no
// profile, no placeholder row), the profile stored before is whole and
// the same capture uploads again.
func TestPostgresOutageMidUpload(t *testing.T) {
	c, _, e, before, db := outageEnv(t)

	text := perfText(2, 1000, 20) // 40,000 samples, 3.5 MB
	half := strings.LastIndex(text[:len(text)/2], "\n\n") + 2
	pr, pw := io.Pipe()
	type answer struct {
		res  *http.Response
		body []byte
	}
	answered := make(chan answer, 1)
	go func() {
		res, body := e.do("POST", "/api/profiles?name=inflight", pr)
		answered <- answer{res, body}
	}()
	if _, err := io.WriteString(pw, text[:half]); err != nil {
		t.Fatal(err)
	}
	// The server has read the first half: a pipe's write returns once
	// read.
	db.Close()
	c.pgctl("-m", "immediate", "-w", "stop")
	go func() {
		io.WriteString(pw, text[half:])
		pw.Close()
	}()
	a := <-answered
	if a.res.StatusCode != http.StatusServiceUnavailable || a.res.Header.Get("Retry-After") == "" {
		t.Errorf("upload whose body was half sent when PostgreSQL stopped = %d, Retry-After %q; want 503 with Retry-After (body %.300s)",
			a.res.StatusCode, a.res.Header.Get("Retry-After"), a.body)
	}

	c.start()
	db, err := sql.Open("pgx", c.url())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, "PostgreSQL back", func() bool { return db.Ping() == nil })
	var rows, pending int
	if err := db.QueryRow("SELECT count(*), count(*) FILTER (WHERE sha256 LIKE 'pending:%') FROM profiles").Scan(&rows, &pending); err != nil || rows != 1 || pending != 0 {
		t.Errorf("after the restart: %d profile rows, %d placeholders (%v); want only the one stored before", rows, pending, err)
	}
	waitFor(t, "the server serving again", func() bool {
		res, _ := e.do("GET", "/api/profiles", nil)
		return res.StatusCode == http.StatusOK
	})
	if res, body := e.do("GET", "/api/profiles/"+before.ID+"/heatmap", nil); res.StatusCode != http.StatusOK {
		t.Errorf("heatmap of the profile stored before = %d (%s)", res.StatusCode, body)
	}
	again := e.upload(text, "again")
	if again.Samples != 40000 {
		t.Errorf("the capture uploaded again has %d samples; want 40000", again.Samples)
	}
}
