package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

// logBuffer is a concurrency-safe log destination for tests.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON log lines written so far, waiting briefly for n of
// them: a request's line is written as its handler returns, which may be
// just after the client has its answer.
func (b *logBuffer) lines(t *testing.T, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		text := b.buf.String()
		b.mu.Unlock()
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q is not JSON: %v", l, err)
			}
			out = append(out, m)
		}
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (b *logBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// failingEngine fails every view with an internal error.
type failingEngine struct{ countEngine }

func (failingEngine) Heatmap(*subsecond.Capture, *Query) (any, error) {
	return nil, errors.New("disk on fire")
}

func TestRequestLog(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, Config{Logger: newLogger(&logs), Token: "s3cret", Engine: failingEngine{},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	text := perfText(1, 20, 1)
	res, b := e.do("POST", "/api/profiles?name=x", strings.NewReader(text), "Authorization", "Bearer s3cret",
		"X-Forwarded-For", "198.51.100.7")
	var up uploadResponse
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", res.StatusCode, b)
	}
	id := up.Profile.ID
	_, cpus := e.do("GET", "/api/profiles/"+id+"/cpus?cpu=0&comm=secret-comm", nil, "Accept-Encoding", "identity")
	e.do("GET", "/api/profiles/"+id+"/heatmap", nil)
	e.do("DELETE", "/api/profiles/"+id, nil)
	e.do("GET", "/api/profiles/"+id+"/flamegraph?start=abc", nil)
	e.do("GET", "/no/such/page", nil)
	e.do("DELETE", "/api/profiles/"+id, nil, "Authorization", "Bearer s3cret")

	want := []struct {
		method, route string
		status        int
		level         string
	}{
		{"POST", "/api/profiles", 201, "INFO"},
		{"GET", "/api/profiles/{id}/cpus", 200, "DEBUG"},
		{"GET", "/api/profiles/{id}/heatmap", 500, "ERROR"},
		{"DELETE", "/api/profiles/{id}", 401, "INFO"},
		{"GET", "/api/profiles/{id}/flamegraph", 400, "DEBUG"},
		{"GET", "-", 404, "DEBUG"},
		{"DELETE", "/api/profiles/{id}", 204, "INFO"},
	}
	lines := logs.lines(t, len(want))
	if len(lines) != len(want) {
		t.Fatalf("%d log lines; want one per request, %d:\n%v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l["msg"] != "request" || l["method"] != w.method || l["route"] != w.route || l["status"] != float64(w.status) || l["level"] != w.level {
			t.Errorf("line %d = %v; want %s %s %d at %s", i, l, w.method, w.route, w.status, w.level)
		}
		if _, ok := l["duration"].(float64); !ok {
			t.Errorf("line %d has no duration: %v", i, l)
		}
		if w.route != "-" && w.route != "/api/profiles" || i == 0 {
			if l["profile"] != id {
				t.Errorf("line %d: profile = %v; want %s", i, l["profile"], id)
			}
		}
	}
	if lines[0]["client"] != "198.51.100.7" || lines[1]["client"] != "127.0.0.1" {
		t.Errorf("clients = %v, %v; want the proxy's X-Forwarded-For, then the peer", lines[0]["client"], lines[1]["client"])
	}
	if lines[0]["read"] != float64(len(text)) {
		t.Errorf("upload read = %v; want %d", lines[0]["read"], len(text))
	}
	if lines[1]["bytes"] != float64(len(cpus)) {
		t.Errorf("cpus bytes = %v; want the body's %d", lines[1]["bytes"], len(cpus))
	}
	if !strings.Contains(lines[2]["err"].(string), "disk on fire") {
		t.Errorf("500 line err = %v; want the internal error", lines[2]["err"])
	}
	if !strings.Contains(lines[4]["err"].(string), "start") {
		t.Errorf("400 line err = %v; want the reason", lines[4]["err"])
	}
	all := logs.buf.String()
	for _, raw := range []string{"secret-comm", "/no/such/page", "start=abc"} {
		if strings.Contains(all, raw) {
			t.Errorf("the log holds the raw request %q; want route patterns only", raw)
		}
	}
}

// TestRequestLogLevels: no client fault, however many, reaches ERROR.
func TestRequestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		method string
		code   int
		want   slog.Level
	}{
		{"GET", 200, slog.LevelDebug},
		{"GET", 304, slog.LevelDebug},
		{"GET", 400, slog.LevelDebug},
		{"GET", 404, slog.LevelDebug},
		{"GET", 401, slog.LevelInfo},
		{"GET", 421, slog.LevelInfo},
		{"GET", 503, slog.LevelInfo},
		{"POST", 201, slog.LevelInfo},
		{"POST", 400, slog.LevelInfo},
		{"POST", 408, slog.LevelInfo},
		{"POST", 413, slog.LevelInfo},
		{"POST", 507, slog.LevelWarn},
		{"DELETE", 204, slog.LevelInfo},
		{"GET", 500, slog.LevelError},
		{"POST", 500, slog.LevelError},
	} {
		if got := requestLevel(tc.method, tc.code, false); got != tc.want {
			t.Errorf("requestLevel(%s, %d) = %v; want %v", tc.method, tc.code, got, tc.want)
		}
	}
}
