package server

import (
	"cmp"
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// Store keeps profiles. Lookups of unknown ids return errors wrapping
// subsecond.ErrNotFound; input that is not perf script text is refused with an
// error wrapping subsecond.ErrNotPerf and nothing is stored.
type Store interface {
	Import(ctx context.Context, r io.Reader, u Upload) (p *subsecond.Profile, existed bool, err error)
	// List returns every profile, newest first, each with a summary of its
	// events (Profile.EventCount and the top one); Page a page of them,
	// at most limit from the one after profile after, and the cursor of
	// the next page ("" for the last). An unknown after is an error
	// wrapping subsecond.ErrNotFound.
	List(ctx context.Context) ([]subsecond.Profile, error)
	Page(ctx context.Context, limit int, after string) (list []subsecond.Profile, next string, err error)
	// HostTotals and HostProfiles are the host list's timeline.HostSource:
	// a page of hosts' totals, computed by the database, and one host's
	// profiles.
	HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error)
	HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error)
	Profile(ctx context.Context, id string) (*subsecond.Profile, error)
	Rename(ctx context.Context, id, name string) error
	Delete(ctx context.Context, id string) error
	Capture(ctx context.Context, id string) (*subsecond.Capture, error)
	// CachedCapture returns the capture and true when the store holds it
	// in memory, still stored, and false without loading it otherwise.
	CachedCapture(ctx context.Context, id string) (*subsecond.Capture, bool, error)
	// CaptureWindow returns a capture with at least the samples of the
	// seconds r overlaps, found with Capture.Window (see
	// timeline.WindowSource): the night's hot spots read a few seconds of
	// many captures with it.
	CaptureWindow(ctx context.Context, id string, r subsecond.Range) (*subsecond.Capture, error)
	// WindowSamples returns how many samples CaptureWindow would decode
	// for r, counted without decoding any: the cost of a view of a range,
	// known before the work starts.
	WindowSamples(ctx context.Context, id string, r subsecond.Range) (int64, error)
	// Ready checks that the database answers and has this build's schema;
	// its errors wrap subsecond.ErrUnavailable.
	Ready(ctx context.Context) error
}

// Upload describes an uploaded capture: the name the user gave it, the file
// name the browser sent, and its size in bytes as sent (compressed), 0 when
// unknown.
type Upload struct {
	Name     string
	FileName string
	Size     int64
	Host     string // the host the capture is from, overriding its "# hostname"; "" for none
	// Labels are set on the host with the capture; Boot is the Unix time
	// in nanoseconds the host booted, 0 when unknown.
	Labels []subsecond.Label
	Boot   int64
	// MaxText is the largest text the capture may decompress to, in
	// bytes; 0 for the store's default. Past it, and for a compressed
	// stream inside the upload's, Import fails with subsecond.ErrTooLarge.
	MaxText int64
	// Pause, when set, is called before each MiB of text the import
	// parses (store.ImportOptions.Pause); the server sets it.
	Pause func(ctx context.Context)
}

// Engine computes the views of a capture for a parsed Query. Heatmap and
// Cores return values that encode to the JSON shapes of docs/contracts.md.
// Errors about the query wrap subsecond.ErrInvalid or subsecond.ErrEmptyRange.
// Package engine is the one implementation.
type Engine interface {
	Heatmap(c *subsecond.Capture, q *Query) (any, error)
	Cores(c *subsecond.Capture, q *Query) (any, error)
	// Hotspots returns the first q.Limit episodes (0: all) and q.Cells
	// hottest cells.
	Hotspots(c *subsecond.Capture, q *Query) (*subsecond.HotspotReport, error)
	// Flame returns the flame graph of q.Range.
	Flame(c *subsecond.Capture, q *Query) (Graph, error)
	// Diff returns the differential flame graph from q.Range2 of capture
	// base (the base; c itself unless q.Base names another profile) to
	// q.Range of c.
	Diff(c, base *subsecond.Capture, q *Query) (Graph, error)
	// Samples returns the stack chart's samples of q.Range that pass the
	// filter, each with its leaf in the range's flame graph, and their
	// number n; when n > limit it returns nil and n alone.
	Samples(c *subsecond.Capture, q *Query, limit int) (v any, n int, err error)
}

