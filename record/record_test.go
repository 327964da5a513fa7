package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// fakePerf puts testdata/fake-perf on a fresh PATH as "perf", with the
// given capture texts as the files it "records" and last as the one it
// finishes when stopped. It returns the file its arguments are logged to.
func fakePerf(t *testing.T, last string, captures ...string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	caps := filepath.Join(dir, "captures")
	for _, d := range []string{bin, caps} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join("testdata", "fake-perf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "perf"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range captures {
		if err := os.WriteFile(filepath.Join(caps, fmt.Sprintf("%02d", i)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lastFile := filepath.Join(dir, "last")
	if err := os.WriteFile(lastFile, []byte(last), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("FAKE_PERF_CAPTURES", caps)
	t.Setenv("FAKE_PERF_LAST", lastFile)
	log := filepath.Join(dir, "args")
	t.Setenv("FAKE_PERF_LOG", log)
	return log
}

// collector is a Sink that keeps what it is given, decompressed, and can be
// told to refuse.
type collector struct {
	mu     sync.Mutex
	names  []string
	texts  []string
	refuse int // refuse this many offers first
}

func (c *collector) sink(ctx context.Context, name string, r io.Reader) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse > 0 {
		c.refuse--
		return errors.New("server unavailable")
	}
	zr, err := zstd.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	c.names = append(c.names, name)
	c.texts = append(c.texts, string(b))
	return nil
}

func (c *collector) got() ([]string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.names), slices.Clone(c.texts)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestRunConvertsSendsAndDeletes(t *testing.T) {
	args := fakePerf(t, "capture 3\n", "capture 1\n", "fail: not perf data\n", "capture 2\n")
	dir := t.TempDir()
	c := &collector{refuse: 1} // the first offer fails, as when the server is down
	r := startRun(t, Options{Dir: dir, Sink: c.sink, Poll: 20 * time.Millisecond, MinFree: 1})
	waitFor(t, "two captures sent", func() bool { n, _ := c.got(); return len(n) == 2 })
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	b, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	if want := "record -F 49 -a -g --all-cgroups -k CLOCK_REALTIME --switch-output=2m -o " + filepath.Join(dir, "perf.data"); strings.TrimSpace(string(b)) != want {
		t.Errorf("perf ran as %q; want %q", strings.TrimSpace(string(b)), want)
	}
	names, texts := c.got()
	if want := []string{"capture 1\n", "capture 2\n", "capture 3\n"}; !slices.Equal(texts, want) {
		t.Errorf("sink got %q; want %q, in order, with the last capture finished when perf stopped", texts, want)
	}
	if len(names) == 3 && names[2] != "perf.data.99999999999999.perf.txt.zst" {
		t.Errorf("last name %q; want perf.data.99999999999999.perf.txt.zst", names[2])
	}
	// Raw files are deleted once converted; the one perf script refused
	// is set aside in rejected/ for a person to look at, and is named in
	// the log.
	raw, _ := filepath.Glob(filepath.Join(dir, "perf.data.*"))
	set, _ := filepath.Glob(filepath.Join(dir, "rejected", "perf.data.*[0-9]"))
	if len(raw) != 0 || len(set) != 1 || !strings.HasSuffix(set[0], ".20261130000012") {
		t.Errorf("raw files left: %q, set aside: %q; want only the one perf script failed on, in rejected/", raw, set)
	}
	sent, _ := filepath.Glob(filepath.Join(dir, "sent", "*"))
	pending, _ := filepath.Glob(filepath.Join(dir, "pending", "*"))
	if len(sent) != 3 || len(pending) != 0 {
		t.Errorf("sent/ holds %d, pending/ %d; want 3 and 0", len(sent), len(pending))
	}
	for _, want := range []string{"not a perf.data file", "server unavailable (kept in pending/, retried next cycle)"} {
		if !strings.Contains(r.log(), want) {
			t.Errorf("log does not say %q:\n%s", want, r.log())
		}
	}
}

// TestRunWaitsForAWholeCapture: a finished capture's file that is still
// empty when the recorder looks (its writer not yet done) is neither sent
// empty nor deleted, but converted once written. The record test once sent
// an empty capture under load, its fake perf having been caught between
// creating a file and writing it.
func TestRunWaitsForAWholeCapture(t *testing.T) {
	fakePerf(t, "capture 2\n", "capture 1\n")
	hold := filepath.Join(t.TempDir(), "hold")
	t.Setenv("FAKE_PERF_HOLD", hold)
	dir := t.TempDir()
	c := &collector{}
	r := startRun(t, Options{Dir: dir, Sink: c.sink, Poll: 10 * time.Millisecond, MinFree: 1})
	// Some cycles pass over the empty file before its writer finishes.
	waitFor(t, "a cycle over the empty capture", func() bool {
		n, _ := c.got()
		return len(n) > 0 || strings.Count(r.log(), "convert perf.data.20261130000011: perf script printed nothing") >= 2
	})
	if n, _ := c.got(); len(n) != 0 {
		t.Fatalf("sent %q before the capture was written", n)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the capture sent", func() bool { n, _ := c.got(); return len(n) == 1 })
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, texts := c.got(); !slices.Equal(texts, []string{"capture 1\n", "capture 2\n"}) {
		t.Errorf("sink got %q; want the held capture whole, then the last", texts)
	}
}

// running is a Run started by startRun.
type running struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	buf    bytes.Buffer
}

// startRun starts Run with opt in the background, its log kept.
func startRun(t *testing.T, opt Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	opt.Log = r
	go func() { r.done <- Run(ctx, opt) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *running) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// log returns what Run has logged so far.
func (r *running) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// stop ends Run as an interrupt does and returns its error.
func (r *running) stop() error {
	r.cancel()
	err := <-r.done
	r.done <- err // for the cleanup
	return err
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sent", "pending"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	now := time.Now()
	files := map[string]time.Duration{
		"sent/a.perf.txt.zst":    13 * time.Hour,
		"sent/b.perf.txt.zst":    time.Hour,
		"pending/c.perf.txt.zst": 13 * time.Hour,
		"perf.data.1":            13 * time.Hour,
		"perf.data":              13 * time.Hour, // being written: never pruned
	}
	for f, age := range files {
		p := filepath.Join(dir, f)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	r := &recorder{o: Options{Dir: dir, Keep: 12 * time.Hour, Log: io.Discard}}
	r.prune(now)
	for f, age := range files {
		_, err := os.Stat(filepath.Join(dir, f))
		if kept := err == nil; kept != (age < 12*time.Hour || f == "perf.data") {
			t.Errorf("%s, %v old: kept %v", f, age, kept)
		}
	}
}

func TestRunRefusesToStart(t *testing.T) {
	fakePerf(t, "")
	dir := t.TempDir()
	sink := (&collector{}).sink
	err := Run(context.Background(), Options{Dir: dir, Sink: sink, Perf: "no-such-perf"})
	if !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "linux-perf") {
		t.Errorf("missing perf: %v; want ErrNoPerf saying how to install it", err)
	}
	err = Run(context.Background(), Options{Dir: dir, Sink: sink, MinFree: 1 << 62})
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), dir) {
		t.Errorf("full disk: %v; want ErrDiskFull naming %s", err, dir)
	}
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "sys", "kernel"), 0o755)
	os.WriteFile(filepath.Join(proc, "sys", "kernel", "perf_event_paranoid"), []byte("2\n"), 0o644)
	user := 1000
	err = Run(context.Background(), Options{Dir: dir, Sink: sink, ProcRoot: proc, EUID: &user})
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "perf_event_paranoid is 2") {
		t.Errorf("paranoid 2: %v; want ErrPermission naming the setting", err)
	}
}

