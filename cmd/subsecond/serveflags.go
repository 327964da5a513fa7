package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/subsecond/subsecond/server"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// serveNet is how serve is reached: the hosts it answers to, the reverse
// proxies it believes, and how it logs requests.
type serveNet struct {
	allowedHosts string
	trustProxy   string
	logLevel     string
	logFormat    string
}

func (n *serveNet) flags(fs *flag.FlagSet) {
	fs.StringVar(&n.allowedHosts, "allowed-hosts", os.Getenv("SUBSECOND_ALLOWED_HOSTS"),
		"comma-separated host `names` that requests may name besides localhost and IP addresses (those of this machine are added when serving other hosts): "+
			"perf.example.com, .example.com for a domain and its subdomains, * for any; others get 421 ($SUBSECOND_ALLOWED_HOSTS)")
	fs.StringVar(&n.trustProxy, "trust-proxy", os.Getenv("SUBSECOND_TRUST_PROXY"),
		"comma-separated `addresses` or CIDRs of reverse proxies whose X-Forwarded-For, -Host and -Proto headers are believed, e.g. 127.0.0.1 ($SUBSECOND_TRUST_PROXY)")
	fs.StringVar(&n.logLevel, "log-level", envOr("SUBSECOND_LOG_LEVEL", "info"),
		"request log `level`: debug (every request), info (uploads, deletes, refusals), warn or error ($SUBSECOND_LOG_LEVEL)")
	fs.StringVar(&n.logFormat, "log-format", envOr("SUBSECOND_LOG_FORMAT", "text"), "request log `format`: text or json ($SUBSECOND_LOG_FORMAT)")
}

// hosts returns the allowed host names: those listed, plus this machine's
// names when the listener at addr is reachable from other machines, and
// whether it is.
func (n *serveNet) hosts(addr net.Addr) (names []string, public bool) {
	names = splitList(n.allowedHosts)
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil && ap.Addr().IsLoopback() {
		return names, false
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
		if short, _, ok := strings.Cut(h, "."); ok {
			names = append(names, short)
		}
	}
	return names, true
}

// proxies parses --trust-proxy.
func (n *serveNet) proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(n.trustProxy) {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--trust-proxy: %q is not an IP address or CIDR such as 127.0.0.1 or 10.0.0.0/8", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// logger returns the request logger that --log-level and --log-format
// describe, writing to w.
func (n *serveNet) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(n.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not debug, info, warn or error", n.logLevel)
	}
	opt := &slog.HandlerOptions{Level: level}
	switch n.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opt)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opt)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not text or json", n.logFormat)
}

// serveLimits bounds what one request may cost the server.
type serveLimits struct {
	maxHeavy      int
	maxCells      int64
	maxNodes      int
	maxView       int64
	uploadTimeout time.Duration
	minRate       byteSize
	perClient     int
	maxImports    int
	importPause   time.Duration
	memLimit      byteSize
}

// defaultMemoryLimit is serve's soft limit on the Go heap, which makes the
// garbage collector work harder as the heap nears it rather than let it
// grow to twice what is live, and from which the caches' budgets follow
// (see budgetsOf): the server then stays within 1 GiB of resident memory
// under bench/soak's load, the rest being SQLite's and the runtime's own.
const defaultMemoryLimit = 896 << 20

// budgets are the shares of the memory limit that serve gives its caches
// and imports. The capture cache holds whole captures' columns (about
// 60 MB for the bundled 96-CPU capture), the rollup cache the captures'
// per-second counts that the host views read, the range cache the host
// ranges joined across captures; what is left is the working memory of
// the views running (--max-heavy) and of the imports (each holds about
// 150 MB for a capture of the bundled size while it parses).
type budgets struct {
	cache   int64 // --cache-size
	answers int64 // the whole-profile views' answers (server.Config.AnswerCacheSize)
	rollups int64 // the host views' rollups (timeline.RollupCache)
	ranges  int64 // the host ranges joined (timeline.RangeCache)
	imports int   // --max-imports
}

// budgetsOf divides the memory limit: 5/16 to the capture cache, 1/16 to
// the answers of whole-profile views (kept compressed: about 140 KB for
// the three views of a bundled capture), 1/16 to the rollups, 1/16 to the
// joined ranges, and an import at once per GiB (at least one, at most one
// per two cores). With no limit (0), the defaults that assumed 1.5 GiB: a
// 512 MiB cache, 64 MiB of answers, 96 MiB of rollups and 256 MiB of
// ranges.
func budgetsOf(limit int64) budgets {
	if limit <= 0 {
		return budgets{cache: store.DefaultCacheSize, answers: server.DefaultAnswerCacheSize, rollups: timeline.DefaultRollupBudget, ranges: timeline.DefaultRangeBudget,
			imports: server.DefaultMaxImports()}
	}
	return budgets{cache: limit * 5 / 16, answers: limit / 16, rollups: limit / 16, ranges: limit / 16,
		imports: max(1, min(server.DefaultMaxImports(), int(limit>>30)))}
}

