package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/record"
)

// fakePerfOnPath installs ../../record/testdata/fake-perf as perf on PATH,
// "recording" the given captures and finishing last when stopped.
func fakePerfOnPath(t *testing.T, last string, captures ...string) {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "..", "record", "testdata", "fake-perf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "perf"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	caps := filepath.Join(dir, "caps")
	os.Mkdir(caps, 0o755)
	for i, c := range captures {
		os.WriteFile(filepath.Join(caps, fmt.Sprint(i)), []byte(c), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "last"), []byte(last), 0o644)
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	t.Setenv("FAKE_PERF_CAPTURES", caps)
	t.Setenv("FAKE_PERF_LAST", filepath.Join(dir, "last"))
	t.Setenv("FAKE_PERF_LOG", filepath.Join(dir, "args"))
}

// nightCapture is a small realtime capture of host h, one sample per CPU
// at Unix second sec.
func nightCapture(h string, sec int) string {
	return fmt.Sprintf("# ========\n# captured on    : Mon Nov 30 03:00:00 2026\n# hostname : %s\n# clockid: realtime (0)\n# ========\n#\n"+
		"kubelet 300/301 [000] %d.000100: 20408163 cpu-clock:pppH: \n\tffffffff81001100 mem_cgroup_nr_lru_pages+0x1a ([kernel.kallsyms])\n\n"+
		"swapper 0/0 [001] %d.000200: 20408163 cpu-clock:pppH: \n\tffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])\n\n", h, sec, sec)
}

// runUntil runs `subsecond args…` until cond holds (polled), then
// interrupts it as SIGINT would and returns its output and error.
func runUntil(t *testing.T, cond func() bool, args ...string) (string, string, error) {
	t.Helper()
	return runUntilLog(t, func(string) bool { return cond() }, args...)
}

