package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/subsecond/subsecond"
)

// metricsPath is the route of the Prometheus metrics (Config.Metrics).
const metricsPath = "/metrics"

// CacheReporter is a Store that can describe its capture cache; the
// metrics then include the cache's bytes, hits and misses.
type CacheReporter interface {
	CacheStats() subsecond.CacheStats
}

// IndexReporter is a Store that writes the fleet index after its imports
// answer; the metrics then include those writes.
type IndexReporter interface {
	IndexStats() subsecond.IndexStats
}

// metricSet holds a server's Prometheus metrics, on a registry of its own so
// that several servers in one process (tests) count apart. The request
// series are labelled by chi's route pattern, never the raw path, and by
// status class, so their number is bounded by the routes. A nil *metricSet
// counts nothing.
type metricSet struct {
	reg   *prometheus.Registry
	token string // when set, reading the metrics needs "Authorization: Bearer token"

	requests *prometheus.CounterVec   // method, route, status class
	duration *prometheus.HistogramVec // method, route
	imports  *prometheus.CounterVec   // outcome
	inBytes  *prometheus.CounterVec   // outcome
	samples  prometheus.Counter
	importT  prometheus.Histogram
	dbErrors prometheus.Counter
}

// Import outcomes, the outcome label of subsecond_imports_total and
// subsecond_import_bytes_total.
const (
	importCreated = "created" // stored: 201
	importExisted = "existed" // stored before: 200
	importRefused = "refused" // the client's fault: 4xx
	importFailed  = "failed"  // the server's: 5xx
)

// newMetrics returns the metrics of s, which reads its heavy-request gate
// and, when st is a CacheReporter, its capture cache.
func newMetrics(s *Server, st Store, token string) *metricSet {
	m := &metricSet{
		reg:   prometheus.NewRegistry(),
		token: token,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "subsecond_http_requests_total",
			Help: "HTTP requests answered, by method, chi route pattern (\"other\" for none) and status class (2xx, 3xx, 4xx, 5xx; \"aborted\" for a response broken off).",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "subsecond_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its response, by method and chi route pattern.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "route"}),
		imports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "subsecond_imports_total",
			Help: "Uploads that reached the store, by outcome: created, existed (stored before), refused (4xx) or failed (5xx).",
		}, []string{"outcome"}),
		inBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "subsecond_import_bytes_total",
			Help: "Bytes of upload bodies read, as sent (compressed), by outcome.",
		}, []string{"outcome"}),
		samples: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "subsecond_import_samples_total",
			Help: "Samples of the captures stored by uploads (not those found stored before).",
		}),
		importT: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "subsecond_import_duration_seconds",
			Help:    "Time an upload that stored or found its capture spent reading and importing it.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14), // 50 ms to 7 min
		}),
		dbErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "subsecond_database_errors_total",
			Help: "Responses 5xx caused by a failure of the store: internal errors, a full disk or an unavailable database, not the server's own refusals (busy, cancelled).",
		}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.imports, m.inBytes, m.samples, m.importT, m.dbErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	g := s.heavy
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "subsecond_heavy_requests_waiting",
			Help: "Heavy views waiting for a slot (the --max-heavy queue).",
		}, func() float64 { return float64(g.waiting.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "subsecond_heavy_requests_running",
			Help: "Heavy views being computed.",
		}, func() float64 { return float64(g.runningNow()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "subsecond_heavy_request_slots",
			Help: "Heavy views that may be computed at once (--max-heavy).",
		}, func() float64 { return float64(g.size) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "subsecond_heavy_requests_total",
			Help: "Heavy views that took a slot.",
		}, func() float64 { return float64(g.entered.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "subsecond_heavy_wait_seconds_total",
			Help: "Time heavy views waited for their slots; divided by subsecond_heavy_requests_total, the mean wait.",
		}, func() float64 { return time.Duration(g.waited.Load()).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "subsecond_heavy_held_seconds_total",
			Help: "Time heavy views held their slots (loading captures and computing); divided by subsecond_heavy_requests_total, the mean work.",
		}, func() float64 { return time.Duration(g.heldFor.Load()).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "subsecond_import_pauses_total",
			Help: "Pauses imports took, before a MiB of text each, because views waited for a heavy slot (--import-pause).",
		}, func() float64 { return float64(s.importPauses.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "subsecond_import_paused_seconds_total",
			Help: "Time imports paused for views waiting for a heavy slot (--import-pause).",
		}, func() float64 { return time.Duration(s.importPaused.Load()).Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "subsecond_imports_waiting",
			Help: "Uploads waiting for an import slot (--max-imports), their bodies unread.",
		}, func() float64 { return float64(s.importsWaiting.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "subsecond_imports_running",
			Help: "Uploads being imported.",
		}, func() float64 { return float64(len(s.imports)) }),
	)
	if ac := s.answers; ac != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "subsecond_answer_cache_bytes",
				Help: "Bytes of the whole-profile views' answers (heatmaps, cores maps, hot spots) kept compressed.",
			}, func() float64 { return float64(ac.size()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "subsecond_answer_cache_budget_bytes",
				Help: "The answer cache's budget (a sixteenth of --memory-limit).",
			}, func() float64 { return float64(ac.budget) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_answer_cache_hits_total",
				Help: "Whole-profile views answered from the answer cache; the hit rate is hits / (hits + misses).",
			}, func() float64 { return float64(ac.hits.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_answer_cache_misses_total",
				Help: "Whole-profile views looked up in the answer cache and computed.",
			}, func() float64 { return float64(ac.misses.Load()) }),
		)
	}
	if cr, ok := st.(CacheReporter); ok {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "subsecond_capture_cache_bytes",
				Help: "Bytes of the captures kept loaded for views, with their indexes.",
			}, func() float64 { return float64(cr.CacheStats().Bytes) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "subsecond_capture_cache_budget_bytes",
				Help: "The capture cache's budget (--cache-size).",
			}, func() float64 { return float64(cr.CacheStats().Budget) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_capture_cache_hits_total",
				Help: "Capture lookups answered from the cache; the hit rate is hits / (hits + misses).",
			}, func() float64 { return float64(cr.CacheStats().Hits) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_capture_cache_misses_total",
				Help: "Capture lookups that loaded the capture from the database.",
			}, func() float64 { return float64(cr.CacheStats().Misses) }),
		)
	}
	if ir, ok := st.(IndexReporter); ok {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "subsecond_fleet_index_pending",
				Help: "Fleet index writes under way: captures whose upload has answered and whose index is being written.",
			}, func() float64 { return float64(ir.IndexStats().Pending) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_fleet_index_writes_total",
				Help: "Captures whose fleet index was written after their upload answered.",
			}, func() float64 { return float64(ir.IndexStats().Written) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "subsecond_fleet_index_failures_total",
				Help: "Fleet index writes that failed; the next fleet view, or serve's start, writes the index again.",
			}, func() float64 { return float64(ir.IndexStats().Failed) }),
		)
	}
	return m
}