func TestCheckPermission(t *testing.T) {
	tests := []struct {
		euid     int
		paranoid string
		capEff   string
		ok       bool
	}{
		{0, "2", "0000000000000000", true},
		{1000, "0", "0000000000000000", true},
		{1000, "-1", "0000000000000000", true},
		{1000, "1", "0000000000000000", false},
		{1000, "2", "0000004000000000", true}, // CAP_PERFMON
		{1000, "2", "0000000000200000", true}, // CAP_SYS_ADMIN
		{1000, "2", "0000000000000400", false},
		{1000, "x", "0000000000000000", false},
	}
	for _, tt := range tests {
		proc := t.TempDir()
		os.MkdirAll(filepath.Join(proc, "sys", "kernel"), 0o755)
		os.MkdirAll(filepath.Join(proc, "self"), 0o755)
		os.WriteFile(filepath.Join(proc, "sys", "kernel", "perf_event_paranoid"), []byte(tt.paranoid+"\n"), 0o644)
		os.WriteFile(filepath.Join(proc, "self", "status"), []byte("Name:\tx\nCapEff:\t"+tt.capEff+"\n"), 0o644)
		err := CheckPermission(proc, tt.euid)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrPermission)) {
			t.Errorf("CheckPermission(euid %d, paranoid %s, CapEff %s) = %v; want ok %v", tt.euid, tt.paranoid, tt.capEff, err, tt.ok)
		}
	}
}

