package store

import (
	"bytes"
	"fmt"

	"github.com/subsecond/subsecond"
)

// sniffLen is how many decompressed bytes sniff looks at.
const sniffLen = 1024

// sniff refuses input that plainly is not perf script text, naming what it
// looks like instead: empty input, binary data, HTML, XML or JSON. Text it
// cannot place is left to the parser, which rejects it if it yields no
// samples.
func sniff(head []byte) error {
	notPerf := func(what string) error { return fmt.Errorf("%w: %s", subsecond.ErrNotPerf, what) }
	if len(head) == 0 {
		return notPerf("empty")
	}
	if bytes.HasPrefix(head, []byte("PERFILE2")) {
		return notPerf("a perf.data file (binary); send the text of perf script --header -i perf.data")
	}
	ctrl := 0
	for _, c := range head {
		switch {
		case c == 0:
			return notPerf("binary data")
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v':
			ctrl++
		}
	}
	if ctrl*20 > len(head) {
		return notPerf("binary data")
	}
	t := bytes.TrimLeft(head, " \t\r\n\f\v")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	if len(t) == 0 {
		return notPerf("only white space")
	}
	lower := bytes.ToLower(t[:min(len(t), 256)])
	switch {
	case t[0] == '<' && (bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.Contains(lower, []byte("<html")) ||
		bytes.Contains(lower, []byte("<head")) || bytes.Contains(lower, []byte("<body"))):
		return notPerf("looks like HTML")
	case bytes.HasPrefix(lower, []byte("<?xml")), bytes.HasPrefix(lower, []byte("<svg")):
		return notPerf("looks like XML")
	case t[0] == '<':
		return notPerf("looks like HTML or XML markup")
	case t[0] == '{':
		return notPerf("looks like JSON")
	case t[0] == '[' && looksLikeJSONArray(t[1:]):
		return notPerf("looks like JSON")
	}
	return nil
}

// looksLikeJSONArray reports whether rest, the bytes after a leading '[',
// begin the way a JSON array's elements do. A perf comm may itself start
// with '[' but is followed by a name, not by one of these.
func looksLikeJSONArray(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) == 0 {
		return true
	}
	switch c := rest[0]; {
	case c == '{', c == '[', c == '"', c == ']', c == '-', c >= '0' && c <= '9':
		return true
	}
	return bytes.HasPrefix(rest, []byte("true")) || bytes.HasPrefix(rest, []byte("false")) || bytes.HasPrefix(rest, []byte("null"))
}
