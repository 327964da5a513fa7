package subsecond

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxHostLen bounds a host name, in bytes: DNS allows 253.
const MaxHostLen = 253

// CheckHost reports whether h can name a host: 1 to MaxHostLen bytes of
// UTF-8 with no spaces, control characters or '/', since a host name is one
// segment of the /hosts/{host} URLs. The error is a *ParamError for host.
func CheckHost(h string) error {
	switch {
	case h == "":
		return Invalidf("host", "empty")
	case len(h) > MaxHostLen:
		return Invalidf("host", "longer than %d bytes", MaxHostLen)
	case !utf8.ValidString(h):
		return Invalidf("host", "not UTF-8")
	case strings.ContainsFunc(h, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return Invalidf("host", "%q holds a space, a control character or '/'", h)
	}
	return nil
}

// hostOf returns the host a capture's "# hostname" names, with the
// characters CheckHost refuses replaced by '_', or UnknownHost when it
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
	return h
}
