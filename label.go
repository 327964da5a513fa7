package subsecond

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Label is a key=value tag on a host (zone=us-east-1a, image=…): set by
// `subsecond record --label`, an upload's label parameter or `subsecond
// hosts label`, or derived from the header of the host's newest capture
// (the Label* keys below). The fleet views group and filter hosts by them.
type Label struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// String returns l as key=value.
func (l Label) String() string { return l.Key + "=" + l.Value }

// Bounds of a host's labels.
const (
	MaxLabels     = 32  // labels set on one host (derived ones not counted)
	MaxLabelKey   = 64  // bytes of a key
	MaxLabelValue = 256 // bytes of a value
)

// Keys of the labels derived from a host's newest capture header; a label
// set by hand with one of these keys hides the derived one.
const (
	LabelKernel   = "kernel"    // "# os release"
	LabelCPUs     = "cpus"      // "# nrcpus avail"
	LabelCPUModel = "cpu_model" // "# cpudesc"
)

// LabelProblem says why l cannot be a host label, or returns "" when it
// can: a key is 1 to MaxLabelKey bytes of lower-case ASCII letters, digits,
// '_', '.' and '-', starting with a letter; a value is 1 to MaxLabelValue
// bytes of UTF-8 without control characters.
func LabelProblem(l Label) string {
	switch {
	case l.Key == "":
		return "the key is empty"
	case len(l.Key) > MaxLabelKey:
		return "the key is longer than " + strconv.Itoa(MaxLabelKey) + " bytes"
	case l.Key[0] < 'a' || l.Key[0] > 'z':
		return "the key " + strconv.Quote(l.Key) + " does not start with a lower-case letter"
	case strings.IndexFunc(l.Key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	}) >= 0:
		return "the key " + strconv.Quote(l.Key) + " holds a character other than a-z, 0-9, '_', '.' and '-'"
	case l.Value == "":
		return "the value of " + l.Key + " is empty"
	case len(l.Value) > MaxLabelValue:
		return "the value of " + l.Key + " is longer than " + strconv.Itoa(MaxLabelValue) + " bytes"
	case !utf8.ValidString(l.Value):
		return "the value of " + l.Key + " is not UTF-8"
	case strings.ContainsFunc(l.Value, unicode.IsControl):
		return "the value of " + l.Key + " holds a control character"
	}
	return ""
}

// IndexSlot is the time resolution of the fleet index: a capture's counts
// are kept per IndexSlot of its own clock, from its T0.
const IndexSlot = int64(10 * time.Second)

// NameKind says what a name of the fleet index counts.
type NameKind uint8

// Kinds of indexed names. Each counts, per slot, the samples of a
// capture's first event whose command is the name (NameComm), whose stack
// holds the function anywhere (NameFunction, inclusive: a sample counts
// once however often the function recurs) or holds the call edge
// "caller;callee" (NameEdge, root-first as flame graphs draw it).
const (
	NameComm     NameKind = 1
	NameFunction NameKind = 2
	NameEdge     NameKind = 3
)

// String returns the kind's parameter name: comm, function or stack.
func (k NameKind) String() string {
	switch k {
	case NameComm:
		return "comm"
	case NameFunction:
		return "function"
	case NameEdge:
		return "stack"
	}
	return "kind" + strconv.Itoa(int(k))
}

// IndexedCapture is a capture as the fleet index holds it: where it lies
// on the wall clock and its samples per IndexSlot.
type IndexedCapture struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	// Start is the Unix time in nanoseconds of the start of slot 0 (the
	// capture's T0 on the wall clock).
	Start int64 `json:"start_ns"`
	// Boot is the Unix time in nanoseconds its host booted, 0 when unknown.
	Boot     int64  `json:"boot_ns,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
	// Slots are the totals of the capture's first event per slot.
	Slots []SlotTotals `json:"slots"`
}

// SlotTotals counts the samples of one slot of an IndexedCapture.
type SlotTotals struct {
	Counts
	// PeakCore is the busiest core's system share: over the slot's
	// seconds, the largest fraction of one CPU's samples in that second
	// that were system time (CPUs with fewer than MinPeakSamples samples
	// in a second not judged); 0 when none was judged.
	PeakCore float64 `json:"peak_core"`
}

// Bounds of what one read of the fleet index returns: more indexed
// captures than MaxIndexedCaptures, or a search expression matching more
// than MaxIndexNames names, is refused (ErrTooLarge) before the counts are
// read.
const (
	MaxIndexedCaptures = 200_000
	MaxIndexNames      = 1_000
)

// TotalsQuery asks the fleet index for the names most frequent in some
// captures: their totals over the slots starting in [From, To).
type TotalsQuery struct {
	From, To int64 // Unix ns
	// Captures are the IDs of the captures counted; nil for every
	// capture with a slot in [From, To).
	Captures map[string]bool
	// Kind keeps one kind of names, 0 every kind; Match, when set, the
	// names it matches.
	Kind  NameKind
	Match *regexp.Regexp
	// Min is the fewest samples a name has in the captures together to
	// be kept; Limit the most names kept, the most frequent first (ties by
	// kind and name), 0 for no limit.
	Min   int64
	Limit int
}

// MinPeakSamples is the fewest samples of one CPU in one second for its
// system share to count in SlotTotals.PeakCore.
const MinPeakSamples = 10

// NameCount is an indexed name's samples in one capture, per slot of the
// capture's IndexedCapture.Slots (trailing zero slots may be left off).
type NameCount struct {
	Capture string   `json:"capture"`
	Kind    NameKind `json:"kind"`
	Name    string   `json:"name"`
	Slots   []int64  `json:"slots"`
}

// Total returns the samples of c over all its slots.
func (c NameCount) Total() int64 {
	var n int64
	for _, v := range c.Slots {
		n += v
	}
	return n
}
