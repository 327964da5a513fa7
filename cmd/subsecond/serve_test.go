package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
)

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// writeCapture writes a gzip-compressed perf script capture of 2 CPUs at
// 100 Hz for 3 s: 600 samples, CPU 1 busy in read().
func writeCapture(t *testing.T, path string) {
	t.Helper()
	var b strings.Builder
	start := int64(5086_050_000_000)
	for i := 0; i < 300; i++ {
		tm := start + int64(i)*10_000_000
		for cpu := 0; cpu < 2; cpu++ {
			comm, leaf := "web", "handle_request"
			if cpu == 1 {
				comm, leaf = "kubelet", "mem_cgroup_nr_lru_pages"
			}
			fmt.Fprintf(&b, "%s 300/301 [%03d] %d.%06d: 10101010 cpu-clock:ppp: \n", comm, cpu, tm/1e9, tm%1e9/1e3)
			fmt.Fprintf(&b, "\tffffffff81001100 %s+0x1a ([kernel.kallsyms])\n", leaf)
			b.WriteString("\tffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])\n\n")
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, b.String())
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

var servingRe = regexp.MustCompile(`serving .* on (http://\S+?)/`)

// startServe runs `subsecond args…` until the test ends and returns the
// URL it serves on, its output and a function that stops it and returns
// run's error.
func startServe(t *testing.T, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	return startServeLog(t, io.Discard, args...)
}

// startServeLog is startServe with serve's standard error, its request
// log, going to stderr.
func startServeLog(t *testing.T, stderr io.Writer, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), out, stderr) }()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(20 * time.Second):
				stopErr = fmt.Errorf("serve did not stop within 20 s")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingRe.FindStringSubmatch(out.String()); m != nil {
			return m[1], out, stop
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve printed no URL:\n%s", out.String())
	return "", nil, nil
}