// runUntilLog is runUntil with a condition on what has been logged so far.
func runUntilLog(t *testing.T, cond func(log string) bool, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), out, errOut) }()
	deadline := time.Now().Add(20 * time.Second)
	for !cond(errOut.String()) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("timed out; output:\n%s\n%s", out.String(), errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("record stopped early: %v\n%s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	err := <-done
	return out.String(), errOut.String(), err
}

func TestRecordImports(t *testing.T) {
	fakePerfOnPath(t, nightCapture("node-7", 1796005000), nightCapture("node-7", 1796004760), nightCapture("node-7", 1796004880))
	dir := t.TempDir()
	db := filepath.Join(dir, "night.db")
	out, logs, err := runUntil(t, func() bool {
		sent, _ := filepath.Glob(filepath.Join(dir, "rec", "sent", "*"))
		return len(sent) == 2
	}, "record", "--dir", filepath.Join(dir, "rec"), "--db", db)
	if err != nil {
		t.Fatalf("record: %v\n%s", err, logs)
	}
	if n := strings.Count(out, "2 samples"); n != 3 {
		t.Errorf("record printed %d import lines; want 3:\n%s", n, out)
	}
	list, _, err := runStoreCmd(t, "", "list", "--db", db, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(list, `"host": "node-7"`)+strings.Count(list, `"host":"node-7"`) != 3 {
		t.Errorf("list holds not 3 profiles of node-7:\n%s", list)
	}
	raw, _ := filepath.Glob(filepath.Join(dir, "rec", "perf.data.*"))
	if len(raw) != 0 {
		t.Errorf("raw files left behind: %q", raw)
	}
}

func TestRecordUploads(t *testing.T) {
	fakePerfOnPath(t, "not perf text at all\n", nightCapture("web-1", 1796004760))
	dir := t.TempDir()
	url, _, stop := startServe(t, "serve", "--db", filepath.Join(dir, "server.db"), "--addr", "127.0.0.1:0", "--token", "s3cret")
	defer stop()
	var list struct{ Profiles []subsecond.Profile }
	_, logs, err := runUntil(t, func() bool {
		sent, _ := filepath.Glob(filepath.Join(dir, "rec", "sent", "*"))
		return len(sent) == 1
	}, "record", "--dir", filepath.Join(dir, "rec"), "--upload", url, "--token", "s3cret", "--host", "web-1-renamed")
	if err != nil {
		t.Fatalf("record: %v\n%s", err, logs)
	}
	getJSON(t, url+"/api/profiles", &list)
	if len(list.Profiles) != 1 || list.Profiles[0].Host != "web-1-renamed" {
		t.Errorf("server holds %+v; want one profile of host web-1-renamed", list.Profiles)
	}
	// The last capture is no perf text: the server refuses it for good, so
	// it is set aside rather than retried.
	rejected, _ := filepath.Glob(filepath.Join(dir, "rec", "rejected", "*"))
	if len(rejected) != 1 || !strings.Contains(logs, "415") {
		t.Errorf("rejected/ holds %q; want the non-perf capture, with the server's 415 in the log:\n%s", rejected, logs)
	}

	// A wrong token is not a rejection: the capture waits in pending/.
	fakePerfOnPath(t, nightCapture("web-1", 1796005999), nightCapture("web-1", 1796004999))
	// (An interrupt stops a send in flight: wait for the server's answer.)
	_, logs, err = runUntilLog(t, func(log string) bool {
		p, _ := filepath.Glob(filepath.Join(dir, "rec2", "pending", "*"))
		return len(p) == 1 && strings.Contains(log, "401 Unauthorized")
	}, "record", "--dir", filepath.Join(dir, "rec2"), "--upload", url, "--token", "wrong")
	if err == nil || !strings.Contains(err.Error(), "perf.data.") || !strings.Contains(logs, "401 Unauthorized") || !strings.Contains(logs, "kept in pending/") {
		t.Errorf("wrong token: %v; want the 401 logged, the capture kept and named in the error:\n%s", err, logs)
	}
	// A 401 holds for the whole run: said once, not retried every cycle.
	// Count the answer: the temporary directory's name may hold "401" too.
	if n := strings.Count(logs, "401 Unauthorized"); n != 1 || !strings.Contains(logs, "no capture will be sent in this run") {
		t.Errorf("wrong token: the 401 logged %d times; want once, saying that sending stops:\n%s", n, logs)
	}
}

func TestRecordErrors(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := runStoreCmd(t, "", "record", "--dir", t.TempDir(), "--db", filepath.Join(t.TempDir(), "x.db"))
	if err == nil || !strings.Contains(err.Error(), "perf not found") {
		t.Errorf("record without perf: %v; want 'perf not found'", err)
	}
	for _, args := range [][]string{
		{"record", "--upload", "ftp://x"},
		{"record", "--keep", "1m", "--switch", "2m"},
		{"record", "--host", "a/b"},
	} {
		if _, _, err := runStoreCmd(t, "", args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestRecordWithoutPerfLeavesNothing: a perf that is not there is named
// plainly, and no empty database is left behind.
func TestRecordWithoutPerfLeavesNothing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tt := range []struct {
		perf, want string
	}{
		{"perf", "perf not found"},
		{"/bad/path", `"/bad/path" does not exist`},
	} {
		db := filepath.Join(t.TempDir(), "x.db")
		_, _, err := runStoreCmd(t, "", "record", "--dir", t.TempDir(), "--db", db, "--perf", tt.perf)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("record --perf %s: %v; want %q", tt.perf, err, tt.want)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("record --perf %s left a database behind", tt.perf)
		}
	}
}

// TestRecordStopsASendInFlight: SIGINT stops an upload the server never
// answers at once; the capture stays in pending/ and the error names it.
func TestRecordStopsASendInFlight(t *testing.T) {
	fakePerfOnPath(t, nightCapture("web-1", 1796005999), nightCapture("web-1", 1796004999))
	release := make(chan struct{})
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		select { // accept the connection and never answer
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errOut := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"record", "--dir", dir, "--upload", srv.URL}, strings.NewReader(""), &syncBuffer{}, errOut)
	}()
	waitUntil(t, "an upload in flight", func() bool { mu.Lock(); defer mu.Unlock(); return requests > 0 })
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("record did not stop within 5 s of SIGINT with an upload in flight:\n%s", errOut.String())
	}
	pending, _ := filepath.Glob(filepath.Join(dir, "pending", "*"))
	if len(pending) == 0 || err == nil || !strings.Contains(err.Error(), filepath.Base(pending[0])) {
		t.Errorf("record: %v; pending/ holds %q; want the unsent captures kept and named\n%s", err, pending, errOut.String())
	}
}

// waitUntil polls cond for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestUploadSink: each request has its own deadline, a 401 or 403 is
// ErrDenied, and a 503 or 429 carries its Retry-After.
func TestUploadSink(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("name") {
		case "hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "slow-down":
			w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		case "forbidden":
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	sink := uploadSink(u, "t", captureMeta{}, 200*time.Millisecond)
	start := time.Now()
	err := sink(context.Background(), "hang.zst", strings.NewReader("x"))
	if err == nil || time.Since(start) > 3*time.Second || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a server that never answers: %v after %v; want 'no answer' after the request's 200 ms", err, time.Since(start))
	}
	var ra *record.RetryAfterError
	if err := sink(context.Background(), "busy.zst", strings.NewReader("x")); !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Errorf("503 with Retry-After: 7: %v; want a RetryAfterError of 7s", err)
	}
	if err := sink(context.Background(), "slow-down.zst", strings.NewReader("x")); !errors.As(err, &ra) || ra.After < 59*time.Minute {
		t.Errorf("429 with Retry-After in an hour: %v; want a RetryAfterError of about 1h", err)
	}
	if err := sink(context.Background(), "forbidden.zst", strings.NewReader("x")); !errors.Is(err, record.ErrDenied) {
		t.Errorf("403: %v; want ErrDenied", err)
	}
}
