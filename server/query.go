package server

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/subsecond/subsecond"
)

// Query is a view request parsed from URL parameters (docs/contracts.md).
// Ranges are absolute nanoseconds, half-open; widths are nanoseconds.
type Query struct {
	Filter subsecond.Filter
	Range  subsecond.Range // start, end: the whole profile when absent
	Range2 subsecond.Range // start2, end2: the base range of a differential graph, in the base profile
	Base   string          // base: the profile whose Range2 a differential graph compares with; "" for the same
	Rows   int             // rows per heatmap column, 1–subsecond.MaxRows
	Col    int64           // heatmap column width, subsecond.MinCol–MaxCol
	Bucket int64           // cores-map column width, subsecond.MinBucket–MaxBucket

	Threshold float64 // hot spots: busy fraction that counts as busy, (0, 1]
	Min       int64   // hot spots: shortest episode
}

// parseQuery parses v for profile p. Errors wrap subsecond.ErrInvalid and
// name the bad parameter. When v names a base profile, Range2 is left for
// baseRange to read against that profile.
func parseQuery(p *subsecond.Profile, v url.Values) (*Query, error) {
	f, err := subsecond.ParseFilter(v)
	if err != nil {
		return nil, err
	}
	q := &Query{Filter: f, Threshold: subsecond.DefaultThreshold, Min: subsecond.DefaultMin}
	whole := subsecond.Range{Start: p.T0(), End: p.End + 1}
	if q.Range, err = parseRange(p, v, "start", "end", whole); err != nil {
		return nil, err
	}
	if q.Base = v.Get("base"); q.Base == p.ID {
		q.Base = ""
	}
	if q.Base == "" {
		if q.Range2, err = parseRange(p, v, "start2", "end2", whole); err != nil {
			return nil, err
		}
	}
	if q.Rows, err = intParam(v, "rows", subsecond.DefaultRows, 1, subsecond.MaxRows); err != nil {
		return nil, err
	}
	if q.Col, err = secondsParam(v, "col", subsecond.DefaultCol, subsecond.MinCol, subsecond.MaxCol); err != nil {
		return nil, err
	}
	if q.Bucket, err = secondsParam(v, "bucket", subsecond.DefaultBucket, subsecond.MinBucket, subsecond.MaxBucket); err != nil {
		return nil, err
	}
	if q.Min, err = secondsParam(v, "min", subsecond.DefaultMin, 1, int64(24*time.Hour)); err != nil {
		return nil, err
	}
	if s := v.Get("threshold"); s != "" {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || !(t > 0 && t <= 1) {
			return nil, fmt.Errorf("threshold: %q is not a fraction in (0, 1]: %w", s, subsecond.ErrInvalid)
		}
		q.Threshold = t
	}
	return q, nil
}

// parseRange reads the range [T0+start, T0+end) in seconds from the
// profile's T0, clamped to def; a missing bound is that of def.
func parseRange(p *subsecond.Profile, v url.Values, startName, endName string, def subsecond.Range) (subsecond.Range, error) {
	r := def
	var err error
	if s := v.Get(startName); s != "" {
		if r.Start, err = subsecond.ParseOffset(startName, s, p.T0()); err != nil {
			return r, err
		}
	}
	if s := v.Get(endName); s != "" {
		if r.End, err = subsecond.ParseOffset(endName, s, p.T0()); err != nil {
			return r, err
		}
	}
	if r.End <= r.Start {
		return r, fmt.Errorf("%s: the range [%s, %s) is empty; %s must be after %s: %w", endName,
			subsecond.FormatSeconds(r.Start-p.T0()), subsecond.FormatSeconds(r.End-p.T0()), endName, startName, subsecond.ErrInvalid)
	}
	// A range reaching past the capture is clamped to it (start=-5 means
	// from the first sample); one wholly outside it is refused.
	switch {
	case r.Start >= def.End:
		return r, fmt.Errorf("%s: %s s is past the end of the capture (%s s): %w", startName,
			subsecond.FormatSeconds(r.Start-p.T0()), subsecond.FormatSeconds(def.End-p.T0()), subsecond.ErrInvalid)
	case r.End <= def.Start:
		return r, fmt.Errorf("%s: %s s is before the capture starts (%s s): %w", endName,
			subsecond.FormatSeconds(r.End-p.T0()), subsecond.FormatSeconds(def.Start-p.T0()), subsecond.ErrInvalid)
	}
	r.Start = max(r.Start, def.Start)
	r.End = min(r.End, def.End)
	return r, nil
}

func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s: %q is not a whole number from %d to %d: %w", name, s, lo, hi, subsecond.ErrInvalid)
	}
	return n, nil
}

func secondsParam(v url.Values, name string, def, lo, hi int64) (int64, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	ns, err := subsecond.ParseSeconds(name, s)
	if err != nil {
		return 0, err
	}
	if ns < lo || ns > hi {
		return 0, fmt.Errorf("%s: %s s is outside %s–%s s: %w", name, s,
			subsecond.FormatSeconds(lo), subsecond.FormatSeconds(hi), subsecond.ErrInvalid)
	}
	return ns, nil
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

// baseRange reads start2 and end2 into q.Range2 in seconds from base's T0
// (the whole base profile when absent).
func (q *Query) baseRange(base *subsecond.Profile, v url.Values) error {
	var err error
	q.Range2, err = parseRange(base, v, "start2", "end2", subsecond.Range{Start: base.T0(), End: base.End + 1})
	return err
}
