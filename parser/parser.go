// Package parser reads the text that `perf script` prints, one sample at a
// time, without holding the input in memory.
//
//	sc := parser.NewScanner(r, parser.Options{})
//	for sc.Scan() {
//		s := sc.Sample() // valid until the next Scan
//		_ = s
//	}
//	if err := sc.Err(); err != nil { … }
//
// A sample is a header line (comm, pid/tid, CPU, time, period, event),
// optionally followed by its call chain, one frame per line, and a blank
// line. The header is read from the fields perf prints after the command
// name — pid/tid, [cpu], time:, period, event: — so a command name keeps its
// spaces and digits ("job 42 x", "V8 WorkerThread"). Samples recorded
// without call chains carry their one frame on the header line. A field
// list without time and event (-F comm,pid,ip,sym,dso) yields samples with
// Time NoTime and an empty Event. A source line (-F +srcline) belongs to
// the frame above it; one marked "(inlined)" (--inline) makes that frame
// inlined. Header comments ('#' lines, as `perf script --header` prints
// them) become Metadata; PERF_RECORD_* side-band lines are skipped.
//
// Strings are shared, not copied per sample: DSOs, command and event names
// are interned, and a symbol is a substring of the cached text of its stack
// line. Holding many samples therefore costs memory in proportion to the
// distinct lines and names, not to the input.
package parser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
)

// Options configure a Scanner.
type Options struct {
	// Strict makes the first malformed record stop the scan with an error
	// naming its line. Otherwise (the default) bad records are skipped and
	// counted, and the first MaxWarnings messages are kept.
	Strict      bool
	MaxWarnings int // 0 means 20
	// After, when set, is the State of a Scanner that read the text
	// before this one's input (from the start of the input, its first
	// capture's header included): this Scanner then treats a later
	// capture's header as one Scanner reading all of the text would, so
	// that an input cut at record boundaries can be scanned in pieces.
	After *State
}

// State is what a Scanner has learnt of its input that the reading of the
// text after it depends on: the first capture's hostname and sampling rate,
// and whether samples were seen. See Options.After.
type State struct {
	host, rate string
	samples    bool
}

// State returns the Scanner's State after the text read so far.
func (s *Scanner) State() State {
	return State{host: s.firstHost, rate: s.firstRate, samples: s.samples > 0 || s.prior}
}

// MaxLine is the longest line the Scanner accepts, in bytes. A longer line is
// malformed.
const MaxLine = 1 << 20

// bufSize is the read buffer. Longer lines are gathered in a separate
// buffer, up to MaxLine.
const bufSize = 64 << 10

// maxHeaderLines bounds how many '#' lines Metadata keeps.
const maxHeaderLines = 2048

// kernelHalf is where the kernel half of a 64-bit address space begins on
// x86-64 and arm64.
const kernelHalf = 0xffff800000000000

// SyntaxError describes a malformed line. It wraps subsecond.ErrInvalid.
type SyntaxError struct {
	Line int    // 1-based line number
	Msg  string // what was expected and what was found
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Unwrap returns subsecond.ErrInvalid.
func (e *SyntaxError) Unwrap() error { return subsecond.ErrInvalid }

type span struct{ start, end int }

// Scanner streams samples out of perf script text.
type Scanner struct {
	r    *bufio.Reader // the input, unless it is text held in memory
	text []byte        // the input held in memory (ResetBytes), when r is nil
	pos  int           // how much of text has been read
	opt  Options
	long []byte // a line longer than the read buffer
	line int    // lines read
	n    int64  // bytes read
	eof  bool

	cur, out       *subsecond.Sample
	curIDs, outIDs []uint32 // FrameIDs of cur and out
	open           bool     // cur holds a record whose end has not been seen
	bad            bool     // the open record is malformed and will be dropped
	single         bool     // the open record's frame was on its header line
	payload        bool     // the open record's header carried tracepoint text
	last           bool     // the previous line was a stack frame of the open record
	bare           bool     // the open record's header had no event; it needs a call chain
	evented        bool     // a header with an event was seen: headers without one are not tried
	samples        int64

	texts     // kept by Reset
	toks      []span
	meta      subsecond.Metadata
	lastFrame *frameInfo // the text of the latest stack line parsed

	prior     bool         // samples came before the input (Options.After)
	firstHost string       // the first capture's "# hostname"
	firstRate string       // the first capture's sampling rate (see eventRate)
	block     captureBlock // a later capture's header, when the input concatenates several

	nwarn int
	warns []subsecond.Warning
	err   error
}

// texts is what a Scanner has learnt of the names and stack-line texts it
// has read, which Reset keeps.
type texts struct {
	strs      map[string]string
	frames    map[string]*frameInfo
	recent    []recentFrame // direct-mapped by address, in front of frames
	fields    []fieldFrame  // direct-mapped by address field, in front of recent
	cacheBits uint8         // the size of recent and fields, as a power of two

	lastComm, lastEvent string // the latest interned command and event names
	lastDSO             string // the DSO of the latest new stack-line text
	lastDSOSet          bool
	lastDSOKind         subsecond.FrameKind
	slab                []frameInfo // frameInfo allocated in blocks
}

// maxKeptFrames is how many distinct stack-line texts (and how many
// distinct names) Reset keeps; past it Reset forgets them, so that a Scanner reused for many inputs holds no
// more than one input's worth of them.
const maxKeptFrames = 1 << 18

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader, opt Options) *Scanner {
	s := &Scanner{}
	s.Reset(r, opt)
	return s
}

