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

// MaxHostMarkers bounds the markers kept for one host: adding more drops
// the host's oldest (by time, then text), so that a kernel log that floods
// for days (the recorder sends up to 10 markers a second) neither fills the
// disk nor makes every view that reads the host's markers read millions.
// A few resets a night fill it in a century; a minute's "link up" in a month.
const MaxHostMarkers = 50_000

// MarkersAdded is what adding markers to a host did: Added were new, and
// the host's Dropped oldest made room for them (MaxHostMarkers).
type MarkersAdded struct {
	Added   int `json:"added"`
	Dropped int `json:"dropped"`
}
