package subsecond

import "time"

// Limits and defaults of the view parameters "col" and "rows" (offset
// heatmap) and "bucket" (cores map and hot spots), in nanoseconds and rows.
// The heatmap package enforces them; the server checks URL parameters
// against the same values, so the two cannot drift.
const (
	MinCol      = int64(100 * time.Millisecond)
	MaxCol      = int64(10 * time.Second)
	DefaultCol  = int64(time.Second)
	MaxRows     = 1000
	DefaultRows = 50

	MinBucket     = int64(time.Millisecond)
	MaxBucket     = int64(60 * time.Second)
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

// Limits of the stack chart's parameter "max_samples": the most samples of
// the filters that its range may hold, by default and at most. Each sample
// travels to the browser, so the bound is on the answer's size.
const (
	DefaultMaxSamples = 200_000
	MaxMaxSamples     = 1_000_000
)
