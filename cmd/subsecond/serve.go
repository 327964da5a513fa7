package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/server"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// runServe serves the web app: `subsecond serve [flags] [FILE…]`. FILEs are
// imported first (plain, gzip or zstd perf script text), so a capture on a
// laptop is one command away from its heatmaps.
func runServe(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", envOr("SUBSECOND_ADDR", "localhost:8080"), "listen `address`; use :8080 to serve other hosts ($SUBSECOND_ADDR)")
	dbPath := dbFlag(fs)
	maxUpload := byteSize(server.DefaultMaxUpload)
	fs.Var(&maxUpload, "max-upload", "largest accepted upload `size`, as sent (compressed), e.g. 500MiB or 2GiB")
	maxText := byteSize(store.DefaultMaxText)
	fs.Var(&maxText, "max-text", "largest accepted capture `size` once decompressed; larger gets 413")
	maxSamples := fs.Int64("max-samples", store.DefaultMaxSamples, "most samples one capture may hold (more gets 413 and nothing is stored), and a host's range across captures may span (more gets 413 naming from, to and cpu)")
	cacheSize := byteSize(store.DefaultCacheSize)
	fs.Var(&cacheSize, "cache-size", "memory `size` for captures kept loaded for views, with the indexes the views build from them, least recently used out first")
	token := fs.String("token", os.Getenv("SUBSECOND_TOKEN"), "require this bearer `token` for uploads and deletes ($SUBSECOND_TOKEN)")
	readOnly := fs.Bool("read-only", envBool("SUBSECOND_READ_ONLY"), "refuse uploads and deletes ($SUBSECOND_READ_ONLY=1)")
	var sn serveNet
	sn.flags(fs)
	retainFor := fs.Duration("retain", 0, "delete captures of every host that ended longer ago than this, e.g. 72h, checked every 10 minutes (default: keep all)")
	var lim serveLimits
	lim.flags(fs)
	var sm serveMetrics
	sm.flags(fs)
	debugAddr := fs.String("debug-addr", "", "serve Go's profiler (/debug/pprof/) on this loopback `address`, e.g. 127.0.0.1:6060, apart from the app (default: off)")
	noSample := fs.Bool("no-sample", false, "when run as the default command, do not import the bundled incident capture into an empty database")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: subsecond serve [flags] [FILE…]")
		fmt.Fprintln(fs.Output(), "\nServes the web app until interrupted. FILEs (perf script text, plain, gzip or")
		fmt.Fprintln(fs.Output(), "zstd) are imported first. Run as the default command (a bare `subsecond`) with")
		fmt.Fprintln(fs.Output(), "no FILE and an empty database, it imports the bundled incident capture once.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkAddr(*addr); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := checkDebugAddr(*debugAddr); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if *readOnly && fs.NArg() > 0 {
		return errors.New("serve: --read-only serves what is stored; import FILEs without it first")
	}

	if err := lim.check(); err != nil {
		return err
	}
	metricsOn, metricsToken, err := sm.config(fs)
	if err != nil {
		return err
	}
	// The caches' budgets and the imports at once follow from the memory
	// limit, unless given themselves.
	limit := int64(lim.memLimit)
	if limit == 0 {
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			limit = l // $GOMEMLIMIT's
		}
	}
	budget := budgetsOf(limit)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "cache-size" {
			budget.cache = int64(cacheSize)
		}
	})
	cacheSize = byteSize(budget.cache)
	if lim.maxImports == 0 {
		lim.maxImports = budget.imports
	}
	restore, err := lim.applyMemoryLimit(int64(cacheSize))
	if err != nil {
		return err
	}
	defer restore()
	proxies, err := sn.proxies()
	if err != nil {
		return err
	}
	log, err := sn.logger(e.stderr)
	if err != nil {
		return err
	}

	path := *dbPath
	if path == "" {
		p, err := defaultDBPath(os.Getenv)
		if err != nil {
			return err
		}
		path = p
	}
	if *maxSamples <= 0 {
		return fmt.Errorf("serve: --max-samples %d: want a positive number", *maxSamples)
	}
	// The compressors' tables are faulted in beside opening the database,
	// not in the first upload.
	go store.Warm()
	// A second no view could read is refused at import.
	st, err := openStore(ctx, e, path, store.Options{CacheSize: int64(cacheSize), MaxText: int64(maxText), MaxSamples: *maxSamples, MaxSecondSamples: lim.maxView})
	if err != nil {
		return err
	}
	defer st.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close()
	base := listenURL(ln.Addr())

	files, err := expandFiles(fs.Args())
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	for _, name := range files {
		p, existed, err := importFile(ctx, e, st, name)
		if err != nil {
			return err
		}
		how := "imported"
		if existed {
			how = "already stored"
		}
		fmt.Fprintf(termWriter(e.stdout), "%s %s: %d samples, %d CPUs, %s → %s/p/%s\n", how, name, p.Samples, p.CPUs,
			duration(p), base, p.ID)
	}
	if e.implicit && fs.NArg() == 0 && !*noSample && !*readOnly {
		if err := importSample(ctx, st, e.stdout, base); err != nil {
			return err
		}
	}

	if *retainFor > 0 {
		if *readOnly {
			return errors.New("serve: --retain deletes captures, which --read-only forbids")
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			retain(rctx, st, *retainFor, 10*time.Minute, log.Info)
		}()
		defer func() { stop(); <-done }() // before the store closes
	}

	// Captures imported before the fleet index existed are indexed in
	// the background; the fleet views leave them out until then.
	if !*readOnly {
		ictx, stopIndex := context.WithCancel(ctx)
		indexed := make(chan struct{})
		go func() {
			defer close(indexed)
			reindexLog(ictx, st, log.Info)
		}()
		defer func() { stopIndex(); <-indexed }() // before the store closes
	}

	// The host views' summaries are read into memory in the background,
	// so that the first look at a host's night need not read them all.
	nt := night{st, timeline.NewRollupCache(st.Rollup, budget.rollups)}
	wctx, stopWarm := context.WithCancel(ctx)
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		nt.warm(wctx)
	}()
	defer func() { stopWarm(); <-warmed }() // before the store closes

	hosts, public := sn.hosts(ln.Addr())
	srv := server.New(server.Config{
		Store:            serveStore{st},
		Engine:           engine.Engine{},
		Night:            nt,
		State:            st,
		Fleet:            st,
		MaxUpload:        int64(maxUpload),
		MaxText:          int64(maxText),
		Token:            *token,
		ReadOnly:         *readOnly,
		Logger:           log,
		AllowedHosts:     hosts,
		Public:           public,
		TrustedProxies:   proxies,
		MaxHeavy:         lim.maxHeavy,
		MaxCells:         lim.maxCells,
		MaxNodes:         lim.maxNodes,
		MaxViewSamples:   lim.maxView,
		MaxRangeSamples:  *maxSamples,
		UploadTimeout:    lim.uploadTimeout,
		MinUploadRate:    int64(lim.minRate),
		UploadsPerClient: lim.perClient,
		MaxImports:       lim.maxImports,
		ImportPause:      cmp.Or(lim.importPause, -1), // 0: never
		RangeCacheSize:   budget.ranges,
		AnswerCacheSize:  budget.answers,
		Metrics:          metricsOn,
		MetricsToken:     metricsToken,
	})
	// An idle server's garbage goes back to the operating system.
	rc := newReclaimer()
	reclaimCtx, stopReclaim := context.WithCancel(ctx)
	defer stopReclaim()
	go rc.run(reclaimCtx, 10*time.Second)
	hs := &http.Server{
		Handler:           rc.wrap(srv.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // uploads extend their own deadline
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	mode := ""
	if *readOnly {
		mode = " (read-only)"
	} else if *token != "" {
		mode = " (uploads need the token)"
	}
	fmt.Fprintf(e.stdout, "Subsecond serving %s on %s/%s\n", showDSN(path), base, mode)

	if *debugAddr != "" {
		stopDebug, err := serveDebug(*debugAddr, e.stdout)
		if err != nil {
			return fmt.Errorf("serve: --debug-addr: %w", err)
		}
		defer stopDebug()
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(e.stdout, "Shutting down…")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}

// importFile imports one capture file ("-" for standard input; a perf.data
// file through perf script, see openInput).
func importFile(ctx context.Context, e env, st *store.Store, name string) (*subsecond.Profile, bool, error) {
	in, err := openInput(ctx, e, name)
	if err != nil {
		return nil, false, err
	}
	defer in.Close()
	opt := store.ImportOptions{FileName: filepath.Base(name), Size: in.size}
	if name == "-" {
		opt.FileName = "stdin"
	}
	return st.Import(ctx, in, opt)
}

// checkAddr refuses a listen address without a port before anything is
// imported or opened, suggesting the address meant: a bare port, "8080",
// is ":8080".
func checkAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return nil
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return fmt.Errorf("--addr %s: missing the colon before the port; did you mean --addr :%s (every interface) or --addr localhost:%s?", addr, addr, addr)
	}
	return fmt.Errorf("--addr %s: want HOST:PORT, such as localhost:8080, or :PORT for every interface", addr)
}

