// Command soak is Subsecond's load-and-soak benchmark: it serves a fresh
// database with the default limits and, for ten minutes, keeps 4 uploaders
// and 20 readers busy against captures the size of the bundled incident
// (96 CPUs, 120 s, 564,480 samples), while once a minute one upload trickles
// in below the minimum rate, ten heavy requests are abandoned as soon as
// they are sent, an upload of 49 M identical samples (2.7 GB of text in
// 583 KB of zstd) must be refused with a 4xx, and a small capture of
// 65,535 event names must be stored. It reports every answer by status
// (no 5xx is the target), view latencies (p50, p90, p99 per kind; the
// target is a p99 of all views ≤ 500 ms), the server's peak RSS (target
// ≤ 1 GiB) and CPU time, and checks that every
// upload is listed with its exact sample count. It is not run in CI:
//
//	go run ./bench/soak                   # 10 minutes
//	go run ./bench/soak -duration 1m      # a quick look
//	go run ./bench/soak -think 1s         # readers pause 1 s on average between requests
//	go run ./bench/soak -heap heap.pb.gz  # and the server's heap profile, three quarters in
//	go run ./bench/soak -cpu cpu.pb.gz    # and its CPU profile of a minute near the end
//	eval "$(.ci/postgres start /tmp/pg-soak)"
//	go run ./bench/soak -pg /tmp/pg-soak  # on PostgreSQL, restarted once half-way
//	go run ./bench/soak -pg /tmp/pg-soak -restart none  # not restarted: the backends' costs alone
//
// Readers send their next request as soon as the last is answered unless
// -think gives them a mean pause (exponentially distributed), as users
// take: without it the load saturates the server, and a view's latency is
// mostly its wait for a slot.
//
// Uploads come from -hosts hosts in turn, each host's captures one after
// another on its own wall clock, with the host's series and now and then a
// kernel-log marker posted after each as the recorder sends them, so that
// readers also ask for the hosts' series, explanations and moves, the
// fleet's map, searches and group contrasts, the host list and the paged
// profile list.
//
// With -pg, the server stores into a fresh database of the private cluster
// .ci/postgres started in that directory, and half-way through the run the
// cluster is stopped at once and started again after -down (-restart fast
// restarts it with pg_ctl restart -m fast instead). A 5xx answer other than
// 503 with Retry-After, or a 503 saying the database is unavailable outside
// the restart (and a few seconds after it), misses the target.
//
// Uploaders and the trickler connect from their own loopback addresses
// (127.0.0.2 and up), as separate hosts would, so that the per-client
// upload limit applies to each alone.
package main

import (
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
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/subsecond/subsecond/internal/benchserve"
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
	hosts     int
	capture   string
	truth     string
	keep      bool
	pg        string        // the directory of a .ci/postgres cluster, "" for SQLite
	restart   string        // how the cluster restarts: immediate or fast
	down      time.Duration // how long an immediate stop keeps it down
	think     time.Duration // readers' mean pause between requests, 0 for none
	heap      string        // where to write the server's heap profile, "" for none
	cpu       string        // where to write the server's CPU profile, "" for none
}

