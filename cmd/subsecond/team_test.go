package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for the test's own schema
	"github.com/subsecond/subsecond/internal/pgtest"
)

// startProcess runs `subsecond args…` as a process of its own until the
// test ends and returns the URL it serves on.
func startProcess(t *testing.T, args ...string) string {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSubsecond$")
	cmd.Env = append(os.Environ(), "SUBSECOND_TEST_MAIN=1", "SUBSECOND_TEST_ARGS="+string(raw))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	deadline := time.After(time.Minute)
	for {
		if m := servingRe.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case <-exited:
			t.Fatalf("subsecond %v exited before serving:\n%s", args, out.String())
		case <-deadline:
			t.Fatalf("subsecond %v printed no URL within a minute:\n%s", args, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// postgresSchema returns the URL of a PostgreSQL schema of the test's own
// (pgtest.Schema), skipping the test without a server.
func postgresSchema(t *testing.T) string { return pgtest.Schema(t) }

// within polls check until it returns nil or limit has passed, and returns
// how long it took and check's last error.
func within(limit time.Duration, check func() error) (time.Duration, error) {
	start := time.Now()
	for {
		err := check()
		if err == nil || time.Since(start) > limit {
			return time.Since(start), err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func status(url string) (int, []byte, error) {
	res, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// TestTwoServersOnePostgres runs two `subsecond serve` processes on one
// PostgreSQL database, as a team runs them behind a proxy: an upload
// through one is listed and viewed through the other within a second, a
// delete through one is a 404 on the other within a second even though the
// other had the capture loaded, and the same capture uploaded through both
// at once is stored once.
func TestTwoServersOnePostgres(t *testing.T) {
	url := postgresSchema(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.perf.txt.gz")
	writeCapture(t, file)
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a := startProcess(t, "serve", "--addr", "127.0.0.1:0", "--db", url, "--no-sample")
	b := startProcess(t, "serve", "--addr", "127.0.0.1:0", "--db", url, "--no-sample")

	res, err := http.Post(a+"/api/profiles?name=team", "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Profile struct{ ID string } `json:"profile"`
	}
	json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	id := created.Profile.ID
	if res.StatusCode != http.StatusCreated || id == "" {
		t.Fatalf("upload through A = %d, profile %q", res.StatusCode, id)
	}

	took, err := within(time.Second, func() error {
		code, b, err := status(b + "/api/profiles")
		if err != nil || code != 200 || !strings.Contains(string(b), id) {
			return errors.New("not listed")
		}
		return nil
	})
	if err != nil {
		t.Errorf("B lists A's upload: %v after %v; want within a second", err, took)
	}
	t.Logf("B listed A's upload after %v", took)
	viewA := a + "/api/profiles/" + id + "/heatmap?rows=10"
	viewB := b + "/api/profiles/" + id + "/heatmap?rows=10"
	codeA, gridA, _ := status(viewA)
	codeB, gridB, _ := status(viewB)
	if codeA != 200 || codeB != 200 || !bytes.Equal(gridA, gridB) {
		t.Errorf("heatmap through A = %d, through B = %d, equal %v; want the same 200 answer", codeA, codeB, bytes.Equal(gridA, gridB))
	}

	req, _ := http.NewRequest(http.MethodDelete, b+"/api/profiles/"+id, nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent && res.StatusCode != http.StatusOK {
		t.Fatalf("delete through B = %d", res.StatusCode)
	}
	for name, u := range map[string]string{"view": viewA, "capture page": a + "/p/" + id, "profile": a + "/api/profiles/" + id} {
		took, err := within(time.Second, func() error {
			if code, _, err := status(u); err != nil || code != http.StatusNotFound {
				return errors.New("still there")
			}
			return nil
		})
		if err != nil {
			t.Errorf("A's %s after a delete through B: %v after %v; want 404 within a second", name, err, took)
		}
		t.Logf("A's %s was 404 after %v", name, took)
	}

	// The same capture through both at once: one profile.
	var wg sync.WaitGroup
	ids := make([]string, 2)
	for i, base := range []string{a, b} {
		wg.Go(func() {
			res, err := http.Post(base+"/api/profiles", "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				return
			}
			defer res.Body.Close()
			var c struct {
				Profile struct{ ID string } `json:"profile"`
			}
			json.NewDecoder(res.Body).Decode(&c)
			ids[i] = c.Profile.ID
		})
	}
	wg.Wait()
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("the same capture uploaded through A and B at once got IDs %q and %q; want one profile", ids[0], ids[1])
	}
}
