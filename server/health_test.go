package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// TestHealth checks /healthz and /readyz over a healthy database, and
// /readyz once the database's schema is newer than this build's.
func TestHealth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	st, err := sqlite.OpenStore(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newEnvOn(t, st, Config{Token: "s3cret"})
	for _, p := range []string{"/healthz", "/readyz"} {
		res, body := e.do("GET", p, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %d %s (%s); want 200 JSON without the token", p, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}

	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
		t.Fatal(err)
	}
	res, body := e.do("GET", "/readyz", nil)
	wantError(t, res, body, http.StatusServiceUnavailable, "version 9999")
	if res.Header.Get("Retry-After") == "" {
		t.Errorf("/readyz 503 without Retry-After")
	}
	if res, body := e.do("GET", "/healthz", nil); res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz with a foreign schema = %d (%s); want 200", res.StatusCode, body)
	}
}

// downStore is a store whose database is unreachable.
type downStore struct{ sqliteStore }

var errDown = fmt.Errorf("%w: dial unix /run/postgresql/.s.PGSQL.5432: connect: connection refused", subsecond.ErrUnavailable)

func (downStore) Ready(context.Context) error                       { return errDown }
func (downStore) List(context.Context) ([]subsecond.Profile, error) { return nil, errDown }
func (downStore) Page(context.Context, int, string) ([]subsecond.Profile, string, error) {
	return nil, "", errDown
}
func (downStore) Profile(context.Context, string) (*subsecond.Profile, error) { return nil, errDown }
func (downStore) Import(context.Context, io.Reader, Upload) (*subsecond.Profile, bool, error) {
	return nil, false, errDown
}

// TestDatabaseDown checks that an outage answers 503 with Retry-After and
// a sentence saying so, without the driver's text, on reads, uploads and
// /readyz, while /healthz answers 200.
func TestDatabaseDown(t *testing.T) {
	e := newEnv(t, Config{})
	e.s.store = downStore{sqliteStore{e.st}}
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/readyz", ""},
		{"GET", "/api/profiles", ""},
		{"GET", "/api/profiles/aaaaaaaaaaaaaaaaaaaaaaaaaa", ""},
		{"POST", "/api/profiles", perfText(1, 10, 1)},
	} {
		res, body := e.do(req.method, req.path, strings.NewReader(req.body))
		wantError(t, res, body, http.StatusServiceUnavailable, "database is unavailable")
		if res.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", req.method, req.path)
		}
		if strings.Contains(string(body), "refused") {
			t.Errorf("%s %s: body %s shows the driver's error", req.method, req.path, body)
		}
	}
	res, body := e.do("GET", "/", nil)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("GET / = %d, Retry-After %q (%s); want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if res, body := e.do("GET", "/healthz", nil); res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d (%s); want 200", res.StatusCode, body)
	}
	if code, _ := status(errors.New("x")); code != http.StatusInternalServerError {
		t.Errorf("status(other) = %d; want 500", code)
	}
}