func run() error {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 10*time.Minute, "how long to keep the load on")
	flag.IntVar(&cfg.uploaders, "uploaders", 4, "concurrent uploaders")
	flag.IntVar(&cfg.readers, "readers", 20, "concurrent readers")
	flag.IntVar(&cfg.hosts, "hosts", 8, "hosts the uploads come from in turn")
	flag.StringVar(&cfg.capture, "capture", "sample-data/incident-96cpu-120s.perf.txt.zst", "zstd-compressed capture each upload sends")
	flag.StringVar(&cfg.truth, "truth", "sample-data/incident-96cpu-120s.perf.txt.truth.json", "the capture's ground truth (its sample count)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary directory with the database and the server's log (and the PostgreSQL database)")
	flag.StringVar(&cfg.pg, "pg", "", "directory of a private PostgreSQL cluster started by .ci/postgres: serve a fresh database of it and restart it half-way")
	flag.StringVar(&cfg.restart, "restart", "immediate", "how -pg's cluster restarts: immediate (pg_ctl stop -m immediate, -down, start), fast (pg_ctl restart -m fast) or none (not at all, to compare the backends' costs)")
	flag.DurationVar(&cfg.down, "down", 10*time.Second, "how long -restart immediate keeps the cluster down")
	flag.DurationVar(&cfg.think, "think", 0, "readers' mean think time between requests (exponentially distributed), as users pause; 0 keeps every reader busy back to back (saturating)")
	flag.StringVar(&cfg.heap, "heap", "", "write the server's heap profile (go tool pprof) to this `file` three quarters into the run, served by --debug-addr")
	flag.StringVar(&cfg.cpu, "cpu", "", "write the server's CPU profile (go tool pprof) of the minute before the last tenth of the run (or of its first nine tenths, if shorter) to this `file`, served by --debug-addr")
	flag.Parse()
	if cfg.think < 0 {
		return fmt.Errorf("-think %s: want a duration of 0 or more", cfg.think)
	}
	if cfg.restart != "immediate" && cfg.restart != "fast" && cfg.restart != "none" {
		return fmt.Errorf("-restart %q: want immediate, fast or none", cfg.restart)
	}
	if cfg.hosts < 1 {
		return fmt.Errorf("-hosts %d: want at least 1", cfg.hosts)
	}

	capture, err := os.ReadFile(cfg.capture)
	if err != nil {
		return err
	}
	var truth struct {
		Samples int64 `json:"samples"`
		T0      int64 `json:"t0_ns"`
		Last    int64 `json:"last_ns"`
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
	db := filepath.Join(dir, "soak.db")
	var pg *cluster
	if cfg.pg != "" {
		if pg, err = newCluster(cfg.pg); err != nil {
			return err
		}
		if db, err = pg.createDB(fmt.Sprintf("soak_%d", time.Now().Unix())); err != nil {
			return err
		}
		if !cfg.keep {
			defer pg.dropDB()
		}
	}
	debug := ""
	if cfg.heap != "" || cfg.cpu != "" {
		if debug, err = freeAddr(); err != nil {
			return err
		}
	}
	srv, err := startServer(bin, dir, db, debug)
	if err != nil {
		return err
	}
	defer srv.Stop()
	backend := "SQLite"
	if pg != nil {
		backend = fmt.Sprintf("PostgreSQL (%s, restarted %s half-way)", pg.dir, cfg.restart)
		if cfg.restart == "none" {
			backend = fmt.Sprintf("PostgreSQL (%s, not restarted)", pg.dir)
		}
	}
	fmt.Printf("soak: %s against %s on %s for %s: %d uploaders from %d hosts, %d readers, a trickling upload and 10 abandoned heavy requests a minute\n",
		bin, srv.Base, backend, cfg.duration, cfg.uploaders, cfg.hosts, cfg.readers)
	fmt.Printf("soak: each upload is %s (%.1f MB compressed, %d samples)\n", cfg.capture, float64(len(capture))/1e6, truth.Samples)
	if cfg.think > 0 {
		fmt.Printf("soak: readers think %s on average between requests (exponentially distributed): at most %.1f requests/s offered\n",
			cfg.think, float64(cfg.readers)/cfg.think.Seconds())
	} else {
		fmt.Printf("soak: readers send their next request as soon as the last is answered (no think time: the load saturates the server)\n")
	}
	bomb := identical(bombSamples)
	events := manyEvents(0)
	fmt.Printf("soak: each minute also %d identical samples (%.0f KB of zstd, %.2f GB of text; refused) and a capture of %d event names (%.0f KB; stored)\n",
		bombSamples, float64(len(bomb))/1e3, float64(bombSamples*int64(len(bombSample)))/1e9, eventNames, float64(len(events))/1e3)

	s := &soak{cfg: cfg, base: srv.Base, debug: debug, log: filepath.Join(dir, "serve.log"), bomb: bomb, capture: capture, t0: truth.T0, span: truth.Last - truth.T0, stats: map[string]*kind{}, uploaded: make([]int, cfg.hosts)}
	// One upload first, so that readers have something to read.
	if err := s.upload(context.Background(), s.client("127.0.0.2"), -1); err != nil {
		return fmt.Errorf("first upload: %w", err)
	}
	s.start = time.Now()
	cpu0, _ := srv.CPU()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration)
	defer cancel()
	var wg sync.WaitGroup
	rss := make(chan []int64, 1)
	go func() { rss <- watchRSS(ctx, srv) }()
	if cfg.heap != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.profile(ctx, "heap", "heap", cfg.duration*3/4, cfg.heap) }()
	}
	if cfg.cpu != "" {
		wg.Add(1)
		end := cfg.duration * 9 / 10
		length := min(time.Minute, end).Truncate(time.Second)
		go func() {
			defer wg.Done()
			s.profile(ctx, "CPU", fmt.Sprintf("profile?seconds=%d", length/time.Second), end-length, cfg.cpu)
		}()
	}
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
	var restartErr error
	if pg != nil && cfg.restart != "none" {
		wg.Add(1)
		go func() { defer wg.Done(); restartErr = s.restart(ctx, pg) }()
	}
	wg.Wait()
	if cpu1, err := srv.CPU(); err == nil {
		s.cpu, s.wall = cpu1-cpu0, time.Since(s.start)
	}
	perMinute := <-rss
	peak, err := peakRSS(srv)
	if err != nil {
		return err
	}
	if restartErr != nil {
		return fmt.Errorf("restart: %w", restartErr)
	}
	return s.report(truth.Samples, peak, perMinute)
}

// cluster is a private PostgreSQL cluster that .ci/postgres started in dir.
type cluster struct {
	dir string
	bin string   // the directory of PostgreSQL's programs
	as  []string // the command prefix that runs pg_ctl as the cluster's user
	db  string   // the database created for the run
}

