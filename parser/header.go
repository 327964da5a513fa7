package parser

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	"github.com/subsecond/subsecond"
)

// maxCommTokens bounds how many words a command name may have. Linux keeps
// at most 15 bytes of it, so 8 words is already generous.
const maxCommTokens = 8

// header is a parsed sample header line.
type header struct {
	comm     string
	pid, tid int32
	cpu      int32
	time     int64
	tod      int64 // the tod field in Unix nanoseconds, 0 when absent
	period   uint64
	event    string
	cgroup   string          // the cgroup path printed after the event (perf script -F +cgroup), if any
	frame    subsecond.Frame // the frame printed on the header line, if any
	frameID  uint32
	hasFrame bool
	payload  bool // text after the event that is not a frame (tracepoint data)
	bare     bool // no event and nothing after the pid, CPU or time: a call chain must follow
}

// begin opens a record for header h.
func (s *Scanner) begin(h *header) {
	c := s.cur
	c.Comm, c.PID, c.TID, c.CPU = h.comm, h.pid, h.tid, h.cpu
	c.Time, c.Period, c.Event, c.Cgroup, c.Line = h.time, h.period, h.event, h.cgroup, s.line
	if h.tod != 0 && h.time != subsecond.NoTime && s.meta.TODOffsetNS == 0 {
		s.meta.TODOffsetNS = h.tod - h.time
	}
	c.Frames = c.Frames[:0]
	s.curIDs = s.curIDs[:0]
	if h.hasFrame {
		c.Frames = append(c.Frames, h.frame)
		s.curIDs = append(s.curIDs, h.frameID)
	}
	s.open, s.bad, s.single, s.payload, s.last, s.bare = true, false, h.hasFrame, h.payload, false, h.bare
}

// parseHeader parses a sample header line into h and reports whether the line
// is one. The fields after the command name are recognisable from the right
// of it: an optional "pid/tid" or "tid", an optional "[cpu]", an optional
// "time:", an optional period, then "event:" (at least one of pid, CPU and
// time must be present). The command name is everything before them, so it
// may hold spaces and digits.
//
// A field list without the event (perf script -F comm,pid,ip,sym,dso) ends
// the header after the pid, CPU or time: either at the end of the line (a
// call chain follows) or before the sample's one frame, which must then
// name its DSO. Such a header is tried only when no reading with an event
// fits, and the sample has an empty event name.
func (s *Scanner) parseHeader(line []byte, h *header) bool {
	toks := s.toks[:0]
	for i := 0; i < len(line) && len(toks) < maxCommTokens+6; {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		start := i
		i = nextSpace(line, i)
		toks = append(toks, span{start, i})
	}
	s.toks = toks
	for _, bare := range [...]bool{false, true} {
		if bare && s.evented {
			// perf prints every header of a capture with the same
			// fields, so once one had an event, all must.
			break
		}
		for a := 0; a < len(toks) && a <= maxCommTokens; a++ {
			if !fieldStart(line[toks[a].start]) {
				continue // headerTail would find no pid, CPU or time there
			}
			if s.headerTail(line, toks, a, h, bare) {
				if a > 0 {
					comm := line[toks[0].start:toks[a-1].end]
					if s.lastComm != string(comm) {
						s.lastComm = s.intern(comm)
					}
					h.comm = s.lastComm
				} else {
					h.comm = ""
				}
				return true
			}
		}
	}
	return false
}

// fieldStart reports whether a token beginning with c may be the pid/tid,
// the [cpu], the date of the tod field or the time, one of which must open
// the fields after the command name.
func fieldStart(c byte) bool { return c >= '0' && c <= '9' || c == '-' || c == '[' }

// nextSpace returns the index of the first space or tab in b at i or after
// it, or len(b); it reads eight bytes at a time.
func nextSpace(b []byte, i int) int {
	const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte of x is zero when its high bit in ^((x&low7 + low7) | x | low7)
		// is set; no sum carries from one byte into the next.
		sp, tab := w^ones*' ', w^ones*'\t'
		m := ^((sp&low7 + low7) | sp | low7) | ^((tab&low7 + low7) | tab | low7)
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !isSpace(b[i]) {
		i++
	}
	return i
}

// headerTail parses the fields from token a on; bare reads a header without
// period and event.
func (s *Scanner) headerTail(line []byte, toks []span, a int, h *header, bare bool) bool {
	tok := func(i int) []byte { return line[toks[i].start:toks[i].end] }
	*h = header{pid: subsecond.Unknown, tid: subsecond.Unknown, cpu: subsecond.Unknown, time: subsecond.NoTime}
	i, anchored := a, false
	if i < len(toks) && parsePIDTID(tok(i), h) {
		i, anchored = i+1, true
	}
	if i < len(toks) && parseCPU(tok(i), h) {
		i, anchored = i+1, true
	}
	if i+1 < len(toks) {
		if tod, ok := parseTOD(tok(i), tok(i+1)); ok {
			h.tod = tod
			i += 2
		}
	}
	if i < len(toks) && parseTime(tok(i), h) {
		i, anchored = i+1, true
	}
	if !anchored {
		return false
	}
	if bare {
		rest := trimSpace(line[toks[i-1].end:])
		if len(rest) == 0 {
			h.bare = true
			return true
		}
		if rest[len(rest)-1] != ')' || hexval[rest[0]] < 0 {
			return false
		}
		id, ok := s.parseFrame(rest, &h.frame)
		if ok && h.frame.DSO != "" {
			h.frameID, h.hasFrame = id, true
		}
		return h.hasFrame
	}
	if i < len(toks) {
		if p, ok := parseUint(tok(i)); ok {
			h.period = p
			i++
		}
	}
	if i >= len(toks) || !isEvent(tok(i)) {
		return false
	}
	s.evented = true
	if ev := eventName(tok(i)); s.lastEvent != string(ev) {
		s.lastEvent = s.intern(ev)
	}
	h.event = s.lastEvent
	rest := trimSpace(line[toks[i].end:])
	if len(rest) > 0 && rest[0] == '/' {
		// perf script -F +cgroup prints the sample's cgroup path after
		// the event (and any frame after it).
		end := nextSpace(rest, 0)
		h.cgroup, rest = s.intern(rest[:end]), trimSpace(rest[end:])
	}
	if len(rest) > 0 {
		if rest[len(rest)-1] == ')' && hexval[rest[0]] >= 0 {
			if id, ok := s.parseFrame(rest, &h.frame); ok {
				h.frameID, h.hasFrame = id, true
				return true
			}
		}
		h.payload = true
	}
	return true
}