func TestSwitchSpec(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Minute: "2m", 90 * time.Second: "90s", time.Hour: "60m", 10 * time.Millisecond: "1s"} {
		if got := switchSpec(d); got != want {
			t.Errorf("switchSpec(%v) = %q; want %q", d, got, want)
		}
	}
}

// TestRunRejectsAnUnreadableCaptureOnce: a finished capture perf script
// cannot read (truncated when the disk filled or perf was killed) is tried
// once, then moved to rejected/ with its reason beside it, and not tried
// again every cycle.
func TestRunRejectsAnUnreadableCaptureOnce(t *testing.T) {
	truncated := "fail: not perf data\n"
	tests := []struct{ name, capture, reason string }{
		{"fake", truncated, "not a perf.data file"},
	}
	if real, err := exec.LookPath("perf"); err == nil {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "perf", "realtime.perf.data"))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("FAKE_PERF_REAL", real)
		tests = append(tests, struct{ name, capture, reason string }{"real perf, truncated", string(b[:40000]), "perf script"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakePerf(t, "capture 3\n", "capture 1\n", tt.capture)
			dir := t.TempDir()
			c := &collector{}
			r := startRun(t, Options{Dir: dir, Sink: c.sink, Poll: 10 * time.Millisecond, MinFree: 1})
			bad := "perf.data.20261130000012"
			waitFor(t, "the unreadable capture rejected", func() bool {
				_, err := os.Stat(filepath.Join(dir, "rejected", bad))
				return err == nil || strings.Count(r.log(), "convert "+bad) > 1
			})
			time.Sleep(200 * time.Millisecond) // 20 cycles
			if err := r.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if n := strings.Count(r.log(), "convert "+bad); n != 1 {
				t.Errorf("%s tried %d times; want once:\n%s", bad, n, r.log())
			}
			if _, err := os.Stat(filepath.Join(dir, bad)); err == nil {
				t.Errorf("%s left in %s", bad, dir)
			}
			reason, err := os.ReadFile(filepath.Join(dir, "rejected", bad+".reason"))
			if err != nil || !strings.Contains(string(reason), tt.reason) {
				t.Errorf("rejected/%s.reason: %q, %v; want perf script's message (%q)", bad, reason, err, tt.reason)
			}
			if !strings.Contains(r.log(), "rejected/"+bad+".reason") {
				t.Errorf("log does not name the reason file:\n%s", r.log())
			}
			if _, texts := c.got(); !slices.Equal(texts, []string{"capture 1\n", "capture 3\n"}) {
				t.Errorf("sink got %q; want the readable captures", texts)
			}
		})
	}
}