func newCluster(dir string) (*cluster, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		return nil, errors.New("no PostgreSQL under /usr/lib/postgresql")
	}
	sort.Strings(bins)
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		return nil, fmt.Errorf("-pg %s: no cluster there; start one with .ci/postgres start %s: %w", dir, dir, err)
	}
	c := &cluster{dir: dir, bin: bins[len(bins)-1]}
	if os.Getuid() == 0 {
		c.as = []string{"runuser", "-u", "nobody", "--"} // as .ci/postgres runs it
	}
	return c, nil
}

func (c *cluster) command(name string, args ...string) *exec.Cmd {
	argv := append(slices.Clone(c.as), append([]string{filepath.Join(c.bin, name)}, args...)...)
	return exec.Command(argv[0], argv[1:]...)
}

// createDB creates the database name and returns its URL.
func (c *cluster) createDB(name string) (string, error) {
	if out, err := exec.Command(filepath.Join(c.bin, "createdb"), "-h", c.dir, "-U", "subsecond", name).CombinedOutput(); err != nil {
		return "", fmt.Errorf("createdb: %v: %s", err, out)
	}
	c.db = name
	// .ci/postgres runs its clusters with synchronous_commit off, which
	// loses the last commits to an immediate stop (a crash): the run's
	// database commits as a production one does, so that an upload
	// answered 201 survives the restart.
	if out, err := exec.Command(filepath.Join(c.bin, "psql"), "-h", c.dir, "-U", "subsecond", "-d", "postgres", "-qc",
		"ALTER DATABASE "+name+" SET synchronous_commit = on").CombinedOutput(); err != nil {
		return "", fmt.Errorf("psql: %v: %s", err, out)
	}
	return "postgres://subsecond@/" + name + "?host=" + url.QueryEscape(c.dir), nil
}

func (c *cluster) dropDB() {
	exec.Command(filepath.Join(c.bin, "dropdb"), "-h", c.dir, "-U", "subsecond", "--force", c.db).Run()
}

// restart stops the cluster and starts it again, as -restart says.
func (c *cluster) restart(how string, down time.Duration) error {
	data, log := filepath.Join(c.dir, "data"), filepath.Join(c.dir, "server.log")
	if how == "fast" {
		// pg_ctl restart starts the server with the options it last had.
		if out, err := c.command("pg_ctl", "-D", data, "-l", log, "-m", "fast", "-w", "restart").CombinedOutput(); err != nil {
			return fmt.Errorf("pg_ctl restart: %v: %s", err, out)
		}
		return nil
	}
	if out, err := c.command("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	time.Sleep(down)
	if out, err := exec.Command(".ci/postgres", "start", c.dir).CombinedOutput(); err != nil {
		return fmt.Errorf(".ci/postgres start: %v: %s", err, out)
	}
	return nil
}

// restart restarts the cluster half-way through the run and notes when
// the database was away.
func (s *soak) restart(ctx context.Context, c *cluster) error {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(s.cfg.duration / 2):
	}
	s.mu.Lock()
	s.outage[0] = time.Now()
	s.mu.Unlock()
	err := c.restart(s.cfg.restart, s.cfg.down)
	s.mu.Lock()
	s.outage[1] = time.Now()
	s.mu.Unlock()
	fmt.Printf("soak: PostgreSQL restarted (%s) in %s\n", s.cfg.restart, round(s.outage[1].Sub(s.outage[0])))
	return err
}

// server is the subsecond serve process under test, its profiler on
// debug unless "".
func startServer(bin, dir, db, debug string) (*benchserve.Server, error) {
	flags := []string{"--db", db, "--log-format", "json", "--metrics", "on"}
	if debug != "" {
		flags = append(flags, "--debug-addr", debug)
	}
	return benchserve.Start(bin, dir, flags...)
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// profile writes the server's profile which (a path under /debug/pprof/),
// its what profile, to file, fetched after the run has gone on for after.
func (s *soak) profile(ctx context.Context, what, which string, after time.Duration, file string) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(after):
	}
	from := time.Since(s.start)
	res, err := http.Get("http://" + s.debug + "/debug/pprof/" + which)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: profile:", err)
		return
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: profile:", err)
		return
	}
	fmt.Printf("soak: the server's %s profile from %s to %s: go tool pprof %s\n", what, round(from), round(time.Since(s.start)), file)
}

// peakRSS is the kernel's record of the server s's largest resident set.
func peakRSS(s *benchserve.Server) (int64, error) { return s.ProcStatus("VmHWM") }

