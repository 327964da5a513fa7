package parser

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/probe"
)

// frameInfo is the parsed text of a stack line after its address, cached by
// that text.
type frameInfo struct {
	id     uint32
	text   string // the text after the address, the cache key
	sym    string
	off    uint64
	dso    string
	inline bool
	kind   subsecond.FrameKind
}

// recentFrame caches the frameInfo last seen at an address. Most stack lines
// repeat an address seen shortly before with the same text, and comparing
// the text is cheaper than hashing it.
type recentFrame struct {
	text string
	fi   *frameInfo
}

// recentBits is the size of the recent-frame and field caches, as a power
// of two; text held in memory gets smaller ones when it is short (see
// cacheBits).
const recentBits = 14

// cacheBits returns the size of the caches, as a power of two, for an
// input of n bytes, or of unknown size when n < 0: one slot per 32 bytes,
// at least 256 and at most 1<<recentBits.
func cacheBits(n int) uint8 {
	if n < 0 {
		return recentBits
	}
	return uint8(min(max(bits.Len(uint(n)/32), 8), recentBits))
}

// fieldFrame caches, by the address field of a stack line as perf prints
// it (16 columns, read as two words), the address it holds and the
// frameInfo last seen there, for text read in place: a line found there
// again needs its address neither checked nor converted.
type fieldFrame struct {
	w0, w1 uint64
	addr   uint64
	fi     *frameInfo
}

// fieldSet returns the set of the field cache where the field (w0, w1)
// lies if it is cached: two slots, the one used more recently first, in
// one cache line. Direct-mapped, the cache missed 49,000 of the real 27 s
// capture's 643,000 stack lines (31,500 distinct fields in 16,384 slots);
// in sets of two, 40,300.
func (s *Scanner) fieldSet(w0, w1 uint64) *[2]fieldFrame {
	if s.fields == nil {
		s.fields = probe.Make[fieldFrame](1 << s.cacheBits)
	}
	i := ((w0 ^ w1*0x9E3779B97F4A7C15) * 0xC2B2AE3D27D4EB4F) >> (64 - s.cacheBits) &^ 1
	return (*[2]fieldFrame)(s.fields[i : i+2])
}

// frameLine parses a stack line ("address symbol+0xoff (dso)") into the open
// record and reports whether the line was one.
func (s *Scanner) frameLine(line []byte) bool {
	addr, rest, ok := splitFrame(line)
	if ok {
		s.putFrame(addr, s.frameInfo(addr, rest))
	}
	return ok
}

// putFrame adds the frame at addr with text fi to the open record.
func (s *Scanner) putFrame(addr uint64, fi *frameInfo) {
	fr := s.cur.Frames
	if len(fr) == cap(fr) {
		fr = append(fr, subsecond.Frame{})[:len(fr)]
	}
	fillFrame(&fr[:len(fr)+1][len(fr)], addr, fi)
	s.lastFrame, s.last = fi, true
	if !s.bad {
		// The length grows only if the record is being kept.
		s.cur.Frames = fr[:len(fr)+1]
		s.curIDs = append(s.curIDs, fi.id)
	}
}

// parseFrame parses a stack line into *f and returns the ID of its text.
func (s *Scanner) parseFrame(line []byte, f *subsecond.Frame) (uint32, bool) {
	addr, rest, ok := splitFrame(line)
	if !ok {
		return 0, false
	}
	fi := s.frameInfo(addr, rest)
	s.lastFrame = fi
	fillFrame(f, addr, fi)
	return fi.id, true
}

// splitFrame splits a stack line into its hexadecimal address and the
// text after it, both trimmed.
func splitFrame(line []byte) (uint64, []byte, bool) {
	i := 0
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	j := i
	var addr uint64
	for ; j < len(line); j++ {
		d := hexval[line[j]]
		if d < 0 {
			break
		}
		if j-i == 16 {
			return 0, nil, false
		}
		addr = addr<<4 | uint64(d)
	}
	if j == i || (j < len(line) && !isSpace(line[j])) {
		return 0, nil, false
	}
	return addr, trimSpace(line[j:]), true
}

