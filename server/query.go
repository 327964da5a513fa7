package server

import (
	"net/url"
	"strconv"

	"github.com/subsecond/subsecond"
)

// Query is a view request parsed from URL parameters: the root package's
// one Query, whose parameters its table lists (docs/contracts.md).
type Query = subsecond.Query

// parseQuery parses v and resolves its ranges for profile p. Errors name the
// bad parameter and wrap subsecond.ErrInvalid.
func parseQuery(p *subsecond.Profile, v url.Values) (*Query, error) {
	q, err := subsecond.ParseQuery(v)
	if err != nil {
		return nil, err
	}
	if err := q.Resolve(p); err != nil {
		return nil, err
	}
	return q, nil
}

// flatten returns v's parameters as single strings (the first value of
// each), the form the page's view data carries.
func flatten(v url.Values) map[string]string {
	m := make(map[string]string, len(v))
	for k, vs := range v {
		if len(vs) > 0 {
			m[k] = vs[0]
		}
	}
	return m
}

// intParam reads the whole number parameter name from v (def when absent),
// refusing values outside lo..hi. It serves the host routes' own
// parameters, not yet in the table.
func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, subsecond.Invalidf(name, "%q is not a whole number from %d to %d", s, lo, hi)
	}
	return n, nil
}