// watchRSS returns the largest RSS of s seen in each minute until ctx
// ends.
func watchRSS(ctx context.Context, s *benchserve.Server) []int64 {
	var out []int64
	start := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case now := <-t.C:
			rss, err := s.ProcStatus("VmRSS")
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
	debug   string // the server's profiler address, "" for none
	log     string // the server's log (JSON lines)
	bomb    []byte // the upload of bombSamples identical samples
	capture []byte
	t0      int64 // the capture's first whole second, perf's clock, ns
	span    int64 // from t0 to its last sample, ns
	seq     atomic.Int64

	mu       sync.Mutex
	stats    map[string]*kind  // by request kind
	minutes  [][]time.Duration // the views' latencies by minute of the load
	uploads  []upload          // successful uploads of the capture
	others   []upload          // successful uploads of event names' captures
	profiles []string          // IDs readers choose from
	uploaded []int             // by host: 1 + the highest capture number stored, 0 for none
	outage   [2]time.Time      // when the database restart began and ended
	fails    []failure         // answers 5xx
	wrong    []string          // abusive uploads answered otherwise than they should
	refusal  string            // the first refusal of the identical samples
	start    time.Time         // when the load began
	cpu      time.Duration     // the server's CPU time, user and system, during the load
	wall     time.Duration     // how long the load lasted
}

type upload struct {
	id      string
	samples int64
	took    time.Duration
	at      time.Time // when it was answered
}

// failure is an answer 5xx.
type failure struct {
	kind       string
	at         time.Time
	code       int
	retryAfter bool
	msg        string
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
	if code < 500 {
		k.latencies = append(k.latencies, d)
		if isView(name) && !s.start.IsZero() {
			m := int(time.Since(s.start) / time.Minute)
			for len(s.minutes) <= m {
				s.minutes = append(s.minutes, nil)
			}
			s.minutes[m] = append(s.minutes[m], d)
		}
	}
}

// answered records an answer 5xx with its Retry-After and message.
func (s *soak) answered(name string, res *http.Response, body []byte) {
	if res.StatusCode < 500 {
		return
	}
	var e struct {
		Error string `json:"error"`
	}
	msg := string(body)
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if len(msg) > 160 {
		msg = msg[:160]
	}
	s.mu.Lock()
	s.fails = append(s.fails, failure{name, time.Now(), res.StatusCode, res.Header.Get("Retry-After") != "", msg})
	s.mu.Unlock()
}

// client returns an HTTP client whose connections come from the loopback
// address local.
func (s *soak) client(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 32, DisableCompression: false}}
}

// wallStart is the wall-clock time, ns, at which capture k of a host
// starts: each host's captures follow one another 5 s apart.
func (s *soak) wallStart(k int) int64 {
	const night = 1796000000 * int64(time.Second) // 2026-11-29T08:53:20Z
	return night + int64(k)*(s.span+5*int64(time.Second))
}

// body returns a capture that no upload sent before, upload n, from host h as its
// capture k: a zstd frame with a header naming the upload, the host and
// perf's reference time (which anchors it on the host's wall clock), then
// the capture's own frames, whose own "# hostname" comes second and is
// ignored.
func (s *soak) body(n int64, h, k int) []byte {
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b)
	wall := s.wallStart(k)
	fmt.Fprintf(zw, "# soak upload : %d\n# hostname : soak-%d\n# reference time : %s = %d.%09d (TOD) = %d.%09d (realtime)\n",
		n, h, time.Unix(0, wall).UTC().Format("2006-01-02 15:04:05.000000"), wall/1e9, wall%1e9, s.t0/1e9, s.t0%1e9)
	zw.Close()
	b.Write(s.capture)
	return b.Bytes()
}

// upload sends one capture and records it, then the host's series over
// the capture and, for every third capture, a kernel-log marker in its
// middle, as the recorder would; n is the uploader, -1 for the first.
func (s *soak) upload(ctx context.Context, c *http.Client, n int) error {
	i := s.seq.Add(1) - 1
	h, k := int(i)%s.cfg.hosts, int(i)/s.cfg.hosts
	req, err := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("%s/api/profiles?name=soak&label=zone=z%d", s.base, h%3), bytes.NewReader(s.body(i, h, k)))
	if err != nil {
		return err
	}
	res, b, took, err := s.send(ctx, c, "upload", req)
	if err != nil {
		return err
	}
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
	s.uploads = append(s.uploads, upload{up.Profile.ID, up.Profile.Samples, took, time.Now()})
	s.profiles = append(s.profiles, up.Profile.ID)
	s.uploaded[h] = max(s.uploaded[h], k+1)
	s.mu.Unlock()

	host := fmt.Sprintf("soak-%d", h)
	var series []string
	for _, cpu := range []int{38, 39, 40} {
		var pts []string
		for t := int64(0); t < s.span; t += int64(time.Second) {
			pts = append(pts, fmt.Sprintf(`{"t":%d,"v":%d}`, s.wallStart(k)+t, (t/int64(time.Second)*7+int64(cpu))%23))
		}
		series = append(series, fmt.Sprintf(`{"name":"cpu.sys","cpu":%d,"points":[%s]}`, cpu, strings.Join(pts, ",")))
	}
	s.post(ctx, c, "series-post", "/api/hosts/"+host+"/series", `{"series":[`+strings.Join(series, ",")+`]}`)
	if k%3 == 0 {
		s.post(ctx, c, "marker-post", "/api/hosts/"+host+"/markers",
			fmt.Sprintf(`{"markers":[{"time_ns":%d,"text":"NETDEV WATCHDOG: eth0 (soak): transmit queue %d timed out"}]}`, s.wallStart(k)+s.span/2, k%16))
	}
	return nil
}

