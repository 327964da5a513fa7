package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/web"
)

// Errors of the server's own making, classified like the shared sentinels.
var (
	errReadOnly    = errors.New("this server is read-only")
	errCrossOrigin = errors.New("cross-origin request refused")
	errMethod      = errors.New("method not allowed")
	errEncoding    = errors.New("unsupported content encoding")
	errMisdirected = errors.New("host not served")
	errBusy        = errors.New("server busy")
)

// retryAfter is the Retry-After, in seconds, of a busy server's 503.
const retryAfter = "5"

// userError is an error whose message is meant for the user; it wraps a
// sentinel that decides the HTTP status.
type userError struct {
	kind error
	msg  string
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.kind }

// errorf returns an error wrapping kind whose message, shown to the user, is
// the formatted text alone.
func errorf(kind error, format string, args ...any) error {
	return &userError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// status classifies err: the HTTP status and the message the client sees.
// Internal errors are reported as such, without their text.
func status(err error) (int, string) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("upload larger than the limit of %d bytes", mbe.Limit)
	case errors.Is(err, subsecond.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, userMessage(err, subsecond.ErrTooLarge)
	case errors.Is(err, subsecond.ErrNoSpace), errors.Is(err, syscall.ENOSPC):
		return http.StatusInsufficientStorage, "the server's disk is full, so nothing was stored; its operator must free space"
	case errors.Is(err, subsecond.ErrNotFound):
		return http.StatusNotFound, userMessage(err, subsecond.ErrNotFound)
	case errors.Is(err, subsecond.ErrInvalid):
		return http.StatusBadRequest, userMessage(err, subsecond.ErrInvalid)
	case errors.Is(err, subsecond.ErrEmptyRange):
		return http.StatusBadRequest, userMessage(err, subsecond.ErrEmptyRange)
	case errors.Is(err, subsecond.ErrNotPerf):
		return http.StatusUnsupportedMediaType, userMessage(err, subsecond.ErrNotPerf)
	case errors.Is(err, errEncoding):
		return http.StatusUnsupportedMediaType, userMessage(err, errEncoding)
	case errors.Is(err, subsecond.ErrUnauthorized):
		return http.StatusUnauthorized, userMessage(err, subsecond.ErrUnauthorized)
	case errors.Is(err, errReadOnly), errors.Is(err, errCrossOrigin):
		return http.StatusForbidden, err.Error()
	case errors.Is(err, errMisdirected):
		return http.StatusMisdirectedRequest, userMessage(err, errMisdirected)
	case errors.Is(err, subsecond.ErrSchema):
		return http.StatusServiceUnavailable, strings.TrimPrefix(query.Message(err), subsecond.ErrUnavailable.Error()+": ")
	case errors.Is(err, subsecond.ErrUnavailable):
		return http.StatusServiceUnavailable, "the database is unavailable (unreachable or restarting), so nothing was changed: retry in a few seconds"
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable, userMessage(err, errBusy)
	case errors.Is(err, errTimeout):
		return http.StatusRequestTimeout, userMessage(err, errTimeout)
	case errors.Is(err, errTooMany):
		return http.StatusTooManyRequests, userMessage(err, errTooMany)
	case errors.Is(err, errMethod):
		return http.StatusMethodNotAllowed, err.Error()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "request cancelled"
	}
	return http.StatusInternalServerError, "internal error"
}

// userMessage returns err's text for the client (query.Message). An
// ErrInvalid error names the parameter at its start and an ErrTooLarge one
// the limit, so the trailing ": invalid" or ": too large" that wrapping with
// %w appends is dropped; other errors keep their sentinel's words ("not
// found").
func userMessage(err, sentinel error) string {
	msg := query.Message(err)
	if msg == "" {
		return sentinel.Error()
	}
	return msg
}

// error is the one place where errors become HTTP responses: JSON
// {"error": "..."} for the API, an error page for the HTML routes. The error
// goes into the request's log line; internal errors are shown to the client
// only as "internal error".
func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := status(err)
	noteError(r, err)
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="subsecond"`)
	}
	if errors.Is(err, errBusy) || errors.Is(err, errTooMany) || errors.Is(err, subsecond.ErrUnavailable) {
		w.Header().Set("Retry-After", retryAfter)
	}
	if code == http.StatusRequestTimeout {
		w.Header().Set("Connection", "close")
	}
	if !strings.HasPrefix(r.URL.Path, link.APIPrefix) && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/static/") &&
		r.URL.Path != string(link.Readyz) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		page := web.ErrorPage{Layout: s.layout(http.StatusText(code), web.ViewData{Page: "error"}, r), Status: code, Message: msg}
		if err := web.Error(page).Render(r.Context(), w); err != nil {
			s.log.Debug("render error page", "err", err)
		}
		return
	}
	s.json(w, code, map[string]string{"error": msg})
}
