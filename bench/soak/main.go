// Command soak is Subsecond's load-and-soak benchmark: it serves a fresh
// database with the default limits and, for ten minutes, keeps 4 uploaders
// and 20 readers busy against captures the size of the bundled incident
// (96 CPUs, 120 s, 564,480 samples), while once a minute one upload trickles
// in below the minimum rate and ten heavy requests are abandoned as soon as
// they are sent. It reports every answer by status (no 5xx is the target),
// view latencies (p50, p90, p99 per kind), the server's peak RSS (target
// ≤ 1.5 GiB), and checks that every upload is listed with its exact sample
// count. It is not run in CI:
//
//	go run ./bench/soak                   # 10 minutes
//	go run ./bench/soak -duration 1m      # a quick look
//
// Uploaders and the trickler connect from their own loopback addresses
// (127.0.0.2 and up), as separate hosts would, so that the per-client
// upload limit applies to each alone.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type config struct {
	duration  time.Duration
	uploaders int
	readers   int
	capture   string
	truth     string
	keep      bool
}

func run() error {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 10*time.Minute, "how long to keep the load on")
	flag.IntVar(&cfg.uploaders, "uploaders", 4, "concurrent uploaders")
	flag.IntVar(&cfg.readers, "readers", 20, "concurrent readers")
	flag.StringVar(&cfg.capture, "capture", "sample-data/incident-96cpu-120s.perf.txt.zst", "zstd-compressed capture each upload sends")
	flag.StringVar(&cfg.truth, "truth", "sample-data/incident-96cpu-120s.perf.txt.truth.json", "the capture's ground truth (its sample count)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary directory with the database and the server's log")
	flag.Parse()

	capture, err := os.ReadFile(cfg.capture)
	if err != nil {
		return err
	}
	var truth struct {
		Samples int64 `json:"samples"`
	}
	if b, err := os.ReadFile(cfg.truth); err != nil {
		return err
	} else if err := json.Unmarshal(b, &truth); err != nil {
		return fmt.Errorf("%s: %w", cfg.truth, err)
	}

	dir, err := os.MkdirTemp("", "subsecond-soak-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "subsecond")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/subsecond").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	srv, err := startServer(bin, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("soak: %s against %s for %s: %d uploaders, %d readers, a trickling upload and 10 abandoned heavy requests a minute\n",
		bin, srv.base, cfg.duration, cfg.uploaders, cfg.readers)
	fmt.Printf("soak: each upload is %s (%.1f MB compressed, %d samples)\n", cfg.capture, float64(len(capture))/1e6, truth.Samples)

	s := &soak{cfg: cfg, base: srv.base, capture: capture, stats: map[string]*kind{}}
	// One upload first, so that readers have something to read.
	if err := s.upload(context.Background(), s.client("127.0.0.2"), -1); err != nil {
		return fmt.Errorf("first upload: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration)
	defer cancel()
	var wg sync.WaitGroup
	rss := make(chan []int64, 1)
	go func() { rss <- srv.watchRSS(ctx) }()
	for i := range cfg.uploaders {
		wg.Add(1)
		go func() { defer wg.Done(); s.uploadLoop(ctx, i) }()
	}
	for i := range cfg.readers {
		wg.Add(1)
		go func() { defer wg.Done(); s.readLoop(ctx, uint64(i)) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.minutely(ctx) }()
	wg.Wait()
	perMinute := <-rss
	peak, err := srv.peakRSS()
	if err != nil {
		return err
	}
	return s.report(truth.Samples, peak, perMinute)
}

// server is the subsecond serve process under test.
type server struct {
	cmd  *exec.Cmd
	base string
	log  *os.File
}

func startServer(bin, dir string) (*server, error) {
	log, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "soak.db"), "--log-format", "json")
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	re := regexp.MustCompile(`serving .* on (http://\S+?)/`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return &server{cmd: cmd, base: m[1], log: log}, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("serve printed no address; see %s", log.Name())
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// procStatus returns a field of the server's /proc/PID/status in bytes.
func (s *server) procStatus(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, s.cmd.Process.Pid)
}

// peakRSS is the kernel's record of the server's largest resident set.
func (s *server) peakRSS() (int64, error) { return s.procStatus("VmHWM") }

// watchRSS returns the largest RSS seen in each minute until ctx ends.
func (s *server) watchRSS(ctx context.Context) []int64 {
	var out []int64
	start := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case now := <-t.C:
			rss, err := s.procStatus("VmRSS")
			if err != nil {
				continue
			}
			m := int(now.Sub(start) / time.Minute)
			for len(out) <= m {
				out = append(out, 0)
			}
			out[m] = max(out[m], rss)
		}
	}
}

// soak holds the load's state and what it measured.
type soak struct {
	cfg     config
	base    string
	capture []byte
	seq     atomic.Int64

	mu       sync.Mutex
	stats    map[string]*kind // by request kind
	uploads  []upload         // successful uploads
	profiles []string         // IDs readers choose from
}