func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

func parseInt32(b []byte) (int32, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 10 {
		return 0, false
	}
	v, ok := parseUint(b)
	if !ok || v > math.MaxInt32 {
		return 0, false
	}
	if neg {
		return -int32(v), true
	}
	return int32(v), true
}

// parsePIDTID parses "pid/tid" or a lone "tid", as perf prints them.
func parsePIDTID(b []byte, h *header) bool {
	for k, c := range b {
		if c == '/' {
			pid, ok1 := parseInt32(b[:k])
			tid, ok2 := parseInt32(b[k+1:])
			if !ok1 || !ok2 {
				return false
			}
			h.pid, h.tid = pid, tid
			return true
		}
	}
	tid, ok := parseInt32(b)
	if ok {
		h.tid = tid
	}
	return ok
}

// parseCPU parses "[cpu]".
func parseCPU(b []byte, h *header) bool {
	if len(b) < 3 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	cpu, ok := parseInt32(b[1 : len(b)-1])
	if !ok || cpu < 0 {
		return false
	}
	h.cpu = cpu
	return true
}

// parseTime parses "seconds.fraction:" into integer nanoseconds (see
// parseSeconds).
func parseTime(b []byte, h *header) bool {
	if len(b) < 2 || b[len(b)-1] != ':' {
		return false
	}
	t, ok := parseSeconds(b[:len(b)-1])
	if ok {
		h.time = t
	}
	return ok
}

// parseSeconds parses "seconds.fraction" into integer nanoseconds, exactly:
// 6 decimals (the default) and 9 (--ns) both convert without rounding.
// Digits beyond the ninth are dropped.
func parseSeconds(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	dot := -1
	for k, c := range b {
		if c == '.' {
			dot = k
			break
		}
	}
	secs, frac := b, []byte(nil)
	if dot >= 0 {
		secs, frac = b[:dot], b[dot+1:]
		if len(frac) == 0 {
			return 0, false
		}
	}
	sec, ok := parseUint(secs)
	if !ok || sec > math.MaxInt64/1_000_000_000-1 {
		return 0, false
	}
	var ns uint64
	for k := 0; k < 9; k++ {
		ns *= 10
		if k < len(frac) {
			c := frac[k]
			if c < '0' || c > '9' {
				return 0, false
			}
			ns += uint64(c - '0')
		}
	}
	for _, c := range frac[min(len(frac), 9):] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	return int64(sec)*1e9 + int64(ns), true
}

// parseTOD parses the tod field of perf script -F +tod, a date and a time of
// day ("2026-11-30" "17:11:15.184852"), as UTC into Unix nanoseconds.
func parseTOD(date, clock []byte) (int64, bool) {
	if len(date) != 10 || date[4] != '-' || date[7] != '-' || len(clock) < 8 || clock[2] != ':' || clock[5] != ':' {
		return 0, false
	}
	num := func(b []byte) int {
		v := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d := num(date[:4]), num(date[5:7]), num(date[8:])
	hh, mm := num(clock[:2]), num(clock[3:5])
	sec, ok := parseSeconds(clock[6:])
	if !ok || y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || sec >= 61e9 {
		return 0, false
	}
	return time.Date(y, time.Month(mo), d, hh, mm, 0, 0, time.UTC).UnixNano() + sec, true
}

// isEvent reports whether b looks like "event:" ("cycles:", "cpu-clock:ppp:",
// "sched:sched_switch:").
func isEvent(b []byte) bool {
	if len(b) < 2 || b[len(b)-1] != ':' {
		return false
	}
	c := b[0]
	return !(c >= '0' && c <= '9') && c != '[' && c != '(' && c != ':' && c != '-'
}

// eventName strips the trailing colon and a modifier suffix such as ":ppp",
// ":u" or ":uhH" from an event token.
func eventName(b []byte) []byte {
	b = b[:len(b)-1]
	for k := len(b) - 1; k > 0; k-- {
		if b[k] != ':' {
			continue
		}
		mod := b[k+1:]
		if len(mod) == 0 {
			return b[:k]
		}
		for _, c := range mod {
			switch c {
			case 'u', 'k', 'h', 'H', 'G', 'p', 'P', 'S', 'D', 'I', 'W', 'e', 'b':
			default:
				return b
			}
		}
		return b[:k]
	}
	return b
}

// EventName returns the event name perf would print as tok, without its
// modifiers: "cycles:u" and "cycles:u:" give "cycles", "sched:sched_switch"
// stays as it is. Use it to compare a user's event choice with
// Sample.Event.
func EventName(tok string) string {
	if tok == "" {
		return ""
	}
	if tok[len(tok)-1] != ':' {
		tok += ":"
	}
	return string(eventName([]byte(tok)))
}