// TestPerfDiesWithTheRecorder kills a recorder with SIGKILL: its perf
// receives SIGTERM, finishes its file and exits, rather than recording on
// with nobody to convert its files.
func TestPerfDiesWithTheRecorder(t *testing.T) {
	if os.Getenv("RECORD_HELPER_DIR") != "" {
		t.Skip("the helper process itself")
	}
	fakePerf(t, "capture 2\n", "capture 1\n")
	pidFile := filepath.Join(t.TempDir(), "perf.pid")
	t.Setenv("FAKE_PERF_PID", pidFile)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRun$")
	cmd.Env = append(os.Environ(), "RECORD_HELPER_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pid int
	waitFor(t, "perf started", func() bool {
		b, _ := os.ReadFile(pidFile)
		_, err := fmt.Sscan(string(b), &pid)
		return err == nil
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	cmd.Process.Kill()
	cmd.Wait()
	waitFor(t, "perf to finish its file and exit", func() bool {
		_, err := os.Stat(filepath.Join(dir, "perf.data.99999999999999"))
		return err == nil && syscall.Kill(pid, 0) != nil
	})
}

// TestHelperRun is the recorder TestPerfDiesWithTheRecorder kills.
func TestHelperRun(t *testing.T) {
	dir := os.Getenv("RECORD_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestPerfDiesWithTheRecorder")
	}
	Run(context.Background(), Options{Dir: dir, Sink: (&collector{}).sink, Poll: 10 * time.Millisecond, MinFree: 1})
}

// TestRunFinishesALeftPerfData: a perf.data left in Dir by a recorder that
// was killed, with no perf writing it any more, is tried once with perf
// script when the next recorder starts: converted and sent if readable, set
// aside in rejected/ if not.
func TestRunFinishesALeftPerfData(t *testing.T) {
	for _, tt := range []struct {
		left string
		sent bool
	}{
		{"capture left\n", true},
		{"fail: truncated\n", false},
	} {
		fakePerf(t, "capture 2\n", "capture 1\n")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "perf.data"), []byte(tt.left), 0o600); err != nil {
			t.Fatal(err)
		}
		c := &collector{}
		r := startRun(t, Options{Dir: dir, Sink: c.sink, Poll: 10 * time.Millisecond, MinFree: 1})
		waitFor(t, "capture 1 sent", func() bool { n, _ := c.got(); return len(n) >= 1 })
		time.Sleep(100 * time.Millisecond)
		if err := r.stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		_, texts := c.got()
		set, _ := filepath.Glob(filepath.Join(dir, "rejected", "perf.data.*[0-9]"))
		if got := slices.Contains(texts, tt.left); got != tt.sent || (len(set) == 1) == tt.sent {
			t.Errorf("perf.data holding %q: sent %v, set aside %q; want sent %v\n%s", tt.left, got, set, tt.sent, r.log())
		}
		if n := strings.Count(r.log(), "convert perf.data."); !tt.sent && n != 1 {
			t.Errorf("perf.data holding %q tried %d times; want once", tt.left, n)
		}
	}
}

// TestRunPausesOnAFullDisk: when the disk fills, perf is stopped cleanly
// and the night goes on; recording resumes once MinFree is free again.
func TestRunPausesOnAFullDisk(t *testing.T) {
	fakePerf(t, "capture 3\n", "capture 1\n")
	var free atomic.Int64
	free.Store(1 << 30)
	c := &collector{}
	r := startRun(t, Options{Dir: t.TempDir(), Sink: c.sink, Poll: 10 * time.Millisecond, MinFree: 1 << 20,
		Free: func(string) (int64, error) { return free.Load(), nil }})
	waitFor(t, "capture 1 sent", func() bool { n, _ := c.got(); return len(n) == 1 })
	free.Store(1 << 10)
	waitFor(t, "recording paused", func() bool { return strings.Contains(r.log(), "recording paused") })
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-r.done:
		r.done <- err
		t.Fatalf("Run ended on a full disk: %v\n%s", err, r.log())
	default:
	}
	if n, _ := c.got(); len(n) != 1 {
		t.Errorf("converted and sent %d captures while the disk was full; want none after the first", len(n))
	}
	free.Store(1 << 30)
	waitFor(t, "recording resumed", func() bool {
		return strings.Contains(r.log(), "recording resumed") && strings.Count(r.log(), "recording: ") == 2
	})
	waitFor(t, "the capture finished at the pause sent", func() bool { n, _ := c.got(); return len(n) >= 3 })
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v\n%s", err, r.log())
	}
	_, texts := c.got()
	slices.Sort(texts)
	if want := []string{"capture 1\n", "capture 1\n", "capture 3\n", "capture 3\n"}; !slices.Equal(texts, want) {
		t.Errorf("sink got %q; want both recordings' captures, the one perf finished at the pause too", texts)
	}
}