type upload struct {
	id      string
	samples int64
	took    time.Duration
}

// kind is what was measured for one kind of request.
type kind struct {
	codes     map[int]int
	errs      map[string]int
	latencies []time.Duration // of answers, 2xx–4xx
}

func (s *soak) record(name string, code int, err error, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.stats[name]
	if k == nil {
		k = &kind{codes: map[int]int{}, errs: map[string]int{}}
		s.stats[name] = k
	}
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		k.errs[msg]++
		return
	}
	k.codes[code]++
	k.latencies = append(k.latencies, d)
}

// client returns an HTTP client whose connections come from the loopback
// address local.
func (s *soak) client(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 32, DisableCompression: false}}
}

// body returns a capture that no upload sent before: a zstd frame with a
// header comment naming the upload, then the capture's own frames.
func (s *soak) body() []byte {
	n := s.seq.Add(1)
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b)
	fmt.Fprintf(zw, "# soak upload : %d\n", n)
	zw.Close()
	b.Write(s.capture)
	return b.Bytes()
}

// upload sends one capture and records it; n is the uploader, -1 for the
// first.
func (s *soak) upload(ctx context.Context, c *http.Client, n int) error {
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/api/profiles?name=soak", bytes.NewReader(s.body()))
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.record("upload", 0, err, 0)
		}
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	took := time.Since(start)
	s.record("upload", res.StatusCode, nil, took)
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("upload: %d %s", res.StatusCode, b)
	}
	var up struct {
		Profile struct {
			ID      string `json:"id"`
			Samples int64  `json:"samples"`
		} `json:"profile"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		return err
	}
	s.mu.Lock()
	s.uploads = append(s.uploads, upload{up.Profile.ID, up.Profile.Samples, took})
	s.profiles = append(s.profiles, up.Profile.ID)
	s.mu.Unlock()
	return nil
}

func (s *soak) uploadLoop(ctx context.Context, i int) {
	c := s.client(fmt.Sprintf("127.0.0.%d", 2+i))
	for ctx.Err() == nil {
		if err := s.upload(ctx, c, i); err != nil && ctx.Err() == nil {
			time.Sleep(time.Second)
		}
	}
}

// views are what a reader asks for, as the web app does: a profile page,
// its two maps and hot spots, a flame graph of a few seconds, now and
// then an export.
var views = []struct {
	name   string
	weight int
	path   func(r *rand.Rand) string
}{
	{"page", 15, func(*rand.Rand) string { return "" }},
	{"heatmap", 20, func(*rand.Rand) string { return "/heatmap" }},
	{"cpus", 20, func(*rand.Rand) string { return "/cpus?bucket=0.2" }},
	{"hotspots", 15, func(*rand.Rand) string { return "/hotspots?bucket=0.2" }},
	{"flamegraph", 25, func(r *rand.Rand) string {
		start := r.IntN(110)
		return fmt.Sprintf("/flamegraph?start=%d&end=%d", start, start+2+r.IntN(8))
	}},
	{"export", 5, func(r *rand.Rand) string {
		start := r.IntN(115)
		return fmt.Sprintf("/flamegraph?start=%d&end=%d&format=%s", start, start+1, []string{"svg", "pprof", "folded"}[r.IntN(3)])
	}},
}

func (s *soak) readLoop(ctx context.Context, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 42))
	c := s.client("127.0.0.1")
	total := 0
	for _, v := range views {
		total += v.weight
	}
	for ctx.Err() == nil {
		s.mu.Lock()
		id := s.profiles[r.IntN(len(s.profiles))]
		s.mu.Unlock()
		pick := r.IntN(total)
		for _, v := range views {
			if pick -= v.weight; pick < 0 {
				url := s.base + "/api/profiles/" + id + v.path(r)
				if v.name == "page" {
					url = s.base + "/p/" + id
				}
				s.get(ctx, c, v.name, url)
				break
			}
		}
	}
}

func (s *soak) get(ctx context.Context, c *http.Client, name, url string) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.record(name, 0, err, 0)
		}
		return
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if ctx.Err() != nil {
		return
	}
	s.record(name, res.StatusCode, err, time.Since(start))
}

// minutely starts, each minute, one trickling upload and ten heavy
// requests that are abandoned at once.
func (s *soak) minutely(ctx context.Context) {
	trickler := s.client("127.0.0.200")
	abandoner := s.client("127.0.0.201")
	var wg sync.WaitGroup
	defer wg.Wait()
	for m := 0; ; m++ {
		wg.Add(1)
		go func() { defer wg.Done(); s.trickle(ctx, trickler) }()
		s.mu.Lock()
		id := s.profiles[len(s.profiles)-1]
		s.mu.Unlock()
		for i := range 10 {
			// Distinct buckets, so that no two share a computation;
			// all within the default cell limit for 96 CPUs × 120 s.
			path := fmt.Sprintf("/hotspots?bucket=0.%03d&threshold=0.%02d", 12+i, 50+m%49)
			if i%2 == 1 {
				path = fmt.Sprintf("/cpus?bucket=0.%03d", 12+i)
			}
			actx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer cancel()
				req, _ := http.NewRequestWithContext(actx, "GET", s.base+"/api/profiles/"+id+path, nil)
				if res, err := abandoner.Do(req); err == nil {
					res.Body.Close()
				}
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Minute):
		}
	}
}

// trickle sends a capture at 1 KiB/s, far below the minimum rate: the
// server should end it with 408 after its rate window.
func (s *soak) trickle(ctx context.Context, c *http.Client) {
	pr, pw := io.Pipe()
	go func() {
		body := s.body()
		for len(body) > 0 && ctx.Err() == nil {
			n := min(256, len(body))
			if _, err := pw.Write(body[:n]); err != nil {
				return
			}
			body = body[n:]
			time.Sleep(250 * time.Millisecond)
		}
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/profiles?name=trickle", pr)
	start := time.Now()
	res, err := c.Do(req)
	pr.CloseWithError(errors.New("done"))
	if err != nil {
		if ctx.Err() == nil {
			s.record("trickle", 0, err, 0)
		}
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	s.record("trickle", res.StatusCode, nil, time.Since(start))
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

func (s *soak) report(want int64, peak int64, perMinute []int64) error {
	fmt.Println()
	names := make([]string, 0, len(s.stats))
	for n := range s.stats {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Printf("%-11s %8s  %-34s %9s %9s %9s %9s\n", "KIND", "ANSWERS", "STATUS", "P50", "P90", "P99", "MAX")
	var all []time.Duration
	fiveXX := 0
	for _, n := range names {
		k := s.stats[n]
		slices.Sort(k.latencies)
		var codes []string
		count := 0
		for _, c := range slices.Sorted(maps.Keys(k.codes)) {
			codes = append(codes, fmt.Sprintf("%d×%d", c, k.codes[c]))
			count += k.codes[c]
			if c >= 500 {
				fiveXX += k.codes[c]
			}
		}
		for e, c := range k.errs {
			codes = append(codes, fmt.Sprintf("%q×%d", e, c))
		}
		fmt.Printf("%-11s %8d  %-34s %9s %9s %9s %9s\n", n, count, strings.Join(codes, " "),
			round(percentile(k.latencies, .5)), round(percentile(k.latencies, .9)), round(percentile(k.latencies, .99)), round(percentile(k.latencies, 1)))
		if n != "upload" && n != "trickle" {
			all = append(all, k.latencies...)
		}
	}
	slices.Sort(all)
	fmt.Printf("\nviews: %d answers, p50 %s, p90 %s, p99 %s\n", len(all), round(percentile(all, .5)), round(percentile(all, .9)), round(percentile(all, .99)))
	fmt.Printf("5xx answers: %d (target 0)\n", fiveXX)
	var mins []string
	for _, r := range perMinute {
		mins = append(mins, fmt.Sprintf("%.0f", float64(r)/(1<<20)))
	}
	fmt.Printf("server peak RSS: %.0f MiB (target ≤ 1536 MiB); largest RSS each minute, MiB: %s\n", float64(peak)/(1<<20), strings.Join(mins, " "))

	// Every upload listed, with its exact sample count, page after page.
	listed := map[string]int64{}
	for next := "/api/profiles?per_page=1000"; next != ""; {
		var page struct {
			Profiles []struct {
				ID      string `json:"id"`
				Samples int64  `json:"samples"`
			} `json:"profiles"`
			Next string `json:"next"`
		}
		if err := getJSON(s.base+next, &page); err != nil {
			return err
		}
		for _, p := range page.Profiles {
			listed[p.ID] = p.Samples
		}
		next = page.Next
	}
	bad := 0
	for _, u := range s.uploads {
		if n, ok := listed[u.id]; !ok || n != want || u.samples != want {
			bad++
			fmt.Printf("upload %s: answered %d samples, listed %v (%d); want %d\n", u.id, u.samples, ok, n, want)
		}
	}
	fmt.Printf("uploads: %d stored, %d listed with exactly %d samples; %d profiles listed in all\n", len(s.uploads), len(s.uploads)-bad, want, len(listed))
	if up, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s", up)
	}
	if fiveXX > 0 || bad > 0 || peak > 1536<<20 {
		return errors.New("the soak missed a target")
	}
	return nil
}

func round(d time.Duration) time.Duration {
	switch {
	case d > 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// getJSON decodes the JSON answer of a GET of url into v; an answer other
// than 200 is an error.
func getJSON(url string, v any) error {
	res, err := http.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(v)
}