// countProfiles returns how many profiles the server at base lists.
func countProfiles(t *testing.T, base string) int {
	t.Helper()
	var list struct {
		Profiles []json.RawMessage `json:"profiles"`
	}
	getJSON(t, base+"/api/profiles", &list)
	return len(list.Profiles)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestServeFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web-1.perf.txt.gz")
	writeCapture(t, file)
	base, out, stop := startServe(t, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"), file)

	// The duration is the capture's, first sample to one sampling period
	// after the last (100 Hz), as import and the profile list write it.
	link := regexp.MustCompile(`imported .*web-1.perf.txt.gz: 600 samples, 2 CPUs, 3 s → (http://\S+/p/(\S+))`).FindStringSubmatch(out.String())
	if link == nil {
		t.Fatalf("serve did not print the imported profile's duration and link:\n%s", out.String())
	}
	if !strings.HasPrefix(link[1], base+"/p/") {
		t.Errorf("profile link %s is not under %s", link[1], base)
	}
	res, err := http.Get(link[1])
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %v %v", link[1], err, res)
	}
	res.Body.Close()

	var list struct {
		Profiles []struct {
			ID string `json:"id"`
		} `json:"profiles"`
	}
	getJSON(t, base+"/api/profiles", &list)
	if len(list.Profiles) != 1 || list.Profiles[0].ID != link[2] {
		t.Fatalf("profiles = %+v; want only %s (no bundled sample when serve is named)", list.Profiles, link[2])
	}
	// The real engine answers: CPU 1 holds 300 samples, all in kubelet.
	var grid struct {
		Rows  int   `json:"rows"`
		Total int64 `json:"total"`
	}
	getJSON(t, base+"/api/profiles/"+link[2]+"/heatmap?cpu=1&rows=10", &grid)
	if grid.Rows != 10 || grid.Total != 300 {
		t.Errorf("heatmap of CPU 1 = %+v; want 10 rows, 300 samples", grid)
	}
	var fg struct {
		Total   int64    `json:"total"`
		Strings []string `json:"strings"`
	}
	getJSON(t, base+"/api/profiles/"+link[2]+"/flamegraph?start=1&end=2&comm=kubelet", &fg)
	if fg.Total != 100 || !strings.Contains(strings.Join(fg.Strings, " "), "mem_cgroup_nr_lru_pages") {
		t.Errorf("flame graph of kubelet in [1, 2) = total %d, strings %v; want 100 samples through mem_cgroup_nr_lru_pages", fg.Total, fg.Strings)
	}

	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after SIGINT-like cancel", err)
	}
	if !strings.Contains(out.String(), "Shutting down") {
		t.Errorf("serve did not report its shutdown:\n%s", out.String())
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Errorf("server still answers after shutdown")
	}
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-upload", "lots"}, "not a size"},
		{[]string{"serve", "--read-only", "--db", filepath.Join(dir, "x.db"), "f.txt"}, "read-only"},
		{[]string{"serve", "--db", filepath.Join(dir, "x.db"), "--addr", "127.0.0.1:0", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{[]string{"serve", "--db", filepath.Join(dir, "x.db"), "--addr", "256.1.1.1:80"}, "256.1.1.1"},
		{[]string{"serve", "--trust-proxy", "127.0.0.1,nginx"}, `--trust-proxy: "nginx"`},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "--log-format", "xml"}, "--log-format"},
		{[]string{"serve", "--upload-timeout", "0s"}, "--upload-timeout"},
		{[]string{"serve", "--max-heavy", "0"}, "--max-heavy"},
		{[]string{"serve", "--min-upload-rate", "slow"}, "not a size"},
		{[]string{"serve", "--cache-size", "1GiB", "--memory-limit", "1GiB"}, "leaves no room under --memory-limit"},
	} {
		err := run(context.Background(), tc.args, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v; want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestServeHosts: the served web app refuses a foreign Host (DNS rebinding)
// while localhost and the allowed names work, and logs each request once.
func TestServeHosts(t *testing.T) {
	dir := t.TempDir()
	stderr := &syncBuffer{}
	base, _, stop := startServeLog(t, stderr, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"),
		"--allowed-hosts", "perf.example.com", "--log-format", "json", "--log-level", "debug")
	port := base[strings.LastIndex(base, ":"):]
	get := func(host string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/api/profiles", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for host, want := range map[string]int{
		"localhost" + port:        200,
		"127.0.0.1" + port:        200,
		"perf.example.com" + port: 200,
		"attacker.example" + port: http.StatusMisdirectedRequest,
		"10.1.2.3" + port:         http.StatusMisdirectedRequest, // a loopback listener answers to loopback addresses only
	} {
		if got := get(host); got != want {
			t.Errorf("GET /api/profiles with Host %s = %d; want %d", host, got, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var n421, n200 int
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m struct {
			Msg, Route, Client string
			Status             int
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		// A refused host is refused before routing: its line has no route.
		if route := map[int]string{200: "/api/profiles", 421: "-"}[m.Status]; m.Msg != "request" || m.Route != route || m.Client != "127.0.0.1" {
			t.Errorf("log line %s; want a request line for route %q from 127.0.0.1", l, route)
		}
		switch m.Status {
		case 200:
			n200++
		case 421:
			n421++
		}
	}
	if n200 != 3 || n421 != 2 {
		t.Errorf("log holds %d lines of 200 and %d of 421; want 3 and 2:\n%s", n200, n421, stderr.String())
	}
}

// TestServeMemoryLimit: serve sets the Go heap's soft limit while it runs
// (its default, or --memory-limit) and restores the previous one after.
func TestServeMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{nil, defaultMemoryLimit},
		{[]string{"--memory-limit", "3GiB"}, 3 << 30},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db")}, tc.args...)
		_, _, stop := startServe(t, args...)
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("serve %v: memory limit %d; want %d", tc.args, got, tc.want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("memory limit after serve %v stopped = %d; want the previous %d", tc.args, got, before)
		}
	}
}

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1048576", 1 << 20}, {"2GiB", 2 << 30}, {"500MB", 500e6}, {"1.5G", 3 << 29}, {"64KiB", 64 << 10}, {"10B", 10},
	} {
		var b byteSize
		if err := b.Set(tc.in); err != nil || int64(b) != tc.want {
			t.Errorf("Set(%q) = %d, %v; want %d", tc.in, b, err, tc.want)
		}
		var again byteSize
		if err := again.Set(b.String()); err != nil || again != b {
			t.Errorf("Set(%q).String() = %q does not read back: %d, %v", tc.in, b.String(), again, err)
		}
	}
	if s := byteSize(2 << 30); s.String() != "2GiB" {
		t.Errorf("byteSize(2 << 30).String() = %q; want 2GiB", s.String())
	}
	for _, in := range []string{"", "-1", "GiB", "2XB", "1e30"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d; want an error", in, b)
		}
	}
}

func TestServeEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.perf.txt.gz")
	writeCapture(t, file)
	post := func(base string, hdr ...string) int {
		t.Helper()
		data, _ := os.ReadFile(file)
		req, _ := http.NewRequest("POST", base+"/api/profiles", bytes.NewReader(data))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}

	t.Setenv("SUBSECOND_ADDR", "127.0.0.1:0")
	t.Setenv("SUBSECOND_TOKEN", "s3cret")
	base, _, stop := startServe(t, "serve", "--db", filepath.Join(dir, "x.db"))
	if code := post(base); code != http.StatusUnauthorized {
		t.Errorf("upload without the token from $SUBSECOND_TOKEN = %d; want 401", code)
	}
	if code := post(base, "Authorization", "Bearer s3cret"); code != http.StatusCreated {
		t.Errorf("upload with the token = %d; want 201", code)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	t.Setenv("SUBSECOND_READ_ONLY", "1")
	base, _, _ = startServe(t, "serve", "--db", filepath.Join(dir, "x.db"))
	if code := post(base, "Authorization", "Bearer s3cret"); code != http.StatusForbidden {
		t.Errorf("upload to a server with $SUBSECOND_READ_ONLY=1 = %d; want 403", code)
	}
	if n := countProfiles(t, base); n != 1 {
		t.Errorf("read-only server lists %d profiles; want the 1 stored before", n)
	}
}

