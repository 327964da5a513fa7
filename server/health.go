package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/subsecond/subsecond"
)

// readyTimeout bounds the database check of /readyz, so that a probe gets
// an answer before its own timeout even when the database hangs.
const readyTimeout = 3 * time.Second

// healthz answers GET /healthz: 200 while the process serves requests. It
// never touches the database, so that a service manager does not restart a
// server whose database is down.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.json(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers GET /readyz: 200 when the database answers a trivial
// query and its schema is this build's, else 503 with Retry-After and the
// reason, so that a load balancer sends requests to other servers.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	if err := s.store.Ready(ctx); err != nil {
		if ctx.Err() != nil && r.Context().Err() == nil {
			err = fmt.Errorf("%w: no answer within %v: %w", subsecond.ErrUnavailable, readyTimeout, err)
		}
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, map[string]string{"status": "ready"})
}