// paddedAddr parses the address field of a stack line as perf script
// prints it, right-aligned in 16 columns: spaces, then 1 to 16 hexadecimal
// digits. It reads the field eight bytes at a time.
func paddedAddr(field []byte) (uint64, bool) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	w0, w1 := binary.LittleEndian.Uint64(field[:8]), binary.LittleEndian.Uint64(field[8:16])
	// The leading spaces become '0' digits; at least one digit must follow.
	if z := w0 ^ ones*' '; z != 0 {
		w0 |= (uint64(1)<<(bits.TrailingZeros64(z)&^7) - 1) & (ones * 0x10)
	} else {
		z = w1 ^ ones*' '
		if z>>56 == 0 {
			return 0, false // no digit at all
		}
		w0 = ones * '0'
		w1 |= (uint64(1)<<(bits.TrailingZeros64(z)&^7) - 1) & (ones * 0x10)
	}
	if (w0|w1)&high != 0 || hexDigits(w0)&hexDigits(w1) != high {
		return 0, false
	}
	return uint64(nibbles(w0))<<32 | uint64(nibbles(w1)), true
}

// hexDigits returns w with the high bit of each byte set that holds a
// hexadecimal digit, the others clear. No byte of w may have its high bit
// set: then no sum below carries from one byte into the next.
func hexDigits(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	// A byte b lies in [lo, hi] when b+0x80-lo has its high bit set and
	// b+0x7f-hi has not. Setting bit 5 maps 'A'-'F' onto 'a'-'f', and
	// nothing else onto them.
	digit := (w + ones*(0x80-'0')) &^ (w + ones*(0x7f-'9'))
	l := w | ones*0x20
	letter := (l + ones*(0x80-'a')) &^ (l + ones*(0x7f-'f'))
	return (digit | letter) & high
}

// nibbles returns the value of the eight hexadecimal digits in w, the
// first (most significant) in its lowest byte.
func nibbles(w uint64) uint32 {
	const ones = 0x0101010101010101
	// '0'-'9' are 0x30-0x39; 'a'-'f' and 'A'-'F' have bit 6 set and 1-6
	// in their low nibble.
	w = w&(ones*0x0f) + (w>>6)&ones*9
	w = bits.ReverseBytes64(w)
	w = (w | w>>4) & 0x00ff00ff00ff00ff
	w = (w | w>>8) & 0x0000ffff0000ffff
	return uint32(w | w>>16)
}

// frameInfo returns the parsed text of the frame at addr whose text after
// the address is rest.
func (s *Scanner) frameInfo(addr uint64, rest []byte) *frameInfo {
	rc := s.recentAt(addr)
	fi := rc.fi
	if fi == nil || rc.text != string(rest) {
		fi = s.frames[string(rest)]
		if fi == nil {
			fi = s.frameText(rest)
		}
		rc.fi = fi
		rc.text = fi.text
	}
	return fi
}

// recentAt returns the slot of the recent-frame cache for addr.
func (s *Scanner) recentAt(addr uint64) *recentFrame {
	if s.recent == nil {
		s.recent = probe.Make[recentFrame](1 << s.cacheBits)
	}
	return &s.recent[(addr*0x9E3779B97F4A7C15)>>(64-s.cacheBits)]
}

// fillFrame sets *f to the frame at addr with text fi. Field by field: a
// composite literal is built on the stack and copied, and the copy's wide
// loads stall on its narrow stores.
func fillFrame(f *subsecond.Frame, addr uint64, fi *frameInfo) {
	f.Addr, f.Symbol, f.Offset, f.DSO, f.SrcLine = addr, fi.sym, fi.off, fi.dso, ""
	f.Inline, f.Kind = fi.inline, frameKind(fi, addr)
}

// paddedFrame adds the frame of a stack line as perf prints it, a tab, the
// address in 16 columns (see paddedAddr), a space and the text, to the
// open record, and reports whether the line was one.
func (s *Scanner) paddedFrame(line []byte) bool {
	field := line[1:17]
	addr, ok := paddedAddr(field)
	if !ok {
		return false
	}
	fi := s.frameInfo(addr, trimSpace(line[18:]))
	s.putFrame(addr, fi)
	if s.r == nil {
		w0, w1 := binary.LittleEndian.Uint64(field[:8]), binary.LittleEndian.Uint64(field[8:])
		set := s.fieldSet(w0, w1)
		if set[0].w0 != w0 || set[0].w1 != w1 {
			set[1] = set[0] // the field's older slot, if set[1] is that, goes
		}
		set[0] = fieldFrame{w0: w0, w1: w1, addr: addr, fi: fi}
	}
	return true
}