// post sends a JSON body and records the answer.
func (s *soak) post(ctx context.Context, c *http.Client, name, path, body string) {
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	s.send(ctx, c, name, req)
}

// send sends req, reads its whole answer, and records it under name with
// its status and time; an error not due to the soak's end is recorded as
// a failed request.
func (s *soak) send(ctx context.Context, c *http.Client, name string, req *http.Request) (*http.Response, []byte, time.Duration, error) {
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.record(name, 0, err, 0)
		}
		return nil, nil, 0, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	s.record(name, res.StatusCode, nil, took)
	s.answered(name, res, b)
	return res, b, took, nil
}

func (s *soak) uploadLoop(ctx context.Context, i int) {
	c := s.client(fmt.Sprintf("127.0.0.%d", 2+i))
	for ctx.Err() == nil {
		if err := s.upload(ctx, c, i); err != nil && ctx.Err() == nil {
			time.Sleep(time.Second)
		}
	}
}

// target is what one read is about: a stored profile, and a host with a
// range of ten minutes (five captures) of its night.
type target struct {
	id       string
	host     string
	from, to string // RFC 3339
}

// views are what a reader asks for, as the web app does: a profile page,
// its two maps and hot spots, a flame graph of a few seconds, now and
// then an export; a host's series, what precedes its markers and what
// moves with its series or a command; the fleet's map, a search and the
// zones' contrast; the host list and a page of the profile list.
var views = []struct {
	name   string
	weight int
	path   func(r *rand.Rand, t target) string
}{
	{"page", 15, func(_ *rand.Rand, t target) string { return "/p/" + t.id }},
	{"heatmap", 20, func(_ *rand.Rand, t target) string { return "/api/profiles/" + t.id + "/heatmap" }},
	{"cpus", 20, func(_ *rand.Rand, t target) string { return "/api/profiles/" + t.id + "/cpus?bucket=0.2" }},
	{"hotspots", 15, func(_ *rand.Rand, t target) string { return "/api/profiles/" + t.id + "/hotspots?bucket=0.2" }},
	{"flamegraph", 25, func(r *rand.Rand, t target) string {
		start := r.IntN(110)
		return fmt.Sprintf("/api/profiles/%s/flamegraph?start=%d&end=%d", t.id, start, start+2+r.IntN(8))
	}},
	{"export", 5, func(r *rand.Rand, t target) string {
		start := r.IntN(115)
		return fmt.Sprintf("/api/profiles/%s/flamegraph?start=%d&end=%d&format=%s", t.id, start, start+1, []string{"svg", "pprof", "folded"}[r.IntN(3)])
	}},
	{"h-series", 8, func(_ *rand.Rand, t target) string {
		return "/api/hosts/" + t.host + "/series?name=cpu.sys&from=" + t.from + "&to=" + t.to
	}},
	{"h-explain", 3, func(r *rand.Rand, t target) string {
		return fmt.Sprintf("/api/hosts/%s/explain?match=NETDEV&seed=%d", t.host, 1+r.IntN(5))
	}},
	{"h-moves", 4, func(r *rand.Rand, t target) string {
		if r.IntN(2) == 0 {
			return "/api/hosts/" + t.host + "/moves?comm=ksoftirqd%2F39&from=" + t.from + "&to=" + t.to
		}
		return "/api/hosts/" + t.host + "/moves?name=cpu.sys&series_cpu=39&from=" + t.from + "&to=" + t.to
	}},
	{"fleet", 4, func(*rand.Rand, target) string { return "/api/fleet?group=zone" }},
	{"f-search", 4, func(r *rand.Rand, _ target) string {
		return "/api/fleet/search?" + []string{"function=%5Etcp_v4_rcv%24", "function=net_rx", "comm=ksoftirqd%2F39", "stack=%5Enet_rx_action%3B"}[r.IntN(4)]
	}},
	{"f-groups", 2, func(r *rand.Rand, _ target) string {
		return fmt.Sprintf("/api/fleet/groups?group=zone&permutations=2000&seed=%d", 1+r.IntN(5))
	}},
	{"hosts", 4, func(r *rand.Rand, _ target) string { return []string{"/hosts", "/api/hosts"}[r.IntN(2)] }},
	{"list", 6, func(r *rand.Rand, t target) string {
		if r.IntN(3) == 0 {
			return "/api/profiles"
		}
		return fmt.Sprintf("/api/profiles?per_page=%d&cursor=%s", []int{20, 100, 500}[r.IntN(3)], t.id)
	}},
}

