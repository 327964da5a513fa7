package subsecond

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxHostLen bounds a host name, in bytes: DNS allows 253.
const MaxHostLen = 253

// HostProblem says why h cannot name a host, or returns "" when it can: a
// host name is 1 to MaxHostLen bytes of UTF-8 with no spaces, control
// characters or '/', and not "." or "..", since it is one segment of the
// /hosts/{host} URLs.
// query.CheckHost phrases the problem as a parameter error.
func HostProblem(h string) string {
	switch {
	case h == "":
		return "empty"
	case len(h) > MaxHostLen:
		return "longer than " + strconv.Itoa(MaxHostLen) + " bytes"
	case !utf8.ValidString(h):
		return "not UTF-8"
	case strings.ContainsFunc(h, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return strconv.Quote(h) + " holds a space, a control character or '/'"
	case h == "." || h == "..":
		return strconv.Quote(h) + " is not a name a URL path can hold"
	}
	return ""
}

// hostOf returns the host a capture's "# hostname" names, with the
// characters HostProblem refuses replaced by '_', or UnknownHost when it
// names none.
func hostOf(m Metadata) string {
	h := strings.Map(func(r rune) rune {
		if r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			return '_'
		}
		return r
	}, strings.TrimSpace(m.Hostname))
	if len(h) > MaxHostLen {
		h = strings.ToValidUTF8(h[:MaxHostLen], "")
	}
	if h == "" {
		return UnknownHost
	}
	if h == "." || h == ".." {
		return strings.Repeat("_", len(h))
	}
	return h
}

// HostTotals is one host's stored captures as the store totals them in
// its database: how many, their samples, how many the host's timeline
// cannot place (no wall clock, or no samples), and over those it can:
// how many have an exact anchor of their own and their wall-clock span
// [Start, End) in Unix ns (0 and 0 when none has), and how many an
// approximate one, whose place depends on the host's other captures (see
// package timeline's Anchor).
type HostTotals struct {
	Host        string
	Captures    int
	Samples     int64
	Unanchored  int
	Exact       int
	Start, End  int64
	Approximate int
}