// Reset makes s read r from its start with options opt, as a Scanner
// returned by NewScanner(r, opt) would, with one difference: s keeps the
// stack-line texts it has met, so that a text read again keeps its frame
// ID (see FrameIDs) and is not parsed again. Reset reports whether it kept
// them: it forgets them, and IDs start again from 0, when there are more
// than 262,144. Samples, metadata, warnings and errors of the previous
// input are not carried over, and strings handed out before stay valid.
func (s *Scanner) Reset(r io.Reader, opt Options) bool {
	br := s.r
	if br == nil {
		br = bufio.NewReaderSize(r, bufSize)
	} else {
		br.Reset(r)
	}
	kept := s.reset(opt, -1)
	s.r = br
	return kept
}

// ResetBytes is Reset for text held in memory: s reads text in place,
// without copying it into a buffer of its own, and text must not change
// until the scan ends. Nothing s hands out refers to text.
func (s *Scanner) ResetBytes(text []byte, opt Options) bool {
	kept := s.reset(opt, len(text))
	s.text = text
	return kept
}

// reset clears s for a new input of n bytes (n < 0: unknown), keeping
// s.texts (unless they grew past maxKeptFrames) and the buffers it can
// reuse, and reports whether it kept the texts.
func (s *Scanner) reset(opt Options, n int) bool {
	if opt.MaxWarnings <= 0 {
		opt.MaxWarnings = 20
	}
	t := s.texts
	kept := t.frames != nil && len(t.frames) <= maxKeptFrames && len(t.strs) <= maxKeptFrames
	if !kept {
		t = texts{strs: make(map[string]string, 64), frames: make(map[string]*frameInfo, 1<<10)}
	}
	if b := cacheBits(n); b > t.cacheBits {
		// Caches sized for the input, made when first used.
		t.recent, t.fields, t.cacheBits = nil, nil, b
	}
	cur, out := s.cur, s.out
	if cur == nil {
		cur, out = &subsecond.Sample{}, &subsecond.Sample{}
	}
	*s = Scanner{
		opt:    opt,
		long:   s.long[:0],
		cur:    cur,
		out:    out,
		curIDs: s.curIDs[:0],
		outIDs: s.outIDs[:0],
		texts:  t,
		toks:   s.toks[:0],
	}
	if s.toks == nil {
		s.toks = make([]span, 0, 32)
	}
	if st := opt.After; st != nil {
		s.firstHost, s.firstRate, s.prior = st.host, st.rate, st.samples
		s.meta.Hostname = st.host
	}
	return kept
}

// Scan advances to the next sample and reports whether there is one.
func (s *Scanner) Scan() bool {
	for s.err == nil {
		if s.r == nil && s.stackLineInPlace() {
			continue
		}
		line, ok := s.readLine()
		if !ok {
			if s.err == nil && s.end() {
				return true
			}
			s.finish()
			return false
		}
		if s.handle(line) {
			return true
		}
	}
	return false
}