// profileViews are the views of one profile, which the "views" line also
// counts, beside the host and fleet analyses.
var profileViews = map[string]bool{"page": true, "heatmap": true, "cpus": true, "hotspots": true, "flamegraph": true, "export": true}

func (s *soak) readLoop(ctx context.Context, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 42))
	c := s.client("127.0.0.1")
	total := 0
	for _, v := range views {
		total += v.weight
	}
	for ctx.Err() == nil {
		s.mu.Lock()
		t := target{id: s.profiles[r.IntN(len(s.profiles))]}
		var hosts []int
		for h, n := range s.uploaded {
			if n > 0 {
				hosts = append(hosts, h)
			}
		}
		h := hosts[r.IntN(len(hosts))]
		k := r.IntN(s.uploaded[h])
		s.mu.Unlock()
		t.host = fmt.Sprintf("soak-%d", h)
		t.from = time.Unix(0, s.wallStart(max(0, k-4))).UTC().Format(time.RFC3339)
		t.to = time.Unix(0, s.wallStart(k+1)).UTC().Format(time.RFC3339)
		pick := r.IntN(total)
		for _, v := range views {
			if pick -= v.weight; pick < 0 {
				s.get(ctx, c, v.name, s.base+v.path(r, t))
				break
			}
		}
		if s.cfg.think > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(r.ExpFloat64() * float64(s.cfg.think))):
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
	var head []byte
	if res.StatusCode >= 500 {
		head, _ = io.ReadAll(io.LimitReader(res.Body, 4096))
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if ctx.Err() != nil {
		return
	}
	s.record(name, res.StatusCode, err, time.Since(start))
	s.answered(name, res, head)
}

