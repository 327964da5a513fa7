package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Captures are hostile input: a hostname, command name or symbol can hold
// terminal escape sequences (retitling the window, recolouring the rest of
// the session, worse on some terminals) or be a megabyte long. The text
// outputs meant for a person pass through termWriter, which shows control
// characters as escapes, and clip long names; the data formats (JSON, CSV,
// folded stacks, SVG, pprof) keep their own escaping and are left whole.

// Widths, in characters, at which text output clips names.
const (
	nameWidth  = 80  // profile names, file names, commands, functions, header values
	stackWidth = 160 // a hot spot's top stack
)

// termWriter returns a writer to w that writes every control character
// (C0 but newline and tab, DEL, C1), bidirectional-text override and byte
// that is not UTF-8 as a visible escape such as \x1b or \u202e.
func termWriter(w io.Writer) io.Writer { return &escaper{w: w} }

type escaper struct {
	w   io.Writer
	buf []byte
}

func (e *escaper) Write(p []byte) (int, error) {
	e.buf = appendEscaped(e.buf[:0], p)
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// appendEscaped appends p to dst with its hostile characters escaped.
func appendEscaped(dst, p []byte) []byte {
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = fmt.Appendf(dst, `\x%02x`, p[0])
		case r == '\n' || r == '\t':
			dst = append(dst, p[0])
		case r < 0x20 || r == 0x7f:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, p[:size]...)
		}
		p = p[size:]
	}
	return dst
}

// clip returns s cut to at most n characters, ending in "…" when cut, with
// its hostile characters escaped (so that a tab cannot break a table).
func clip(s string, n int) string {
	b := appendEscaped(nil, []byte(s))
	out := strings.ReplaceAll(string(b), "\t", `\t`)
	if utf8.RuneCountInString(out) <= n {
		return out
	}
	i := 0
	for k := 0; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(out[i:])
		i += size
	}
	return out[:i] + "…"
}