// Sample returns the current sample. It and its Frames slice are reused by
// the next Scan; its strings stay valid.
func (s *Scanner) Sample() *subsecond.Sample { return s.out }

// Err returns the error that stopped the scan, nil at a clean end of input.
// In strict mode a malformed line yields a *SyntaxError. In tolerant mode an
// input with bad lines and no sample at all yields an error wrapping
// subsecond.ErrNotPerf.
func (s *Scanner) Err() error { return s.err }

// Metadata returns the capture metadata from the '#' header lines read so far.
func (s *Scanner) Metadata() subsecond.Metadata { return s.meta }

// Warnings returns how many bad records were skipped and the first few.
func (s *Scanner) Warnings() (int, []subsecond.Warning) { return s.nwarn, s.warns }

// FrameIDs returns, parallel to Sample().Frames, a dense identity of each
// frame's text as printed: frames with equal IDs have equal Symbol, Offset,
// DSO and Inline (their addresses may differ). IDs start at 0 and are
// private to this Scanner. Consumers that derive something per frame (a
// folded name) can cache it in a slice indexed by ID instead of a map. The
// slice is reused by the next Scan.
func (s *Scanner) FrameIDs() []uint32 { return s.outIDs }

// Line returns the number of lines read so far.
func (s *Scanner) Line() int { return s.line }

// Bytes returns the number of input bytes read so far, line endings included.
func (s *Scanner) Bytes() int64 { return s.n }

// readLine returns the next line without its line ending.
func (s *Scanner) readLine() ([]byte, bool) {
	for {
		if s.eof {
			return nil, false
		}
		var line []byte
		var ok bool
		if s.r == nil {
			line, ok = s.textLine()
		} else {
			line, ok = s.readerLine()
		}
		if !ok {
			return nil, false
		}
		if len(line) > MaxLine {
			s.malformed(fmt.Sprintf("line longer than %d bytes", MaxLine), nil)
			if s.err != nil {
				return nil, false
			}
			continue
		}
		return line, true
	}
}

// readerLine returns the next line of the reader without its line ending.
func (s *Scanner) readerLine() ([]byte, bool) {
	line, err := s.r.ReadSlice('\n')
	s.n += int64(len(line))
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: gather it, up to MaxLine.
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			s.n += int64(len(line))
			if len(s.long) <= MaxLine {
				s.long = append(s.long, line...)
			}
		}
		line = s.long
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		s.eof = true
		if len(line) == 0 {
			return nil, false
		}
	default:
		s.err = fmt.Errorf("read line %d: %w", s.line+1, err)
		return nil, false
	}
	s.line++
	return trimEOL(line), true
}

// textLine returns the next line of text held in memory without its line
// ending, as readLine does for a reader.
func (s *Scanner) textLine() ([]byte, bool) {
	rest := s.text[s.pos:]
	if len(rest) == 0 {
		s.eof = true
		return nil, false
	}
	line := rest
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		line = rest[:i+1]
	} else {
		s.eof = true
	}
	s.pos += len(line)
	s.n += int64(len(line))
	s.line++
	return trimEOL(line), true
}

// trimEOL returns line without its "\n" or "\r\n" ending.
func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

// framesFirst reports whether an indented line is tried as a stack line of
// the open record before anything else: the record has a call chain and,
// when its header carried tracepoint text, a frame of it has been read
// (until then the line is tried as a header first).
func (s *Scanner) framesFirst() bool {
	return s.open && !s.single && !(s.payload && len(s.cur.Frames) == 0)
}

