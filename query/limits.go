package query

import "time"

// Limits and defaults of the view parameters "col" and "rows" (offset
// heatmap) and "bucket" (cores map and hot spots, and a host's timeline),
// in nanoseconds and rows. The heatmap package enforces them; the server
// checks URL parameters against the same values, so the two cannot drift.
// MaxBucket is a day so that a host's timeline of weeks fits in columns.
const (
	MinCol      = int64(100 * time.Millisecond)
	MaxCol      = int64(10 * time.Second)
	DefaultCol  = int64(time.Second)
	MaxRows     = 1000
	DefaultRows = 50

	MinBucket     = int64(time.Millisecond)
	MaxBucket     = int64(24 * time.Hour)
	DefaultBucket = int64(100 * time.Millisecond)
)

// Defaults of the hot-spot parameters "threshold" (the busy or system
// fraction that counts as hot) and "min" (the shortest episode, in
// nanoseconds). The threshold is 0.7 so that a core pegged at 80% in either
// measure is found whole: at 49 Hz a one-second window of such a core holds
// 39 ± 3 samples of the 49 it yields, and 0.7 (34 samples) is about two
// standard deviations below that.
const (
	DefaultThreshold = 0.7
	DefaultMin       = int64(time.Second)
)

// DefaultNear is the default of the parameter "near", in nanoseconds: a
// host's hot spot that ends within it before an event marker is marked
// with it and ranks first. It is the 10 s before a marker that the
// marker's link opens (timeline.Before), so that a marked hot spot is one
// that link shows, and nearness singles out what a longer reach (a minute
// caught every hot spot of a night with frequent markers) does not.
const DefaultNear = int64(10 * time.Second)

// Limits of the stack chart's parameter "max_samples": the most samples of
// the filters that its range may hold, by default and at most. Each sample
// travels to the browser, so the bound is on the answer's size.
const (
	DefaultMaxSamples = 200_000
	MaxMaxSamples     = 1_000_000
)

// CheckCells refuses, before any work, a grid over span nanoseconds in
// columns of width ns and rows rows (CPUs, heatmap rows) of more than limit
// cells, a server's bound on a view's cost: the *ParamError names param
// and a value of it that fits.
func CheckCells(param, rowsName string, width, span int64, rows int, limit int64) error {
	cols := span/width + 1
	if cols*int64(rows) <= limit {
		return nil
	}
	perRow := limit / int64(rows) // the columns that fit
	if perRow < 1 {
		return Invalidf(param, "%d %s make more than this server's limit of %d cells at any %s", rows, rowsName, limit, param)
	}
	// span/w + 1 ≤ perRow holds for every w > span/perRow.
	fit := roundUp(span/perRow + 1)
	return Invalidf(param, "%s s makes %d columns × %d %s = %d cells, more than this server's limit of %d; use %s ≥ %s s",
		FormatSeconds(width), cols, rows, rowsName, cols*int64(rows), limit, param, FormatSeconds(fit))
}

// roundUp rounds n up to two significant digits: 6080001 is 6100000.
func roundUp(n int64) int64 {
	unit := int64(1)
	for n/unit >= 100 {
		unit *= 10
	}
	return (n + unit - 1) / unit * unit
}

// DefaultBefore and MaxBefore bound the parameter "before", in
// nanoseconds: the window before each marker that an explanation contrasts
// with the rest of the recording.
const (
	DefaultBefore = int64(10 * time.Second)
	MaxBefore     = int64(10 * time.Minute)
)

// DefaultControls and MaxControls bound the control windows an explanation
// draws (the parameter "controls"): each is a window of the recording that
// is loaded and counted, so their number bounds the explanation's cost.
const (
	DefaultControls = 200
	MaxControls     = 2000
)

// DefaultState is the default of the parameter "state": the lanes of host
// series the host page draws under its cores map, those of the case this
// product was made for (a core at 100% system time, leaked memory cgroups,
// a NIC's errors).
const DefaultState = "cpu.sys,cgroups,cgroup.dying,net.errors"

// MaxRegexp bounds a regular-expression parameter, in bytes: its
// compilation and matching grow with it (Go's matching is linear in the
// text matched, times the expression's size), and a filter, a search or a
// marker expression has no use for more.
const MaxRegexp = 1024

// Bounds of the fleet's views (the parameters "buckets" and
// "permutations"), which package fleet takes for its own: its map's columns and
// its contrasts' permutation tests.
const (
	DefaultFleetBuckets = 120
	MaxFleetBuckets     = 2000
	MinPermutations     = 1000
	DefaultPermutations = 10_000
	MaxPermutations     = 100_000
)

// FleetSpan is the fleet's default range: the last 24 hours of the
// indexed data.
const FleetSpan = int64(24 * time.Hour)

// The profile list's pages: DefaultPerPage profiles unless per_page asks
// for another number, at most MaxPerPage, so that a list's answer and the
// memory that writes it stay the same however many profiles are stored.
const (
	DefaultPerPage = 100
	MaxPerPage     = 1000
)