// stackLineInPlace consumes the next line of text held in memory (see
// ResetBytes) when it is a stack line of the open record as perf prints
// it, with the address field and the text last met together. It compares
// the field and the text where they lie, and so finds the end of the line
// without searching for it; any other line is left to readLine and
// handle, which would read this one the same way (paddedFrame).
func (s *Scanner) stackLineInPlace() bool {
	if !s.framesFirst() || s.fields == nil {
		return false
	}
	rest := s.text[s.pos:]
	if len(rest) < 19 || rest[0] != '\t' || rest[17] != ' ' {
		return false
	}
	w0, w1 := binary.LittleEndian.Uint64(rest[1:9]), binary.LittleEndian.Uint64(rest[9:17])
	set := s.fieldSet(w0, w1)
	e := &set[0]
	if e.w0 != w0 || e.w1 != w1 {
		e = &set[1]
	}
	if e.w0 != w0 || e.w1 != w1 || e.fi == nil {
		return false
	}
	// The text is trimmed and holds no line ending, so the line is this
	// one when the text is followed by its '\n'. A text ending in '\r' is
	// left to readLine, which takes "\r\n" for the line ending.
	fi := e.fi
	end := 18 + len(fi.text)
	if end >= len(rest) || end > MaxLine || rest[end] != '\n' || rest[end-1] == '\r' || string(rest[18:end]) != fi.text {
		return false
	}
	s.pos += end + 1
	s.n += int64(end + 1)
	s.line++
	s.putFrame(e.addr, fi)
	return true
}

// frameKind returns the kind of a frame with text fi at addr: any frame at
// a kernel-half address is kernel code, unless it is JIT code.
func frameKind(fi *frameInfo, addr uint64) subsecond.FrameKind {
	if addr >= kernelHalf && fi.kind != subsecond.KindJIT {
		return subsecond.KindKernel
	}
	return fi.kind
}

// setSrcLine gives the open record's last frame its source line. A source
// line marked "(inlined)" makes the frame an inlined one: perf --inline
// prints an inlined function as a frame without a DSO whose source line
// carries the marker, or, without -F +srcline, as "sym (inlined)". Both
// spellings yield the same frame, with its own ID.
func (s *Scanner) setSrcLine(src []byte, inlined bool) {
	n := len(s.cur.Frames) - 1
	f := &s.cur.Frames[n]
	f.SrcLine = s.intern(src)
	if !inlined || f.Inline || s.lastFrame == nil {
		return
	}
	fi := s.inlinedFrame(s.lastFrame)
	f.Inline, f.Kind = true, frameKind(fi, f.Addr)
	s.curIDs[n] = fi.id
}