// handle consumes one line and reports whether a sample became ready.
func (s *Scanner) handle(line []byte) bool {
	inChain, framesFirst := s.open && !s.single, s.framesFirst()
	if framesFirst && len(line) > 17 && line[0] == '\t' && line[17] == ' ' {
		// A stack line as perf script prints it: the fast path of the
		// frameLine call below.
		if s.paddedFrame(line) {
			return false
		}
	}
	i := 0 // first non-blank byte
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
		i++
	}
	if i == len(line) {
		return s.end()
	}
	if line[0] == '#' {
		s.comment(line)
		return false
	}
	indented := line[0] == ' ' || line[0] == '\t'
	if framesFirst && indented {
		if s.frameLine(line[i:]) {
			return false
		}
	}
	if bytes.Contains(line, perfRecord) {
		return s.end()
	}
	var h header
	if s.parseHeader(line, &h) {
		ready := s.end()
		s.begin(&h)
		return ready
	}
	if inChain {
		if s.frameLine(line) {
			return false
		}
		if s.last && indented {
			if src, inlined, ok := srcLine(line); ok {
				if !s.bad {
					s.setSrcLine(src, inlined)
				}
				s.last = false
				return false
			}
		}
		s.malformed(`expected stack frame "address symbol (dso)" or a blank line`, line)
		return false
	}
	s.malformed(`expected "comm pid [cpu] time: event:" sample header`, line)
	return false
}

var perfRecord = []byte("PERF_RECORD_")

// end closes the open record and reports whether it became the current
// sample.
func (s *Scanner) end() bool {
	if !s.open {
		return false
	}
	if s.bare && !s.bad && len(s.cur.Frames) == 0 {
		// A line such as "name 12" alone is no evidence of perf script
		// text; without a call chain under it, it is not a sample.
		s.malformedAt(s.cur.Line, "expected a call chain under the header without an event, found none", nil)
		s.bad = true
	}
	ready := !s.bad
	s.open, s.bad, s.single, s.payload, s.last, s.bare = false, false, false, false, false, false
	if ready {
		s.cur, s.out = s.out, s.cur
		s.curIDs, s.outIDs = s.outIDs, s.curIDs
		s.samples++
	}
	return ready
}

// malformed records a bad line: an error in strict mode, otherwise a warning
// and, inside a record, the record's dismissal.
func (s *Scanner) malformed(msg string, line []byte) {
	s.malformedAt(s.line, msg, line)
}

// malformedAt is malformed for a line other than the latest one read.
func (s *Scanner) malformedAt(n int, msg string, line []byte) {
	if line != nil {
		msg = fmt.Sprintf("%s, found %q", msg, excerpt(line))
	}
	if s.opt.Strict {
		s.err = &SyntaxError{Line: n, Msg: msg}
		return
	}
	if s.open {
		if s.bad {
			return // one warning per record
		}
		s.bad = true
	}
	s.nwarn++
	if len(s.warns) < s.opt.MaxWarnings {
		s.warns = append(s.warns, subsecond.Warning{Line: n, Message: msg})
	}
}

// finish runs at the end of input.
func (s *Scanner) finish() {
	if s.err == nil && s.samples == 0 && s.nwarn > 0 {
		w := s.warns[0]
		s.err = fmt.Errorf("no samples found; line %d: %s: %w", w.Line, w.Message, subsecond.ErrNotPerf)
	}
}

func excerpt(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// srcLine reports whether line looks like what perf script -F +srcline
// prints under a frame: "file.c:12", "??:0", "file.c:12 (discriminator 3)",
// "libc.so.6[27b25]" or "[kernel.kallsyms][ffffffff8110]", each possibly
// followed by " (inlined)" when the frame above is an inlined function
// (perf --inline). It returns the source line without that marker.
func srcLine(line []byte) (src []byte, inlined bool, ok bool) {
	src = trimSpace(line)
	if t, found := bytes.CutSuffix(src, []byte(" (inlined)")); found {
		src, inlined = trimSpace(t), true
	}
	t := src
	if i := bytes.Index(t, []byte(" (discriminator ")); i > 0 {
		t = t[:i]
	}
	if len(t) == 0 {
		return nil, false, false
	}
	if t[len(t)-1] == ']' {
		return src, inlined, true
	}
	k := len(t)
	for k > 0 && t[k-1] >= '0' && t[k-1] <= '9' {
		k--
	}
	return src, inlined, k < len(t) && k > 0 && t[k-1] == ':'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// intern returns b as a string shared with every equal string seen before.
func (s *Scanner) intern(b []byte) string {
	if v, ok := s.strs[string(b)]; ok {
		return v
	}
	v := string(b)
	s.strs[v] = v
	return v
}

var hexval = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = int8(c - 'a' + 10)
		t[c-'a'+'A'] = int8(c - 'a' + 10)
	}
	return t
}()

