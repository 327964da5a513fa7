// Package subsecond holds the nouns every Subsecond package shares and their
// invariants: samples and frames as the parser yields them, a stored
// profile's metadata, the columnar capture that the analysis packages read,
// a sample's classes (idle, busy, system, user: Classes), per-second
// summaries, markers, the wall-clock anchor, time ranges and sentinel
// errors. It imports only the standard library. The query language (the
// parameter table, filters, limits) is package query; links are package
// link; sentences and formats for people are package web.
//
// Data flows parser → store → heatmap/flame → server → web:
//
//	sc := parser.NewScanner(r, parser.Options{})
//	b := subsecond.NewBuilder()
//	for sc.Scan() {
//		if err := b.Add(sc.Sample()); err != nil { … }
//	}
//	capture := b.Capture()
//
// Time is integer nanoseconds everywhere. Every range is half-open
// [Start, End). Frames are leaf-first, as perf prints them.
package subsecond

import (
	"errors"
	"time"
)

// Unknown marks a PID, TID or CPU that the input did not record.
const Unknown int32 = -1

// NoTime marks a sample whose input had no timestamp.
const NoTime int64 = -1 << 63

// Sentinel errors. Packages wrap them with context; the server maps them to
// HTTP statuses in one place.
var (
	ErrNotFound     = errors.New("not found")
	ErrInvalid      = errors.New("invalid")
	ErrNotPerf      = errors.New("not perf script text")
	ErrTooLarge     = errors.New("too large")
	ErrEmptyRange   = errors.New("range holds no samples")
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNoSpace reports that the storage is full: nothing was stored.
	ErrNoSpace = errors.New("no space left on the server's disk")
	// ErrUnavailable reports that the database cannot be reached or is
	// restarting, or that its schema is not this build's: the request may
	// succeed if retried later, and nothing was stored.
	ErrUnavailable = errors.New("database unavailable")
	// ErrSchema reports that the database's schema is not the one this
	// build's migrations make; it comes wrapped with ErrUnavailable.
	ErrSchema = errors.New("database schema is not this build's")
)

// FrameKind says where a frame's code runs.
type FrameKind uint8

// Frame kinds.
const (
	KindUnknown FrameKind = iota
	KindKernel
	KindUser
	KindJIT
	KindInlined
)

var kindNames = [...]string{"unknown", "kernel", "user", "jit", "inlined"}

// String returns the kind's lower-case name, as the JSON API spells it.
func (k FrameKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Frame is one entry of a call chain.
type Frame struct {
	Addr    uint64    // instruction address; 0 when perf printed none
	Symbol  string    // symbol without its +0x offset; "[unknown]" as perf prints it
	Offset  uint64    // the +0x… offset perf printed after the symbol, 0 when absent
	DSO     string    // DSO without the surrounding parentheses; "" when absent
	SrcLine string    // source line (file:line) when perf printed one
	Inline  bool      // perf marked the frame as inlined
	Kind    FrameKind // kernel, user, JIT, inlined or unknown
}

// Metadata is what `perf script --header` prints about a capture.
type Metadata struct {
	Hostname    string   `json:"hostname,omitempty"`
	OSRelease   string   `json:"os_release,omitempty"`
	PerfVersion string   `json:"perf_version,omitempty"`
	Arch        string   `json:"arch,omitempty"`
	CPUDesc     string   `json:"cpu_desc,omitempty"`
	NrCPUs      int      `json:"nr_cpus,omitempty"`
	Cmdline     string   `json:"cmdline,omitempty"`
	CapturedOn  string   `json:"captured_on,omitempty"`
	Header      []string `json:"header,omitempty"` // every '#' line, without the '# ' prefix

	// Clock is the clock perf record -k chose ("realtime", "monotonic"),
	// from "# clockid"; "" for perf's default clock.
	Clock string `json:"clock,omitempty"`
	// RefTODNS and RefClockNS are perf's "# reference time": the Unix time
	// and the capture clock's time of one instant, in nanoseconds; both 0
	// when absent.
	RefTODNS   int64 `json:"ref_tod_ns,omitempty"`
	RefClockNS int64 `json:"ref_clock_ns,omitempty"`
	// TODOffsetNS is the first sample's tod field (perf script -F +tod,
	// read as UTC) minus its time, in nanoseconds; 0 when absent.
	TODOffsetNS int64 `json:"tod_offset_ns,omitempty"`
}

// Warning is a problem found on one line of the input.
type Warning struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// EventCount is one event type of a capture and how many samples it has.
type EventCount struct {
	Name    string `json:"name"`
	Samples int64  `json:"samples"`
}

// Profile describes a stored capture.
type Profile struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Host     string `json:"host"` // "# hostname" unless the import named another; UnknownHost when neither
	FileName string `json:"file_name"`
	// Digest identifies the text (decompressed): "blake3:" and its
	// BLAKE3-256 in lower-case hex; "sha256:" and its SHA-256 for a
	// profile stored before Subsecond hashed with BLAKE3. The same text
	// sent again is this profile.
	Digest   string    `json:"digest"`
	Bytes    int64     `json:"bytes"`    // size of the uncompressed text
	Uploaded time.Time `json:"uploaded"` // when the import finished
	Meta     Metadata  `json:"metadata"`
	// Events are the capture's events in order of first appearance; in a
	// list of profiles (the store's List and Page), only the one with most
	// samples. EventCount is how many there are.
	Events      []EventCount `json:"events"`
	EventCount  int          `json:"event_count"`
	Start       int64        `json:"start_ns"` // time of the first sample
	End         int64        `json:"end_ns"`   // time of the last sample
	Samples     int64        `json:"samples"`
	CPUs        int          `json:"cpus"`         // number of distinct CPUs seen
	FrequencyHz float64      `json:"frequency_hz"` // sampling rate per CPU, inferred
	Warnings    int          `json:"warnings"`     // bad records skipped
	Wall        WallClock    `json:"wall"`         // the capture's own wall-clock anchor
	WarningList []Warning    `json:"warning_list,omitempty"`
}

// T0 returns the profile's time origin: the whole second containing its first
// sample, in nanoseconds.
func (p *Profile) T0() int64 { return FloorSecond(p.Start) }

// Period returns p's sampling period per CPU in nanoseconds, from its
// inferred rate; 1 when the rate is unknown.
func (p *Profile) Period() int64 {
	if p.FrequencyHz <= 0 {
		return 1
	}
	return max(int64(float64(time.Second)/p.FrequencyHz), 1)
}

// Duration returns how long p recorded: from its first sample to one
// sampling period after its last (Period), as the CLI, the profile list
// and a host's timeline count it; 0 when p has no timestamps.
func (p *Profile) Duration() int64 {
	if !p.Timed() {
		return 0
	}
	return p.End + p.Period() - p.Start
}

// FloorSecond returns the whole second (in nanoseconds) at or before t.
func FloorSecond(t int64) int64 {
	const s = int64(time.Second)
	q := t / s
	if t%s < 0 {
		q--
	}
	return q * s
}

// Range is a half-open time range [Start, End) in nanoseconds.
type Range struct {
	Start int64
	End   int64
}

// Contains reports whether t lies in [r.Start, r.End).
func (r Range) Contains(t int64) bool { return t >= r.Start && t < r.End }

// Empty reports whether the range holds no instant.
func (r Range) Empty() bool { return r.End <= r.Start }

// Duration returns the range's length in nanoseconds.
func (r Range) Duration() int64 { return r.End - r.Start }
