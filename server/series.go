package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/timeline"
)

// State keeps the hosts' series (subsecond.Series): what `subsecond
// record`'s state sampler sends and what sysstat's imports gave. AddSeries
// checks what it stores (errors wrapping subsecond.ErrInvalid) and stores
// a point at the time of a stored one of the same series once.
type State interface {
	timeline.LaneSource
	Series(ctx context.Context, host, name string, from, to int64) ([]subsecond.Series, error)
	AddSeries(ctx context.Context, host string, ss []subsecond.Series) (subsecond.SeriesAdded, error)
}

// maxSeriesBody bounds a POST of series, in bytes: a minute of a 96-CPU
// host's every series at 1 s is about 4 MB of JSON.
const maxSeriesBody = 32 << 20

// errNoState answers the series routes of a server that keeps no series.
var errNoState = fmt.Errorf("this server keeps no host series: %w", subsecond.ErrNotFound)

// hostSeries handles GET /api/hosts/{host}/series?name=&from=&to=&bucket=&session=:
// one kind of the host's series over the span the cores map of the same
// parameters covers, on its columns (timeline.SeriesLane).
func (s *Server) hostSeries(w http.ResponseWriter, r *http.Request) {
	if s.state == nil {
		s.error(w, r, errNoState)
		return
	}
	s.hostSpanJSON(w, r, func(ctx context.Context, host string, span timeline.Span, q *Query) (any, error) {
		return timeline.Lane(ctx, s.source(), s.state, host, q.Series, span)
	})
}

// addSeries handles POST /api/hosts/{host}/series with the JSON
// {"series": [{"name", "cpu", "label", "points": [{"t", "v"}]}]}: series of
// the host, as the recorder sends them every few seconds. It answers
// {"added": points stored, "points": points sent}, with "refused" (how
// many) and "refused_series" (the first few) when series new to the host
// were not stored because it has subsecond.MaxHostSeries; a point at the
// time of a stored one of its series is not stored again, so that a batch
// sent twice (its answer lost) stores nothing twice.
func (s *Server) addSeries(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.error(w, r, err)
		return
	}
	if s.state == nil {
		s.error(w, r, errNoState)
		return
	}
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var in struct {
		Series []subsecond.Series `json:"series"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSeriesBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			err = fmt.Errorf("body: not the JSON {\"series\": [{\"name\", \"cpu\", \"label\", \"points\": [{\"t\", \"v\"}]}]}: %v: %w", err, subsecond.ErrInvalid)
		}
		s.error(w, r, err)
		return
	}
	n := 0
	for _, ss := range in.Series {
		n += len(ss.Points)
	}
	added, err := s.state.AddSeries(r.Context(), host, in.Series)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, struct {
		subsecond.SeriesAdded
		Points int `json:"points"`
	}{added, n})
}

// hostMoves handles GET /api/hosts/{host}/moves?name=&series_label=&series_cpu=&from=&to=&session=,
// or ?comm=&frame=: the commands and functions whose share of the host
// rises and falls with a series, or the series that move with a command's
// (or its function's) share, by rank correlation over windows spread
// over the span (explain.Movement). The host's captures and series are
// read, and the cache of analyses asked, before a heavy slot for moves
// (gate.enterMoves) is taken to count the windows' samples.
func (s *Server) hostMoves(w http.ResponseWriter, r *http.Request) {
	if s.state == nil {
		s.error(w, r, errNoState)
		return
	}
	host, q, err := hostQuery(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	mv, _, err := s.explains.Moves(r.Context(), s.explainSource(), host, explain.MoveOptionsOf(q), s.heavy.enterMoves)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.json(w, http.StatusOK, mv)
}