func (l *serveLimits) flags(fs *flag.FlagSet) {
	fs.IntVar(&l.maxHeavy, "max-heavy", server.DefaultMaxHeavy(),
		"heavy views (heatmaps, cores maps, hot spots, flame graphs) computed at once; more wait, and past "+
			fmt.Sprint(server.DefaultHeavyQueue)+" waiting get 503 with Retry-After")
	fs.Int64Var(&l.maxCells, "max-cells", server.DefaultMaxCells, "largest heatmap or cores map in cells (columns × rows or CPUs); larger gets 400 naming col or bucket")
	fs.IntVar(&l.maxNodes, "max-nodes", server.DefaultMaxNodes,
		fmt.Sprintf("largest flame graph in nodes sent or exported, a %dth of it for pprof; larger gets 413", server.PprofNodeCost))
	fs.Int64Var(&l.maxView, "max-view-samples", server.DefaultMaxViewSamples,
		"most samples one view reads: a larger capture's heatmaps get 413, and its flame graphs read only their range's seconds, 413 when those hold more")
	fs.DurationVar(&l.uploadTimeout, "upload-timeout", time.Hour, "longest one upload may take to arrive and import; longer gets 408")
	l.minRate = server.DefaultMinUploadRate
	fs.Var(&l.minRate, "min-upload-rate", fmt.Sprintf("slowest `pace` per second an upload may keep over any %s spent waiting for it; slower gets 408", server.DefaultRateWindow))
	fs.IntVar(&l.perClient, "uploads-per-client", server.DefaultUploadsPerClient, "uploads in progress at once from one client address; more get 429")
	fs.IntVar(&l.maxImports, "max-imports", 0, "uploads imported at once; more wait, unread, while their clients do (default: one per GiB of --memory-limit, at most one per two cores)")
	fs.DurationVar(&l.importPause, "import-pause", server.DefaultImportPause, "how long an import pauses before each MiB of text while views wait for a heavy slot, so that views have the cores first; 0 never pauses")
	if os.Getenv("GOMEMLIMIT") == "" {
		l.memLimit = defaultMemoryLimit
	}
	fs.Var(&l.memLimit, "memory-limit", "soft limit on the server's Go heap `size`, from which the caches' budgets follow (5/16 to --cache-size, 1/16 each to the whole-profile views' answers and the host views' rollups and ranges); at least --cache-size plus 256MiB (default from $GOMEMLIMIT when set)")
}

// applyMemoryLimit sets the Go heap's soft limit, unless $GOMEMLIMIT set it
// and the flag did not, and returns a function that restores the previous
// one. The capture cache must fit under it with room to work.
func (l *serveLimits) applyMemoryLimit(cacheSize int64) (restore func(), err error) {
	if l.memLimit == 0 {
		return func() {}, nil
	}
	if cacheSize+256<<20 > int64(l.memLimit) {
		return nil, fmt.Errorf("--cache-size %s leaves no room under --memory-limit %s: keep it at least 256MiB below", (*byteSize)(&cacheSize), &l.memLimit)
	}
	prev := debug.SetMemoryLimit(int64(l.memLimit))
	return func() { debug.SetMemoryLimit(prev) }, nil
}

func (l *serveLimits) check() error {
	switch {
	case l.maxHeavy < 1:
		return fmt.Errorf("--max-heavy: %d is not a positive number", l.maxHeavy)
	case l.maxCells < 1:
		return fmt.Errorf("--max-cells: %d is not a positive number", l.maxCells)
	case l.maxNodes < 1:
		return fmt.Errorf("--max-nodes: %d is not a positive number", l.maxNodes)
	case l.maxView < 1:
		return fmt.Errorf("--max-view-samples: %d is not a positive number", l.maxView)
	case l.uploadTimeout <= 0:
		return fmt.Errorf("--upload-timeout: %s is not a positive duration", l.uploadTimeout)
	case l.maxImports < 0:
		return fmt.Errorf("--max-imports: %d is not a positive number", l.maxImports)
	case l.importPause < 0:
		return fmt.Errorf("--import-pause: %s is negative", l.importPause)
	case l.perClient < 1:
		return fmt.Errorf("--uploads-per-client: %d is not a positive number", l.perClient)
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// serveMetrics says whether serve answers /metrics, and to whom: --metrics
// on serves them to anyone who reaches the server; --metrics-token turns
// them on for requests carrying that bearer token alone, a token of their
// own so that a scraper needs no upload rights. An explicit --metrics off
// wins over a token set in the environment.
type serveMetrics struct {
	mode  string
	token string
}

func (m *serveMetrics) flags(fs *flag.FlagSet) {
	fs.StringVar(&m.mode, "metrics", envOr("SUBSECOND_METRICS", "off"),
		"Prometheus metrics at /metrics: off (404) or on; --metrics-token turns them on for its bearer token alone ($SUBSECOND_METRICS)")
	fs.StringVar(&m.token, "metrics-token", os.Getenv("SUBSECOND_METRICS_TOKEN"),
		"serve /metrics only to requests with Authorization: Bearer `token` (401 without), unless --metrics off ($SUBSECOND_METRICS_TOKEN)")
}

// config returns whether metrics are on and their token, once fs is parsed.
func (m *serveMetrics) config(fs *flag.FlagSet) (on bool, token string, err error) {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "metrics" })
	switch m.mode {
	case "on":
		return true, m.token, nil
	case "off":
		if m.token != "" && !explicit {
			return true, m.token, nil
		}
		return false, "", nil
	}
	return false, "", fmt.Errorf("--metrics: %q is not off or on", m.mode)
}