// listenURL returns the URL a local browser reaches addr by.
func listenURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// serveStore adapts the store to the server's Store interface.
type serveStore struct{ *store.Store }

// Import stores an upload; the store reports a full disk as
// subsecond.ErrNoSpace.
func (s serveStore) Import(ctx context.Context, r io.Reader, u server.Upload) (*subsecond.Profile, bool, error) {
	return s.Store.Import(ctx, r, store.ImportOptions{Name: u.Name, FileName: u.FileName, Size: u.Size, Host: u.Host,
		Labels: u.Labels, Boot: u.Boot, MaxText: u.MaxText, Pause: u.Pause})
}

// byteSize is a flag value of bytes written as 1048576, 500MB, 500MiB or 2G.
type byteSize int64

// binaryUnits are the suffixes String writes, largest first.
var binaryUnits = []struct {
	suffix string
	size   int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range binaryUnits {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<62 {
		return fmt.Errorf("%q is not a size like 500MiB or 2GiB", s)
	}
	*b = byteSize(n * float64(mult))
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envBool(name string) bool {
	v, _ := strconv.ParseBool(os.Getenv(name))
	return v
}

// importSample imports the bundled incident capture when the database holds
// no profile yet: a first run shows something worth looking at.
func importSample(ctx context.Context, st *store.Store, out io.Writer, base string) error {
	list, err := st.List(ctx)
	if err != nil || len(list) > 0 {
		return err
	}
	fmt.Fprintln(out, "First run: importing the bundled incident capture (96 CPUs, 120 s)…")
	start := time.Now()
	p, _, err := st.Import(ctx, sampledata.IncidentCompressed(), store.ImportOptions{
		Name: "Bundled incident: 96 CPUs, 120 s", FileName: sampledata.IncidentFile})
	if err != nil {
		return fmt.Errorf("import the bundled incident: %w", err)
	}
	fmt.Fprintf(out, "imported %s: %d samples, %d CPUs in %s → %s/p/%s\n", sampledata.IncidentFile, p.Samples, p.CPUs,
		time.Since(start).Round(time.Millisecond), base, p.ID)
	return nil
}