// Graph is a computed flame graph: the root package's.
type Graph = subsecond.Graph

// Config configures a Server.
type Config struct {
	Store  Store
	Engine Engine
	Night  Night // the host views' summaries and markers
	// State keeps the hosts' series (per-CPU time, cgroups, interrupts);
	// nil for a server that keeps none, whose series routes answer 404.
	State State
	// Fleet keeps the fleet index and the hosts' labels; nil for a
	// server that keeps none, whose fleet routes answer 404.
	Fleet     Fleet
	MaxUpload int64 // largest accepted request body in bytes; 0 means 2 GiB
	// MaxText bounds a capture's decompressed text in bytes, so that a small
	// compressed upload cannot expand without end; 0 means the store's
	// default. The store counts the text (see Upload.MaxText).
	MaxText  int64
	Token    string // when set, uploads and deletes need "Authorization: Bearer Token"
	ReadOnly bool   // refuse uploads and deletes
	// UploadTimeout bounds the reading and importing of one upload,
	// overriding the http.Server's shorter ReadTimeout and WriteTimeout for
	// that request; 0 means one hour.
	UploadTimeout time.Duration
	// Logger receives one line per request (see logRequests); nil discards
	// them.
	Logger *slog.Logger
	// AllowedHosts lists the host names that requests may name in their
	// Host header besides localhost names and IP addresses: exact names,
	// ".example.com" for a domain and its subdomains, or "*" for any host.
	// Other names get 421, which defeats DNS rebinding.
	AllowedHosts []string
	// Public says that the listener is reachable from other machines, so
	// that any IP address is a valid Host; otherwise only loopback ones are.
	Public bool
	// TrustedProxies lists the addresses of reverse proxies whose
	// X-Forwarded-For, -Host and -Proto headers describe the client: its
	// address in the log, the host checked against AllowedHosts and the
	// links the server returns. The headers of other peers are ignored.
	TrustedProxies []netip.Prefix

	// MaxHeavy bounds the heavy requests (views that read a whole capture)
	// computed at once; others wait for a slot while their client does,
	// up to HeavyWait, and beyond HeavyQueue waiting they get 503 with
	// Retry-After. 0 means DefaultMaxHeavy(), DefaultHeavyQueue and
	// DefaultHeavyWait.
	MaxHeavy   int
	HeavyQueue int
	HeavyWait  time.Duration
	// MaxCells bounds the cells of a heatmap or cores map, checked before
	// any work (400 naming col or bucket); 0 means DefaultMaxCells.
	MaxCells int64
	// MaxNodes bounds the nodes of a flame graph sent or exported (413);
	// 0 means DefaultMaxNodes.
	MaxNodes int
	// MaxViewSamples bounds the samples one view reads, counted from what
	// import stored before any is loaded: a view of a larger capture reads
	// only the seconds of its range when they hold no more (flame graphs
	// and stack charts), and is refused otherwise (413 naming the limit
	// and start, end); 0 means DefaultMaxViewSamples.
	MaxViewSamples int64
	// MaxRangeSamples bounds the samples of a host's range across its
	// captures, counted from their summaries before any is loaded (413
	// naming from, to and cpu); 0 means DefaultMaxRangeSamples.
	MaxRangeSamples int64
	// RangeCacheSize is the byte budget of the host ranges kept joined
	// (timeline.RangeCache); 0 means timeline.DefaultRangeBudget.
	RangeCacheSize int64
	// AnswerCacheSize is the byte budget of the answers of whole-profile
	// views kept compressed (answerCache); 0 means DefaultAnswerCacheSize,
	// negative keeps none.
	AnswerCacheSize int64

	// MinUploadRate is the slowest pace an upload may keep, in bytes per
	// second over each RateWindow spent waiting for the client; slower
	// uploads end with 408. 0 means DefaultMinUploadRate and
	// DefaultRateWindow.
	MinUploadRate int64
	RateWindow    time.Duration
	// UploadsPerClient bounds the uploads in progress from one client
	// address (429 beyond); 0 means DefaultUploadsPerClient.
	UploadsPerClient int
	// MaxImports bounds the uploads imported at once (each holds its
	// capture's columns while it parses, about 150 MB for the bundled
	// 96-CPU capture, and keeps a core busy); more wait for a slot, their
	// bodies unread, while their clients do. 0 means DefaultMaxImports().
	MaxImports int
	// ImportPause is how long an import pauses before each MiB of text
	// it parses while views wait for a heavy slot (pauseImport); 0 means
	// DefaultImportPause, negative never pauses.
	ImportPause time.Duration

	// Metrics serves the server's Prometheus metrics at /metrics (see
	// metricSet); otherwise that route does not exist. When MetricsToken is
	// set they need "Authorization: Bearer MetricsToken" (401 without).
	Metrics      bool
	MetricsToken string
}

