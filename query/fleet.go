package query

import (
	"regexp"
	"strings"

	"github.com/subsecond/subsecond"
)

// FleetMatch returns the names q's fleet search selects: with function,
// the functions matching it (subsecond.NameFunction); with comm, the one
// command of that exact name, and with comm_regex the commands matching
// it (subsecond.NameComm); with stack, the call edges "caller;callee"
// matching it (subsecond.NameEdge). The parameters mean what they mean in
// a capture's filter. It returns a nil expression when q names none, and
// an error naming the second parameter when it names more than one.
func (q *Query) FleetMatch() (subsecond.NameKind, *regexp.Regexp, error) {
	var kind subsecond.NameKind
	var expr, name string
	for _, c := range []struct {
		name, value string
		kind        subsecond.NameKind
		exact       bool
	}{
		{"function", q.Filter.Function, subsecond.NameFunction, false},
		{"comm", q.Filter.Comm, subsecond.NameComm, true},
		{"comm_regex", q.Filter.CommRegex, subsecond.NameComm, false},
		{"stack", q.Stack, subsecond.NameEdge, false},
	} {
		if c.value == "" {
			continue
		}
		if name != "" {
			return 0, nil, Invalidf(c.name, "the fleet searches one of function, comm, comm_regex and stack at a time; %s is given too", name)
		}
		name, kind, expr = c.name, c.kind, c.value
		if c.exact {
			expr = "^" + regexp.QuoteMeta(c.value) + "$"
		}
	}
	if name == "" {
		return 0, nil, nil
	}
	re, err := compileParam(name, expr)
	if err != nil {
		return 0, nil, err
	}
	return kind, re, nil
}

// FleetSearchParams are the parameters that select a fleet search's
// names, one at a time (FleetMatch).
var FleetSearchParams = []string{"function", "comm", "comm_regex", "stack"}

// FleetMeasure writes the search q names for people, "function=tcp_.*",
// or "" for none.
func (q *Query) FleetMeasure() string {
	v := q.ValuesFor(ViewFleet)
	var parts []string
	for _, name := range FleetSearchParams {
		if s := v.Get(name); s != "" {
			parts = append(parts, name+"="+s)
		}
	}
	return strings.Join(parts, " ")
}
