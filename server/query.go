package server

import (
	"net/url"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Query is a view request parsed from URL parameters: the root package's
// one Query, whose parameters its table lists (docs/contracts.md).
type Query = query.Query

// parseQuery parses v and resolves its ranges for profile p. Errors name the
// bad parameter and wrap subsecond.ErrInvalid.
func parseQuery(p *subsecond.Profile, v url.Values) (*Query, error) {
	q, err := query.Parse(v)
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