// serveMetrics handles GET /metrics: the Prometheus text exposition of the
// server's registry, to a request carrying the metrics token when one is
// set (401 otherwise). The route exists only when metrics are on.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if m := s.metrics; m.token != "" {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(m.token)) != 1 {
			s.error(w, r, errorf(subsecond.ErrUnauthorized, "the metrics need a token: send Authorization: Bearer TOKEN"))
			return
		}
	}
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// instrument counts each request and its duration by route pattern and
// status class, and the 5xx answers that a store failure caused. It runs
// inside logRequests, whose requestLog holds the error that decided the
// response.
func (s *Server) instrument(next http.Handler) http.Handler {
	m := s.metrics
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			m.observe(r, sw.code, v != nil, time.Since(start))
			if v != nil {
				panic(v)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// observe counts a response of status code (0 for 200) to r.
func (m *metricSet) observe(r *http.Request, code int, aborted bool, d time.Duration) {
	route := "other"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	if code == 0 {
		code = http.StatusOK
	}
	class := strconv.Itoa(code/100) + "xx"
	if aborted {
		class = "aborted"
	}
	m.requests.WithLabelValues(r.Method, route, class).Inc()
	m.duration.WithLabelValues(r.Method, route).Observe(d.Seconds())
	if rl, ok := r.Context().Value(requestLogKey{}).(*requestLog); ok && code >= 500 && storeFailure(rl.err) {
		m.dbErrors.Inc()
	}
}

// storeFailure reports whether err, which decided a 5xx response, is a
// failure of the store rather than one of the server's own refusals: a
// busy server, a request cancelled or out of time. The handlers' other
// errors come from the store (the engines report only bad or too large
// queries).
func storeFailure(err error) bool {
	return err != nil && !errors.Is(err, errBusy) && !errors.Is(err, errTooMany) &&
		!errors.Is(err, errTimeout) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// imported counts an upload that reached the store: n bytes read from its
// body in d, and the profile p it stored (existed: found stored before)
// or the error err.
func (m *metricSet) imported(n int64, d time.Duration, p *subsecond.Profile, existed bool, err error) {
	if m == nil {
		return
	}
	outcome := importCreated
	switch {
	case err != nil:
		outcome = importRefused
		if code, _ := status(err); code >= 500 {
			outcome = importFailed
		}
	case existed:
		outcome = importExisted
	default:
		m.samples.Add(float64(p.Samples))
	}
	m.imports.WithLabelValues(outcome).Inc()
	m.inBytes.WithLabelValues(outcome).Add(float64(n))
	if err == nil {
		m.importT.Observe(d.Seconds())
	}
}

// read returns the bytes read from b so far.
func (b *uploadBody) read() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
