package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// requestLog gathers what a request's log line says beyond what the
// logging middleware sees: the profile an upload created and the error
// that decided the response.
type requestLog struct {
	profile string
	err     error
}

type requestLogKey struct{}

// noteError records err as the reason for r's response in its log line.
func noteError(r *http.Request, err error) {
	if rl, ok := r.Context().Value(requestLogKey{}).(*requestLog); ok {
		rl.err = err
	}
}

// noteProfile records the profile r created in its log line.
func noteProfile(r *http.Request, id string) {
	if rl, ok := r.Context().Value(requestLogKey{}).(*requestLog); ok {
		rl.profile = id
	}
}

// logRequests writes one structured line per request when it ends: method,
// route pattern (never the raw path, which holds whatever the client sent),
// status, bytes read and written, duration, profile ID and client address.
// Server faults are logged at ERROR and a full disk (507) at WARN; changes
// (uploads, deletes), refusals that matter to an operator (401, 403, 413,
// 421, 429, 503: busy or cancelled) and aborted responses at INFO; other
// reads at DEBUG. Client faults are never ERROR, so no client can fill the
// error log.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rl := &requestLog{}
		r = r.WithContext(context.WithValue(r.Context(), requestLogKey{}, rl))
		in := &countingReader{r: r.Body}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = in
		}
		lw := &statusWriter{ResponseWriter: w}
		aborted := false
		defer func() {
			v := recover()
			if v != nil {
				aborted = true
				if rl.err == nil {
					rl.err = errors.New("response aborted")
				}
			}
			s.logRequest(r, lw, in.n, time.Since(start), rl, aborted)
			if v != nil {
				panic(v)
			}
		}()
		next.ServeHTTP(lw, r)
	})
}

func (s *Server) logRequest(r *http.Request, lw *statusWriter, read int64, d time.Duration, rl *requestLog, aborted bool) {
	code := lw.code
	if code == 0 {
		code = http.StatusOK
	}
	level := requestLevel(r.Method, code, aborted)
	ctx := context.WithoutCancel(r.Context())
	if !s.log.Enabled(ctx, level) {
		return
	}
	route := "-"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	profile := rl.profile
	if profile == "" {
		profile = chi.URLParam(r, "id")
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", code),
		slog.Int64("bytes", lw.n),
		slog.Duration("duration", d),
		slog.String("client", s.hosts.client(r)),
	}
	if read > 0 {
		attrs = append(attrs, slog.Int64("read", read))
	}
	if profile != "" {
		attrs = append(attrs, slog.String("profile", profile))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	if rl.err != nil {
		attrs = append(attrs, slog.String("err", rl.err.Error()))
	}
	s.log.LogAttrs(ctx, level, "request", attrs...)
}

// requestLevel is the level of a request's log line.
func requestLevel(method string, code int, aborted bool) slog.Level {
	switch {
	case code == http.StatusInsufficientStorage:
		return slog.LevelWarn
	case code >= 500 && code != http.StatusServiceUnavailable:
		return slog.LevelError
	case aborted:
		return slog.LevelInfo
	case method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions:
		return slog.LevelInfo
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge,
		http.StatusMisdirectedRequest, http.StatusTooManyRequests, http.StatusServiceUnavailable,
		http.StatusInsufficientStorage:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// statusWriter remembers a response's status and counts its body bytes.
// Unwrap lets http.ResponseController reach the connection beneath.
type statusWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }
