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

// Defaults of the hot-spot parameters "threshold" (the busy fraction that
// counts as busy) and "min" (the shortest episode, in nanoseconds).
const (
	DefaultThreshold = 0.9
	DefaultMin       = int64(time.Second)
)

// Limits of the stack chart's parameter "max_samples": the most samples of
// the filters that its range may hold, by default and at most. Each sample
// travels to the browser, so the bound is on the answer's size.
const (
	DefaultMaxSamples = 200_000
	MaxMaxSamples     = 1_000_000
)