// Server is Subsecond's HTTP server. Its Handler is safe for concurrent use.
type Server struct {
	store     Store
	engine    Engine
	night     Night
	state     State
	fleet     Fleet
	maxUpload int64
	maxText   int64
	token     string
	readOnly  bool
	uploadTTL time.Duration
	log       *slog.Logger
	assets    *assets
	csrf      *http.CrossOriginProtection
	hosts     hostPolicy
	heavy     *gate
	maxCells  int64
	maxNodes  int
	// maxViewSamples bounds the samples one view reads (viewCapture).
	maxViewSamples int64
	hot            hotCache
	// answers keeps the answers of whole-profile views; nil keeps none.
	// fleetAnswers keeps the fleet's in it.
	answers      *answerCache
	fleetAnswers *fleetAnswers
	// maxRangeSamples bounds a host range's samples; ranges keeps the
	// ranges joined.
	maxRangeSamples int64
	ranges          *timeline.RangeCache
	// explains keeps the host analyses computed: explanations of markers,
	// what moves with a series, and the window counts they read.
	explains *explain.Cache
	// fleetTables keeps the fleet contrasts' counts of names (fleet.Cache).
	fleetTables *fleet.Cache
	// pageHotSamples is the largest capture, in samples, whose profile
	// page waits for its hot spots (pageHotspotSamples).
	pageHotSamples int64

	minRate    int64
	rateWindow time.Duration
	authWait   time.Duration
	uploads    clientUploads
	imports    chan struct{} // a slot per import running
	// importsWaiting counts the uploads waiting for a slot.
	importsWaiting atomic.Int64
	// importPause is Config.ImportPause; importPauses counts the pauses
	// taken and importPaused sums them, in nanoseconds.
	importPause                time.Duration
	importPauses, importPaused atomic.Int64
	metrics                    *metricSet // nil when off
}

// Default limits: of a request body, and of the text it decompresses to.
const (
	DefaultMaxUpload = 2 << 30
)