// TestRunBacksOff: a Sink that keeps failing is offered the capture again
// after waits that double (with jitter) up to RetryMax, and after at least
// the Retry-After it asks for, not every cycle; when Run stops, the error
// names the capture left in pending/.
func TestRunBacksOff(t *testing.T) {
	fakePerf(t, "", "capture 1\n")
	var mu sync.Mutex
	var offers []time.Time
	sink := func(ctx context.Context, name string, r io.Reader) error {
		mu.Lock()
		defer mu.Unlock()
		offers = append(offers, time.Now())
		if len(offers) == 1 {
			return &RetryAfterError{After: 300 * time.Millisecond, Err: errors.New("503 Service Unavailable")}
		}
		return errors.New("server unavailable")
	}
	dir := t.TempDir()
	r := startRun(t, Options{Dir: dir, Sink: sink, Poll: 5 * time.Millisecond, MinFree: 1,
		RetryMin: 40 * time.Millisecond, RetryMax: 160 * time.Millisecond})
	time.Sleep(1200 * time.Millisecond)
	err := r.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(offers) < 4 || len(offers) > 14 {
		t.Errorf("offered %d times in 1.2 s; want a back-off from 40 ms to 160 ms after a 300 ms Retry-After:\n%s", len(offers), r.log())
	}
	for i := 1; i < len(offers); i++ {
		gap := offers[i].Sub(offers[i-1])
		want := min(40*time.Millisecond<<(i-1), 160*time.Millisecond) / 2 // the least jitter allows
		if i == 1 {
			want = 300 * time.Millisecond
		}
		if gap < want {
			t.Errorf("offer %d came %v after the one before; want at least %v", i+1, gap, want)
		}
	}
	if !errors.Is(err, ErrUnsent) || !strings.Contains(err.Error(), "perf.data.20261130000011.perf.txt.zst") {
		t.Errorf("Run: %v; want ErrUnsent naming the capture left in pending/", err)
	}
}

// TestRunStopsOfferingWhenDenied: a Sink error wrapping ErrDenied (a
// wrong token) holds for the run: said once, the captures kept in pending/
// and named when Run stops.
func TestRunStopsOfferingWhenDenied(t *testing.T) {
	fakePerf(t, "capture 3\n", "capture 1\n", "capture 2\n")
	var offers atomic.Int32
	sink := func(ctx context.Context, name string, r io.Reader) error {
		offers.Add(1)
		return fmt.Errorf("%w: 401 Unauthorized", ErrDenied)
	}
	dir := t.TempDir()
	r := startRun(t, Options{Dir: dir, Sink: sink, Poll: 5 * time.Millisecond, MinFree: 1})
	waitFor(t, "two captures converted", func() bool {
		p, _ := filepath.Glob(filepath.Join(dir, "pending", "*"))
		return len(p) == 2
	})
	err := r.stop()
	// The temporary directory's name may hold "401" too: count the answer.
	if n, logged := offers.Load(), strings.Count(r.log(), "401 Unauthorized"); n != 1 || logged != 1 {
		t.Errorf("offered %d times, 401 logged %d times; want once each:\n%s", n, logged, r.log())
	}
	if !errors.Is(err, ErrUnsent) || !errors.Is(err, ErrDenied) || strings.Count(err.Error(), ".perf.txt.zst") != 3 {
		t.Errorf("Run: %v; want ErrUnsent and ErrDenied naming the 3 captures left", err)
	}
}