// comment reads a '#' line into the metadata.
func (s *Scanner) comment(line []byte) {
	text := bytes.TrimPrefix(line[1:], []byte(" "))
	if len(s.meta.Header) >= maxHeaderLines {
		return
	}
	if len(text) > 4096 {
		text = text[:4096]
	}
	s.meta.Header = append(s.meta.Header, string(text))
	k, v, ok := bytes.Cut(text, []byte(":"))
	if !ok {
		return
	}
	key := string(bytes.TrimSpace(k))
	val := string(bytes.TrimSpace(v))
	m := &s.meta
	switch key {
	case "hostname":
		if m.Hostname == "" {
			m.Hostname = val
			s.firstHost = val
		}
	case "os release":
		m.OSRelease = val
	case "perf version":
		m.PerfVersion = val
	case "arch":
		m.Arch = val
	case "cpudesc":
		m.CPUDesc = val
	case "nrcpus online", "nrcpus avail":
		if n, err := strconv.Atoi(val); err == nil && (m.NrCPUs == 0 || key == "nrcpus online") {
			m.NrCPUs = n
		}
	case "cmdline":
		m.Cmdline = val
	case "captured on":
		s.newCapture()
		m.CapturedOn = val
	case "clockid":
		m.Clock, _, _ = strings.Cut(val, " ")
	case "reference time":
		// "2026-11-30 17:11:04.974377 = 1796058664.974377 (TOD) = 1796058664.974380046 (realtime)"
		parts := strings.Split(val, " = ")
		if len(parts) == 3 {
			tod, ok1 := parseSeconds([]byte(strings.TrimSuffix(parts[1], " (TOD)")))
			clk, _, _ := strings.Cut(parts[2], " ")
			ref, ok2 := parseSeconds([]byte(clk))
			if ok1 && ok2 {
				m.RefTODNS, m.RefClockNS = tod, ref
			}
		}
	}
	s.checkConcatenated(key, val)
}

// newCapture notes the start of a capture's header block. perf script
// --header prints "# captured on" first; seen after samples, it starts a
// second capture concatenated onto the first.
func (s *Scanner) newCapture() {
	if s.samples > 0 || s.open || s.prior {
		s.block = captureBlock{started: true}
	}
}

// captureBlock is what the header of a second (or later) capture in the
// same input said, to be compared with the first.
type captureBlock struct {
	started  bool   // a second capture's header has begun
	hostSeen bool   // its "# hostname" was read
	rate     string // the sampling rate of its first event, "" until read
}

// checkConcatenated stops the scan when a capture concatenated onto the
// first comes from another host or samples at another rate: merged, they
// would make one timeline out of two machines or mix sample weights.
func (s *Scanner) checkConcatenated(key, val string) {
	switch key {
	case "hostname":
		if !s.block.started {
			return
		}
		if !s.block.hostSeen && val != s.firstHost {
			s.err = &SyntaxError{Line: s.line, Msg: fmt.Sprintf("a second capture starts here, from host %q after one from host %q: import each capture on its own", val, s.firstHost)}
		}
		s.block.hostSeen = true
	case "event":
		r := eventRate(val)
		if r == "" {
			return
		}
		if !s.block.started {
			if s.firstRate == "" {
				s.firstRate = r
			}
			return
		}
		if s.block.rate == "" {
			s.block.rate = r
			if s.firstRate != "" && r != s.firstRate {
				s.err = &SyntaxError{Line: s.line, Msg: fmt.Sprintf("a second capture starts here, sampling at %s after one sampling at %s: import each capture on its own", r, s.firstRate)}
			}
		}
	}
}

// eventRate returns the sampling rate of a "# event" header line's value
// ("name = cpu-clock:pppH, …, { sample_period, sample_freq } = 49, …, freq
// = 1, …") as "49 Hz" or "every 10000 events", or "" when it names none.
func eventRate(val string) string {
	if _, v, ok := strings.Cut(val, "sample_freq } = "); ok {
		n, _, _ := strings.Cut(v, ",")
		if strings.Contains(val, " freq = 1") {
			return n + " Hz"
		}
		return "every " + n + " events"
	}
	if _, v, ok := strings.Cut(val, "sample_period = "); ok {
		n, _, _ := strings.Cut(v, ",")
		return "every " + n + " events"
	}
	return ""
}