// New returns a Server for cfg.
func New(cfg Config) *Server {
	s := &Server{
		store:     cfg.Store,
		night:     cfg.Night,
		state:     cfg.State,
		fleet:     cfg.Fleet,
		engine:    cfg.Engine,
		maxUpload: cfg.MaxUpload,
		maxText:   cfg.MaxText,
		token:     cfg.Token,
		readOnly:  cfg.ReadOnly,
		uploadTTL: cfg.UploadTimeout,
		log:       cfg.Logger,
		assets:    newAssets(web.Static()),
		csrf:      http.NewCrossOriginProtection(),
		hosts:     newHostPolicy(cfg.AllowedHosts, cfg.Public, cfg.TrustedProxies),
		heavy:     newGate(cfg.MaxHeavy, cfg.HeavyQueue, cfg.HeavyWait),
		maxCells:  cfg.MaxCells,
		maxNodes:  cfg.MaxNodes,

		maxViewSamples: cmp.Or(cfg.MaxViewSamples, DefaultMaxViewSamples),

		maxRangeSamples: cmp.Or(cfg.MaxRangeSamples, DefaultMaxRangeSamples),
		ranges:          timeline.NewRangeCache(cfg.RangeCacheSize),
		explains:        explain.NewCache(0),
		fleetTables:     fleet.NewCache(0),
		answers:         newAnswerCache(cfg.AnswerCacheSize),

		pageHotSamples: pageHotspotSamples,
	}
	s.fleetAnswers = newFleetAnswers(s.answers, s.fleet)
	if s.maxCells <= 0 {
		s.maxCells = DefaultMaxCells
	}
	if s.maxNodes <= 0 {
		s.maxNodes = DefaultMaxNodes
	}
	s.minRate, s.rateWindow, s.authWait = cfg.MinUploadRate, cfg.RateWindow, DefaultAuthWait
	if s.minRate <= 0 {
		s.minRate = DefaultMinUploadRate
	}
	if s.rateWindow <= 0 {
		s.rateWindow = DefaultRateWindow
	}
	s.imports = make(chan struct{}, cmp.Or(max(cfg.MaxImports, 0), DefaultMaxImports()))
	s.importPause = cmp.Or(cfg.ImportPause, DefaultImportPause)
	s.uploads.max = cfg.UploadsPerClient
	if s.uploads.max <= 0 {
		s.uploads.max = DefaultUploadsPerClient
	}
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUpload
	}
	if s.uploadTTL <= 0 {
		s.uploadTTL = time.Hour
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics {
		s.metrics = newMetrics(s, cfg.Store, cfg.MetricsToken)
	}
	return s
}

// Handler returns the server's routes wrapped in its request log, Host
// check, security headers and cross-origin protection. Responses to reads are compressed when the
// client accepts it; uploads are left unwrapped so that they can extend
// their own deadlines.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(s.logRequests, s.instrument, s.checkHost, middleware.GetHead, s.secureHeaders, s.crossOrigin)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.error(w, r, errorf(subsecond.ErrNotFound, "no such page"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.error(w, r, errMethod)
	})

	r.Get(string(link.Healthz), s.healthz)
	r.Get(string(link.Readyz), s.readyz)
	r.Post(string(link.ProfilesAPI), s.createProfile)
	r.Patch(string(link.ProfileAPI), s.patchProfile)
	r.Delete(string(link.ProfileAPI), s.deleteProfile)
	r.Post(string(link.MarkersAPI), s.addMarkers)
	r.Post(string(link.SeriesAPI), s.addSeries)
	r.Post(string(link.LabelsAPI), s.setHostLabels)
	r.Group(func(r chi.Router) {
		r.Use(compress("text/html", "text/css", "text/javascript", "application/javascript",
			"application/json", "image/svg+xml", "text/plain"))
		r.Get(string(link.Index), s.index)
		r.Get(string(link.ProfilePage), s.profilePage)
		r.Get(string(link.FlamePage), s.flamePage)
		r.Get(string(link.DiffPage), s.diffPage)
		r.Get(string(link.StacksPage), s.stacksPage)
		r.Get(string(link.HostsPage), s.hostsPage)
		r.Get(string(link.HostPage), s.hostPage)
		r.Get(string(link.HostFlamePage), s.hostFlamePage)
		r.Get(string(link.HostDiffPage), s.hostDiffPage)
		r.Get(string(link.HostStacksPage), s.hostStacksPage)
		r.Get(string(link.ExplainPage), s.explainPage)
		r.Get(string(link.ExplainDiffPage), s.explainDiffPage)
		r.Get(string(link.FleetPage), s.fleetPage)
		r.Get(string(link.Static), s.static)

		r.Get(string(link.ProfilesAPI), s.listProfiles)
		r.Get(string(link.ProfileAPI), s.getProfile)
		r.Get(string(link.HeatmapAPI), s.heatmap)
		r.Get(string(link.CoresAPI), s.cores)
		r.Get(string(link.HotspotsAPI), s.hotspots)
		r.Get(string(link.FlameAPI), s.flamegraph)
		r.Get(string(link.DiffAPI), s.diff)
		r.Get(string(link.SamplesAPI), s.samples)

		r.Get(string(link.HostsAPI), s.listHosts)
		r.Get(string(link.CapturesAPI), s.hostCaptures)
		r.Get(string(link.SessionsAPI), s.hostSessions)
		r.Get(string(link.TimelineAPI), s.hostTimeline)
		r.Get(string(link.HostHotspotAPI), s.hostHotspots)
		r.Get(string(link.CommsAPI), s.hostComms)
		r.Get(string(link.MarkersAPI), s.hostMarkers)
		r.Get(string(link.SeriesAPI), s.hostSeries)
		r.Get(string(link.MovesAPI), s.hostMoves)
		r.Get(string(link.ExplainAPI), s.hostExplain)
		r.Get(string(link.ExplainDiffAPI), s.explainDiff)
		r.Get(string(link.HostFlameAPI), s.hostFlamegraph)
		r.Get(string(link.HostDiffAPI), s.hostDiff)
		r.Get(string(link.HostSamplesAPI), s.hostSamples)

		r.Get(string(link.FleetAPI), s.fleetMap)
		r.Get(string(link.FleetSearchAPI), s.fleetSearch)
		r.Get(string(link.FleetGroupsAPI), s.fleetGroups)
		r.Get(string(link.FleetUptimeAPI), s.fleetUptime)
	})
	if s.metrics != nil {
		r.Get(metricsPath, s.serveMetrics)
	}
	return r
}

