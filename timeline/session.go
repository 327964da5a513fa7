package timeline

import (
	"context"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// SessionGap is the longest pause between a host's captures inside one
// recording session: a capture that starts more than SessionGap after every
// earlier capture of the host has ended opens a new session. `subsecond
// record` rotates captures back to back (one sampling interval apart), and
// a recorder restarted after a crash or a reboot is back within minutes;
// half an hour without a capture is another recording (another night,
// another experiment, or a sample imported months before), and a map over
// both would squeeze each into a few columns of hours. A host's views
// therefore show one session unless asked for a range.
const SessionGap = 30 * time.Minute

// Session is one recording session of a host: its captures that follow
// each other with pauses of at most SessionGap, over [Start, End) in
// wall-clock Unix nanoseconds. Number counts the host's sessions from 1,
// the earliest.
type Session struct {
	Number      int   `json:"number"`
	Start       int64 `json:"start_ns"`
	End         int64 `json:"end_ns"`
	Captures    int   `json:"captures"`
	Samples     int64 `json:"samples"`
	Approximate bool  `json:"approximate"` // some capture's place in time is an estimate
}

// SessionList is a host's recording sessions in time order, as the API's
// /api/hosts/{host}/sessions writes it; Unanchored counts the captures
// without a wall clock, which belong to none.
type SessionList struct {
	Host       string    `json:"host"`
	Sessions   []Session `json:"sessions"`
	Unanchored int       `json:"unanchored"`
}

// numberSessions sets the Session of each of caps, which are in time
// order: 1 for the first, one more after each pause longer than SessionGap.
func numberSessions(caps []Capture) {
	n, end := 0, int64(0)
	for i := range caps {
		if n == 0 || caps[i].Start-end > int64(SessionGap) {
			n++
		}
		caps[i].Session = n
		end = max(end, caps[i].End)
	}
}

// SessionsOf returns the sessions of caps, captures placed and numbered as
// HostCaptures returns them.
func SessionsOf(caps []Capture) []Session {
	var out []Session
	for _, c := range caps {
		if len(out) == 0 || out[len(out)-1].Number != c.Session {
			out = append(out, Session{Number: c.Session, Start: c.Start, End: c.End})
		}
		s := &out[len(out)-1]
		s.End = max(s.End, c.End)
		s.Captures++
		s.Samples += c.Samples
		s.Approximate = s.Approximate || c.Approximate
	}
	return out
}

// Sessions returns host's SessionList. An unknown host yields an error
// wrapping subsecond.ErrNotFound.
func Sessions(ctx context.Context, src Source, host string) (*SessionList, error) {
	caps, un, err := HostCaptures(ctx, src, host)
	if err != nil {
		return nil, err
	}
	ss := SessionsOf(caps)
	if ss == nil {
		ss = []Session{}
	}
	return &SessionList{Host: host, Sessions: ss, Unanchored: un}, nil
}

// defaultRange fills the bounds a host view leaves at zero from one of the
// sessions of caps: the session numbered want.Session, else the one holding
// the bound given (from's or the next, to's or the one before), else the
// latest. The start is floored to the second, as
// the summaries are. A session number the host does not have is a
// *query.ParamError.
func defaultRange(caps []Capture, want Span) (from, to int64, err error) {
	ss := SessionsOf(caps)
	s := &ss[len(ss)-1]
	switch {
	case want.Session > len(ss):
		return 0, 0, query.Invalidf("session", "the host has %d sessions, not %d", len(ss), want.Session)
	case want.Session > 0:
		s = &ss[want.Session-1]
	case want.From != 0:
		// The session holding from, or the next.
		for i := len(ss) - 1; i >= 0 && ss[i].End > want.From; i-- {
			s = &ss[i]
		}
	case want.To != 0:
		// The session holding to, or the one before.
		s = &ss[0]
		for i := 0; i < len(ss) && ss[i].Start < want.To; i++ {
			s = &ss[i]
		}
	}
	from, to = want.From, want.To
	if from == 0 {
		from = subsecond.FloorSecond(s.Start)
	}
	if to == 0 {
		to = s.End
	}
	return from, to, nil
}

// DefaultRange returns the range a host view over want covers among caps
// (the host's captures, HostCaptures): want's from and to, a missing
// bound being that of the session want.Session names, else the session
// holding the bound given, else the latest.
func DefaultRange(caps []Capture, want Span) (from, to int64, err error) {
	return defaultRange(caps, want)
}