// minutely starts, each minute, one trickling upload and ten heavy
// requests that are abandoned at once.
func (s *soak) minutely(ctx context.Context) {
	trickler := s.client("127.0.0.200")
	abandoner := s.client("127.0.0.201")
	bomber := s.client("127.0.0.202")
	namer := s.client("127.0.0.203")
	var wg sync.WaitGroup
	defer wg.Wait()
	for m := 0; ; m++ {
		wg.Add(1)
		go func() { defer wg.Done(); s.trickle(ctx, trickler) }()
		wg.Add(2)
		go func() { defer wg.Done(); s.abuse(ctx, bomber, "49M-same", s.bomb, 0) }()
		go func() { defer wg.Done(); s.abuse(ctx, namer, "65k-events", manyEvents(m+1), eventNames) }()
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

// bombSamples identical samples make the upload refused at import: 2.94
// GB of text, 49 M samples in one second, more than a view reads.
const (
	bombSamples = 49_000_000
	bombSample  = "a 1 [000] 100.000000: 1 c:\n\tffffffff81000000 f ([k])\n\n"
	eventNames  = 65535 // the most a profile can hold
)

// identical returns n identical samples, zstd-compressed.
func identical(n int64) []byte {
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
	block := []byte(strings.Repeat(bombSample, 1<<14))
	for ; n >= 1<<14; n -= 1 << 14 {
		zw.Write(block)
	}
	zw.Write(block[:n*int64(len(bombSample))])
	zw.Close()
	return b.Bytes()
}

// manyEvents returns capture number k of a host of its own, each of its
// eventNames samples of an event of its own name, zstd-compressed.
func manyEvents(k int) []byte {
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b)
	fmt.Fprintf(zw, "# hostname : soak-events\n# soak events : %d\n", k)
	for i := range eventNames {
		fmt.Fprintf(zw, "a 1 [%03d] %d.%06d: 1 ev%05d:\n\tffffffff81000000 f ([k])\n\n", i%64, 100+k*2, i*10, i)
	}
	zw.Close()
	return b.Bytes()
}

// abuse sends one abusive upload, body, and records its answer under
// name; want > 0 is the samples it should be stored with (then a 201 is
// kept for the final check), 0 when it should be refused with a 4xx.
func (s *soak) abuse(ctx context.Context, c *http.Client, name string, body []byte, want int64) {
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/profiles?name="+name, bytes.NewReader(body))
	res, b, took, err := s.send(ctx, c, name, req)
	if err != nil {
		return
	}
	if res.StatusCode >= 500 {
		return // judged with the other 5xx (reportFailures)
	}
	ok := res.StatusCode >= 400 && res.StatusCode < 500
	if want > 0 {
		ok = res.StatusCode == http.StatusCreated
	}
	if !ok {
		s.mu.Lock()
		s.wrong = append(s.wrong, fmt.Sprintf("%s answered %d: %.200s", name, res.StatusCode, b))
		s.mu.Unlock()
		return
	}
	if want == 0 {
		s.mu.Lock()
		if s.refusal == "" {
			var e struct {
				Error string `json:"error"`
			}
			json.Unmarshal(b, &e)
			s.refusal = fmt.Sprintf("%d %s", res.StatusCode, e.Error)
		}
		s.mu.Unlock()
		return
	}
	var up struct {
		Profile struct {
			ID      string `json:"id"`
			Samples int64  `json:"samples"`
		} `json:"profile"`
	}
	json.Unmarshal(b, &up)
	s.mu.Lock()
	s.others = append(s.others, upload{up.Profile.ID, up.Profile.Samples, took, time.Now()})
	s.mu.Unlock()
}

// trickle sends a capture at 1 KiB/s, far below the minimum rate: the
// server should end it with 408 after its rate window.
func (s *soak) trickle(ctx context.Context, c *http.Client) {
	pr, pw := io.Pipe()
	go func() {
		body := s.body(-s.seq.Add(1), 0, 1<<20) // never stored: ended with 408
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

// isView reports whether the answers of kind name are views, whose
// latencies the target is about (not uploads nor posts).
func isView(name string) bool {
	return name != "upload" && name != "trickle" && name != "49M-same" && name != "65k-events" && !strings.HasSuffix(name, "-post")
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
	var all, profile []time.Duration
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
		if isView(n) {
			all = append(all, k.latencies...)
		}
		if profileViews[n] {
			profile = append(profile, k.latencies...)
		}
	}
	slices.Sort(all)
	slices.Sort(profile)
	p99 := percentile(all, .99)
	fmt.Printf("\nviews: %d answers, p50 %s, p90 %s, p99 %s (target: p99 ≤ %s)\n", len(all), round(percentile(all, .5)), round(percentile(all, .9)), round(p99), viewP99)
	fmt.Printf("  of which a profile's (page, heatmap, cpus, hotspots, flamegraph, export): %d answers, p50 %s, p90 %s, p99 %s\n",
		len(profile), round(percentile(profile, .5)), round(percentile(profile, .9)), round(percentile(profile, .99)))
	var p99s []string
	for _, m := range s.minutes {
		slices.Sort(m)
		p99s = append(p99s, fmt.Sprintf("%.0f", float64(percentile(m, .99))/float64(time.Millisecond)))
	}
	fmt.Printf("  p99 of the views answered in each minute, ms: %s\n", strings.Join(p99s, " "))
	missed := s.reportFailures(fiveXX)
	var mins []string
	for _, r := range perMinute {
		mins = append(mins, fmt.Sprintf("%.0f", float64(r)/(1<<20)))
	}
	fmt.Printf("server peak RSS: %.0f MiB (target ≤ 1024 MiB); largest RSS each minute, MiB: %s\n", float64(peak)/(1<<20), strings.Join(mins, " "))

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
			fmt.Printf("upload %s, answered %s after the start: %d samples, listed %v (%d); want %d\n", u.id, round(u.at.Sub(s.start)), u.samples, ok, n, want)
		}
	}
	fmt.Printf("uploads: %d stored, %d listed with exactly %d samples; %d profiles listed in all\n", len(s.uploads), len(s.uploads)-bad, want, len(listed))
	badOthers := 0
	for _, u := range s.others {
		if n, ok := listed[u.id]; !ok || n != eventNames || u.samples != eventNames {
			badOthers++
			fmt.Printf("upload %s of %d event names: %d samples, listed %v (%d)\n", u.id, eventNames, u.samples, ok, n)
		}
	}
	fmt.Printf("abusive uploads: %d captures of %d event names stored, %d listed with exactly their %d samples; identical samples refused: %s\n",
		len(s.others), eventNames, len(s.others)-badOthers, eventNames, s.refusal)
	for _, w := range s.wrong {
		fmt.Println("  wrong answer:", w)
	}
	bad += badOthers + len(s.wrong)
	if s.wall > 0 {
		fmt.Printf("server CPU: %.0f s user+sys in %.0f s (%.2f cores busy): %.1f uploads and %.0f view answers per server CPU-minute\n",
			s.cpu.Seconds(), s.wall.Seconds(), s.cpu.Seconds()/s.wall.Seconds(), float64(len(s.uploads))*60/s.cpu.Seconds(), float64(len(all))*60/s.cpu.Seconds())
	}
	if m, err := metrics(s.base); err == nil {
		rate := func(name string) string {
			h, m := m["subsecond_"+name+"_cache_hits_total"], m["subsecond_"+name+"_cache_misses_total"]
			if h+m == 0 {
				return "none"
			}
			return fmt.Sprintf("%.0f%% of %.0f", 100*h/(h+m), h+m)
		}
		fmt.Printf("server caches: captures hit %s lookups (%.0f MiB kept); answers hit %s (%.1f MiB kept)\n",
			rate("capture"), m["subsecond_capture_cache_bytes"]/(1<<20), rate("answer"), m["subsecond_answer_cache_bytes"]/(1<<20))
		if n := m["subsecond_heavy_requests_total"]; n > 0 {
			fmt.Printf("heavy slots: %.0f taken (of %.0f), waited for %s and held %s on average\n", n, m["subsecond_heavy_request_slots"],
				round(time.Duration(m["subsecond_heavy_wait_seconds_total"]/n*1e9)), round(time.Duration(m["subsecond_heavy_held_seconds_total"]/n*1e9)))
		}
		if n := m["subsecond_import_pauses_total"]; n > 0 {
			fmt.Printf("imports paused %.0f times for views waiting, %s in all\n", n, round(time.Duration(m["subsecond_import_paused_seconds_total"]*1e9)))
		}
	}
	if up, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s", up)
	}
	if missed || bad > 0 || peak > 1024<<20 || p99 > viewP99 {
		return errors.New("the soak missed a target")
	}
	return nil
}

