package subsecond

// Marker is an event on a host at a wall-clock time, Unix nanoseconds: a
// line of its kernel log (a NIC reset, an OOM kill) or one posted through
// the API. Markers are drawn on the host's timeline, and the hot spots just
// before them rank first.
type Marker struct {
	Time int64  `json:"time_ns"`
	Text string `json:"text"`
}

// MaxMarkerText bounds a marker's text, in bytes.
const MaxMarkerText = 1024
