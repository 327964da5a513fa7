package timeline

// Marker is an event of a host at a wall-clock time (Unix ns): a line of its
// kernel log, or one posted through the API.
type Marker struct {
	Time int64  `json:"time_ns"`
	Text string `json:"text"`
}