// gzipLevel is the compression level of every answer the server
// compresses. Level 1 of klauspost/compress compresses a flame graph's
// JSON or SVG about 1.9 times as fast as level 5 (690 against 370 MB/s on
// a 6 s range of the bundled capture, 860 against 470 on its 1 MB SVG)
// for answers 12–19% larger: compression is most of what a range flame
// graph costs beyond its counting, and a few kilobytes more on the wire
// cost the browser less than the milliseconds saved cost a busy server.
const gzipLevel = 1

// compress returns chi's response compression at gzipLevel for the
// content types given, gzip and deflate written by klauspost/compress: the
// same formats as the standard library's in about a third of the time,
// which matters for a whole capture's flame graph, megabytes of JSON that
// take longer to compress than to build.
func compress(types ...string) func(http.Handler) http.Handler {
	c := middleware.NewCompressor(gzipLevel, types...)
	c.SetEncoder("deflate", func(w io.Writer, level int) io.Writer {
		fw, err := flate.NewWriter(w, level)
		if err != nil {
			return nil
		}
		return fw
	})
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gw, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			return nil
		}
		return gw
	})
	return c.Handler
}

// contentSecurityPolicy allows scripts, styles and images only from the
// server itself (plus data: images for canvas exports): no inline script.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

func (s *Server) secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// crossOrigin refuses state-changing requests that a browser made on behalf
// of another site (CSRF). Requests without browser headers (curl) pass.
func (s *Server) crossOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.csrf.Check(r); err != nil {
			s.error(w, r, errCrossOrigin)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorize reports whether r may change state: not in read-only mode, and
// carrying the token when one is configured, either as a bearer token or as
// formToken (the upload form's token field).
func (s *Server) authorize(r *http.Request, formToken string) error {
	if s.readOnly {
		return errReadOnly
	}
	if s.token == "" {
		return nil
	}
	got := formToken
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, _ := strings.Cut(auth, " ")
		if strings.EqualFold(scheme, "Bearer") {
			got = strings.TrimSpace(tok)
		}
	}
	if got == "" {
		return errorf(subsecond.ErrUnauthorized, "this server needs a token: send Authorization: Bearer TOKEN")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
		return errorf(subsecond.ErrUnauthorized, "wrong token")
	}
	return nil
}