// inlinedFrame returns the frameInfo of fi's text marked as inlined.
func (s *Scanner) inlinedFrame(fi *frameInfo) *frameInfo {
	if fi.dso == "" {
		// The text perf prints for this frame without -F +srcline.
		text := fi.text + " (inlined)"
		if g := s.frames[text]; g != nil {
			return g
		}
		return s.frameText([]byte(text))
	}
	// perf prints no DSO for an inlined frame; should one come with a DSO,
	// it is cached under a key no stack line can hold.
	key := fi.text + "\n(inlined)"
	if g := s.frames[key]; g != nil {
		return g
	}
	g := &frameInfo{id: uint32(len(s.frames)), text: key, sym: fi.sym, off: fi.off, dso: fi.dso, inline: true,
		kind: Kind(fi.sym, fi.dso, true)}
	s.frames[key] = g
	return g
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// frameText parses and caches the text of a stack line after the address.
func (s *Scanner) frameText(rest []byte) *frameInfo {
	if len(s.slab) == 0 {
		s.slab = make([]frameInfo, 256)
	}
	fi := &s.slab[0]
	s.slab = s.slab[1:]
	fi.id = uint32(len(s.frames))
	fi.text = string(rest)
	rest = []byte(fi.text) // parse the copy: substrings of it need no allocation
	sym := rest
	if n := len(rest); n > 0 && rest[n-1] == ')' {
		// The DSO is the last parenthesised group; it may hold parentheses
		// itself ("/x/y (deleted)").
		depth := 0
		for k := n - 1; k >= 0; k-- {
			switch rest[k] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if k == 0 || isSpace(rest[k-1]) {
					fi.dso = s.intern(rest[k+1 : n-1])
					sym = trimSpace(rest[:k])
				}
				break
			}
		}
	}
	if fi.dso == "inlined" {
		fi.dso, fi.inline = "", true
	}
	sym, fi.off = splitOffset(sym)
	fi.sym = fi.text[:len(sym)] // rest is trimmed, so the symbol is a prefix of it
	if fi.dso != s.lastDSO || !s.lastDSOSet {
		s.lastDSO, s.lastDSOSet = fi.dso, true
		s.lastDSOKind = Kind("", fi.dso, false)
	}
	fi.kind = s.lastDSOKind
	if fi.kind == subsecond.KindUser {
		fi.kind = Kind(fi.sym, fi.dso, fi.inline)
	}
	s.frames[fi.text] = fi
	return fi
}

// splitOffset splits a trailing "+0x…" hexadecimal offset off sym.
func splitOffset(sym []byte) ([]byte, uint64) {
	k := len(sym)
	for k > 0 && hexval[sym[k-1]] >= 0 {
		k--
	}
	digits := len(sym) - k
	if digits == 0 || digits > 16 || k < 3 || sym[k-1] != 'x' || sym[k-2] != '0' || sym[k-3] != '+' {
		return sym, 0
	}
	off, err := strconv.ParseUint(string(sym[k:]), 16, 64)
	if err != nil {
		return sym, 0
	}
	return sym[:k-3], off
}

// Kind classifies a frame by its symbol, DSO and inline marker: kernel DSOs
// ([kernel.kallsyms], [kernel.*], vmlinux*, *.ko, bracketed kernel modules),
// JIT code (/tmp/perf-N.map, jitted-*.so, [JIT]…), inlined frames, unknown
// frames ([unknown] symbol without a known DSO), and user code. The Scanner
// also counts any frame at a kernel-half address as kernel.
func Kind(sym, dso string, inline bool) subsecond.FrameKind {
	d := strings.TrimSuffix(dso, " (deleted)")
	base := d[strings.LastIndexByte(d, '/')+1:]
	switch {
	case strings.HasPrefix(d, "[kernel."), strings.HasPrefix(base, "vmlinux"),
		strings.HasSuffix(base, ".ko"), strings.Contains(base, ".ko."):
		return subsecond.KindKernel
	case strings.HasPrefix(d, "[JIT]"), isPerfMap(base),
		strings.HasPrefix(base, "jitted-") && strings.HasSuffix(base, ".so"):
		return subsecond.KindJIT
	case len(d) > 2 && d[0] == '[' && d[len(d)-1] == ']' && !userSpecial(d):
		return subsecond.KindKernel // a kernel module, e.g. [nf_conntrack]
	case inline:
		return subsecond.KindInlined
	case sym == "[unknown]" && (d == "" || d == "[unknown]"):
		return subsecond.KindUnknown
	}
	return subsecond.KindUser
}

func isPerfMap(base string) bool {
	digits, ok := strings.CutPrefix(base, "perf-")
	if !ok {
		return false
	}
	digits, ok = strings.CutSuffix(digits, ".map")
	if !ok || digits == "" {
		return false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// userSpecial reports whether a bracketed DSO name is one perf uses for
// user-space mappings.
func userSpecial(d string) bool {
	switch d {
	case "[unknown]", "[vdso]", "[vsyscall]", "[vvar]", "[vectors]", "[heap]", "[stack]", "[uprobes]", "[sigpage]":
		return true
	}
	return strings.HasPrefix(d, "[anon") || strings.HasPrefix(d, "[stack:")
}