// viewP99 is the target for the 99th percentile of all views' latencies.
const viewP99 = 500 * time.Millisecond

// reportFailures prints the answers 5xx, grouped by kind, status,
// Retry-After and message, each group with when its first and last came
// relative to the database's restart, and reports whether any misses the
// target: every 5xx but a 503 with Retry-After does, and so does a 503
// saying the database is unavailable more than 5 s outside the restart.
func (s *soak) reportFailures(fiveXX int) bool {
	type group struct {
		kind       string
		code       int
		retryAfter bool
		msg        string
	}
	count := map[group]int{}
	first, last := map[group]time.Time{}, map[group]time.Time{}
	missed := false
	restarted := !s.outage[0].IsZero()
	inside := func(at time.Time) bool {
		return restarted && !at.Before(s.outage[0]) && !at.After(s.outage[1].Add(5*time.Second))
	}
	for _, f := range s.fails {
		g := group{f.kind, f.code, f.retryAfter, f.msg}
		if count[g] == 0 {
			first[g] = f.at
		}
		count[g]++
		last[g] = f.at
		if f.code != http.StatusServiceUnavailable || !f.retryAfter || strings.Contains(f.msg, "database") && !inside(f.at) {
			missed = true
		}
	}
	if restarted {
		fmt.Printf("5xx answers: %d (target: 503 with Retry-After alone, the database's only during its restart, %s to %s after the start)\n",
			fiveXX, round(s.outage[0].Sub(s.start)), round(s.outage[1].Sub(s.start)))
	} else {
		fmt.Printf("5xx answers: %d (target: 503 with Retry-After alone, none saying the database is unavailable)\n", fiveXX)
	}
	groups := slices.SortedFunc(maps.Keys(count), func(a, b group) int { return first[a].Compare(first[b]) })
	for _, g := range groups {
		fmt.Printf("  %-11s %d×%d Retry-After %-5v %s to %s after the start: %q\n", g.kind, g.code, count[g], g.retryAfter,
			round(first[g].Sub(s.start)), round(last[g].Sub(s.start)), g.msg)
	}
	if missed {
		s.serverErrors(inside)
	}
	return missed
}

// serverErrors prints what the server's log says caused its 5xx answers
// outside the database's restart (the client sees only "internal error"
// or the outage sentence): each distinct error, profile IDs blanked, with
// its count and when it came first and last.
func (s *soak) serverErrors(inside func(time.Time) bool) {
	f, err := os.Open(s.log)
	if err != nil {
		fmt.Println("  the server's log:", err)
		return
	}
	defer f.Close()
	type seen struct {
		n           int
		first, last time.Time
	}
	errs := map[string]*seen{}
	id := regexp.MustCompile(`"[a-z2-7]{26}"`)
	dec := json.NewDecoder(f)
	for {
		var line struct {
			Time   time.Time `json:"time"`
			Status int       `json:"status"`
			Err    string    `json:"err"`
		}
		if err := dec.Decode(&line); err == io.EOF {
			break
		} else if err != nil {
			fmt.Println("  the server's log:", err)
			return
		}
		// A cancelled request's answer reached no one (the abandoned
		// heavy requests, the readers at the end).
		if line.Status < 500 || inside(line.Time) || line.Time.Before(s.start) || strings.HasSuffix(line.Err, context.Canceled.Error()) {
			continue
		}
		e := id.ReplaceAllString(line.Err, `"…"`)
		if errs[e] == nil {
			errs[e] = &seen{first: line.Time}
		}
		errs[e].n++
		errs[e].last = line.Time
	}
	keys := slices.SortedFunc(maps.Keys(errs), func(a, b string) int { return errs[b].n - errs[a].n })
	fmt.Printf("  the server's log gives for its 5xx outside the restart %d distinct errors:\n", len(keys))
	for i, e := range keys {
		if i == 10 {
			break
		}
		fmt.Printf("    ×%d %s to %s after the start: %s\n", errs[e].n, round(errs[e].first.Sub(s.start)), round(errs[e].last.Sub(s.start)), e)
	}
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

// metrics returns the server's unlabelled metrics by name, read from its
// Prometheus text at /metrics.
func metrics(base string) (map[string]float64, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", res.Status)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] = v
		}
	}
	return m, nil
}