// TestHelperSubsecond is not a test on its own: TestFirstRun runs the test
// binary again with SUBSECOND_TEST_MAIN=1, and this function then behaves as
// a bare `subsecond` does, until SIGINT or SIGTERM; with
// SUBSECOND_TEST_ARGS (a JSON list) set too, as `subsecond ARGS…` does.
func TestHelperSubsecond(t *testing.T) {
	if os.Getenv("SUBSECOND_TEST_MAIN") != "1" {
		return
	}
	var args []string
	if raw := os.Getenv("SUBSECOND_TEST_ARGS"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintln(os.Stderr, "SUBSECOND_TEST_ARGS:", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "subsecond:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// firstRun starts a bare `subsecond` as a process with home as its home
// directory and returns its URL, its output so far, how long it took to
// print the URL, and a function that interrupts it and waits for its exit.
// The process is interrupted when the test ends at the latest.
func firstRun(t *testing.T, home string) (string, *syncBuffer, time.Duration, func() error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSubsecond$")
	cmd.Env = append(os.Environ(), "SUBSECOND_TEST_MAIN=1", "HOME="+home, "XDG_DATA_HOME=", "SUBSECOND_DB=",
		"SUBSECOND_ADDR=127.0.0.1:0", "SUBSECOND_TOKEN=", "SUBSECOND_READ_ONLY=")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	interrupt := func() error {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
			return waitErr
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			return errors.New("no exit within 20 s of SIGINT")
		}
	}
	t.Cleanup(func() { interrupt() })
	deadline := time.After(3 * time.Minute)
	for {
		if m := servingRe.FindStringSubmatch(out.String()); m != nil {
			return m[1], out, time.Since(start), interrupt
		}
		select {
		case <-exited:
			t.Fatalf("subsecond exited before serving:\n%s", out.String())
		case <-deadline:
			t.Fatalf("subsecond printed no URL within 3 minutes:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestFirstRun runs a bare `subsecond` twice in a fresh home directory: the
// first run creates the default database and imports the bundled incident,
// whose hot spots include every planted window; the second finds it there.
func TestFirstRun(t *testing.T) {
	home := t.TempDir()
	base, out, took, interrupt := firstRun(t, home)
	t.Logf("first run: serving after %v", took.Round(time.Millisecond))
	if !strings.Contains(out.String(), "First run: importing the bundled incident") {
		t.Errorf("first run did not announce the sample import:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(home, ".local/share/subsecond/subsecond.db")); err != nil {
		t.Errorf("default database not created: %v", err)
	}
	var list struct {
		Profiles []struct {
			ID      string `json:"id"`
			Samples int64  `json:"samples"`
		} `json:"profiles"`
	}
	getJSON(t, base+"/api/profiles", &list)
	truth, err := sampledata.IncidentTruth()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Profiles) != 1 || list.Profiles[0].Samples != truth.Samples {
		t.Fatalf("profiles = %+v; want the bundled incident with %d samples", list.Profiles, truth.Samples)
	}
	var hs struct {
		Hotspots []struct {
			CPU      int    `json:"cpu"`
			Start    int64  `json:"start_ns"`
			End      int64  `json:"end_ns"`
			Comm     string `json:"comm"`
			Function string `json:"top_function"`
		} `json:"hotspots"`
	}
	getJSON(t, base+"/api/profiles/"+list.Profiles[0].ID+"/hotspots?limit=100000", &hs)
	for _, w := range truth.Incidents {
		found := false
		for _, h := range hs.Hotspots {
			// Within one cores-map bucket (0.1 s) of the planted window.
			if h.CPU == w.CPU && h.Comm == "kubelet" && h.Function == "mem_cgroup_nr_lru_pages" &&
				abs(h.Start-w.StartNS) <= 1e8 && abs(h.End-w.EndNS) <= 1e8 {
				found = true
			}
		}
		if !found {
			t.Errorf("no hot spot for the planted window CPU %d [%.2f, %.2f) s", w.CPU, w.Start, w.End)
		}
	}

	// The README's walkthrough, run against that database, prints what the
	// README shows.
	checkReadmeWalkthrough(t, filepath.Join(home, ".local/share/subsecond/subsecond.db"))

	// Interrupted, it shuts down cleanly.
	if err := interrupt(); err != nil {
		t.Errorf("after SIGINT: %v", err)
	}

	base, out, took, _ = firstRun(t, home)
	t.Logf("second run: serving after %v", took.Round(time.Millisecond))
	if strings.Contains(out.String(), "First run") {
		t.Errorf("second run imported the sample again:\n%s", out.String())
	}
	getJSON(t, base+"/api/profiles", &list)
	if len(list.Profiles) != 1 {
		t.Errorf("second run lists %d profiles; want 1", len(list.Profiles))
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestServeDiskFull: when SQLite finds the disk full (SQLITE_FULL), an
// upload gets 507 saying so and nothing is stored. The disk is made full
// for real: the database's write-ahead log is a device node like
// /dev/full, whose writes fail with ENOSPC.
func TestServeDiskFull(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	file := filepath.Join(dir, "c.perf.txt.gz")
	writeCapture(t, file)
	st, err := openStore(context.Background(), env{stderr: io.Discard}, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	if err := syscall.Mknod(db+"-wal", syscall.S_IFCHR|0o644, 1<<8|7); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot make a /dev/full device node here (%v); run as root to test a full disk", err)
		}
		t.Fatal(err)
	}
	base, _, _ := startServe(t, "serve", "--addr", "127.0.0.1:0", "--db", db)
	data, _ := os.ReadFile(file)
	res, err := http.Post(base+"/api/profiles", "application/octet-stream", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusInsufficientStorage || !strings.Contains(string(b), "disk is full") {
		t.Errorf("upload to a full disk = %d %s; want 507 saying the disk is full", res.StatusCode, b)
	}
	if n := countProfiles(t, base); n != 0 {
		t.Errorf("%d profiles listed after the failed upload; want none", n)
	}
}

// TestServeLimits: the store's limits as serve's flags set them, through
// HTTP: a zstd-of-zstd upload of 51 MB of text gets 413 under --max-text
// 10MB (before, it was stored), an upload that amplifies past --max-samples
// gets 413, and neither stores anything.
func TestServeLimits(t *testing.T) {
	dir := t.TempDir()
	base, _, _ := startServe(t, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"),
		"--max-text", "10MB", "--max-samples", "100000")
	one := "a 1/1 [000] 100.000001: 1 c:\n\tf\n\n" // 30 bytes, one sample
	zstdOf := func(b []byte) []byte {
		w, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		if err != nil {
			t.Fatal(err)
		}
		return w.EncodeAll(b, nil)
	}
	post := func(body []byte) (int, string) {
		t.Helper()
		res, err := http.Post(base+"/api/profiles", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	nested := zstdOf(zstdOf(bytes.Repeat([]byte(one), 51<<20/len(one))))
	if code, b := post(nested); code != http.StatusRequestEntityTooLarge {
		t.Errorf("zstd-of-zstd upload of %d bytes (51 MB of text) = %d %s; want 413", len(nested), code, b)
	}
	amplified := zstdOf(bytes.Repeat([]byte(one), 150_000)) // 4.5 MB of text, 150,000 samples
	if code, b := post(amplified); code != http.StatusRequestEntityTooLarge || !strings.Contains(b, `more than 100000 samples, the limit per profile (--max-samples)"`) {
		t.Errorf("upload of 150,000 samples under --max-samples 100000 = %d %s; want 413 naming the cap and its flag, and nothing after", code, b)
	}
	if n := countProfiles(t, base); n != 0 {
		t.Errorf("%d profiles stored after refused uploads; want none", n)
	}
	if code, b := post(zstdOf(bytes.Repeat([]byte(one), 100_000))); code != http.StatusCreated {
		t.Errorf("upload at the sample cap = %d %s; want 201", code, b)
	}
}

// TestServeDirectory gives serve a directory: it imports the captures in
// it; a view given a directory says it reads one capture.
func TestServeDirectory(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps")
	os.Mkdir(caps, 0o755)
	writeCapture(t, filepath.Join(caps, "a.perf.txt.gz"))
	data, err := os.ReadFile(viewCapture(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(caps, "b.perf.txt"), data, 0o644)
	_, out, stop := startServe(t, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"), caps)
	stop()
	for _, f := range []string{"a.perf.txt.gz", "b.perf.txt"} {
		if !strings.Contains(out.String(), "imported "+filepath.Join(caps, f)+": ") {
			t.Errorf("serve DIR did not import %s:\n%s", f, out.String())
		}
	}
	if _, _, err := runCmd(t, nil, "heatmap", caps); err == nil || !strings.Contains(err.Error(), caps+" is a directory; a view reads one capture") {
		t.Errorf("heatmap DIR: %v; want it to say a view reads one capture", err)
	}
}
