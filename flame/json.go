package flame

import (
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// WriteJSON writes g in the JSON shape of the package doc, streaming: the
// arrays are appended to a buffer that goes to w every 32 KiB. Strings are
// escaped as encoding/json escapes them (HTML-safe, invalid UTF-8 as
// U+FFFD), so the output is what json.Marshal would write for the same
// fields, without reflection.
func (g *Graph) WriteJSON(w io.Writer) error {
	e := jsonWriter{w: w, buf: make([]byte, 0, jsonChunk+4096)}
	e.raw(`{"start_ns":`)
	e.int(g.Start)
	e.raw(`,"end_ns":`)
	e.int(g.End)
	e.raw(`,"total":`)
	e.int(g.Total)
	e.raw(`,"strings":`)
	e.strings(g.Strings)
	e.raw(`,"kinds":`)
	e.strings(g.Kinds)
	e.raw(`,"name":`)
	e.int32s(g.Name)
	e.raw(`,"dso":`)
	e.int32s(g.DSO)
	e.raw(`,"kind":`)
	e.int32s(g.Kind)
	e.raw(`,"depth":`)
	e.int32s(g.Depth)
	e.raw(`,"total_n":`)
	e.int64s(g.TotalN)
	e.raw(`,"self_n":`)
	e.int64s(g.SelfN)
	if g.Unrecorded != 0 {
		e.raw(`,"unrecorded_ns":`)
		e.int(g.Unrecorded)
	}
	if g.BaseN != nil {
		e.raw(`,"base_start_ns":`)
		e.int(g.BaseStart)
		e.raw(`,"base_end_ns":`)
		e.int(g.BaseEnd)
		e.raw(`,"base_total":`)
		e.int(g.BaseTotal)
		e.raw(`,"base_n":`)
		e.int64s(g.BaseN)
		e.raw(`,"base_self_n":`)
		e.int64s(g.BaseSelfN)
		if g.BaseUnrecorded != 0 {
			e.raw(`,"base_unrecorded_ns":`)
			e.int(g.BaseUnrecorded)
		}
	}
	e.raw("}\n")
	return e.flush()
}

// jsonChunk is how much jsonWriter gathers before writing.
const jsonChunk = 32 << 10

// jsonWriter appends JSON to a buffer and writes it out in chunks; the
// first write error sticks and ends further work.
type jsonWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *jsonWriter) spill() {
	if len(e.buf) >= jsonChunk && e.err == nil {
		_, e.err = e.w.Write(e.buf)
		e.buf = e.buf[:0]
	}
}

func (e *jsonWriter) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
		e.buf = e.buf[:0]
	}
	return e.err
}

func (e *jsonWriter) raw(s string) { e.buf = append(e.buf, s...) }

func (e *jsonWriter) int(v int64) { e.buf = appendInt(e.buf, v) }

// appendInt appends v in decimal, two digits at a time straight into dst,
// without strconv's intermediate buffer: a flame graph's JSON is mostly
// integers.
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		if v == math.MinInt64 {
			return strconv.AppendInt(dst, v, 10)
		}
		dst = append(dst, '-')
		v = -v
	}
	u := uint64(v)
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	n := 2
	for t := u / 100; t > 0; t /= 10 {
		n++
	}
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	i := l + n - 1
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		dst[i], dst[i-1] = pairs[r+1], pairs[r]
		i -= 2
		u = q
	}
	if u >= 10 {
		dst[i], dst[i-1] = pairs[u*2+1], pairs[u*2]
	} else {
		dst[i] = byte('0' + u)
	}
	return dst
}

// pairs holds "00" to "99".
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859606162636465666768697071727374757677787980818283848586878889" +
	"90919293949596979899"

func (e *jsonWriter) int32s(a []int32) {
	e.buf = append(e.buf, '[')
	for i, v := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendInt(e.buf, int64(v))
		if i&1023 == 1023 {
			e.spill()
		}
	}
	e.buf = append(e.buf, ']')
	e.spill()
}

func (e *jsonWriter) int64s(a []int64) {
	e.buf = append(e.buf, '[')
	for i, v := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendInt(e.buf, v)
		if i&1023 == 1023 {
			e.spill()
		}
	}
	e.buf = append(e.buf, ']')
	e.spill()
}

func (e *jsonWriter) strings(a []string) {
	if a == nil {
		e.raw("null")
		return
	}
	e.buf = append(e.buf, '[')
	for i, s := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendJSONString(e.buf, s)
		e.spill()
	}
	e.buf = append(e.buf, ']')
}

// appendJSONString appends s as a JSON string the way encoding/json writes
// it: '"' and '\\' escaped, \b \f \n \r \t by name, other control
// characters and <, >, & as \u00XX, U+2028 and U+2029 escaped, and each byte
// of invalid UTF-8 as U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
