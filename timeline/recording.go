package timeline

import "time"

// Recording is a run of a host's captures with no real gap between them:
// each starts at most two sampling intervals (1/frequency_hz, of the
// slower of the two) after the one before it ends, as perf record
// --switch-output's rotations leave them. The night reads a recording as
// one: an episode or a marker's window that crosses a rotation point is
// one range with its whole figures. [Start, End) is its wall-clock span in
// Unix nanoseconds; Captures are in time order.
type Recording struct {
	Captures []Capture `json:"captures"`
	Start    int64     `json:"start_ns"`
	End      int64     `json:"end_ns"`
}

// Recordings groups caps, a host's captures in time order (HostCaptures),
// into recordings, in time order.
func Recordings(caps []Capture) []Recording {
	var out []Recording
	for _, c := range caps {
		if n := len(out); n > 0 && continuous(&out[n-1].Captures[len(out[n-1].Captures)-1], &c) {
			r := &out[n-1]
			r.Captures = append(r.Captures, c)
			r.End = max(r.End, c.End)
			continue
		}
		out = append(out, Recording{Captures: []Capture{c}, Start: c.Start, End: c.End})
	}
	return out
}

// continuous reports whether b, which starts no earlier than a, follows a
// without a real gap: its first sample at most two sampling intervals (of
// the slower of them) after a's last, or, when neither rate is known, no
// later than a's end.
func continuous(a, b *Capture) bool {
	pa, pb := interval(a), interval(b)
	return b.Start <= a.End || b.Start-(a.End-max(pa, 1)) <= 2*max(pa, pb)
}

// interval is c's sampling interval in ns, 0 when its rate is unknown;
// c.End is one interval after its last sample (see Capture).
func interval(c *Capture) int64 {
	if c.Hz <= 0 {
		return 0
	}
	return int64(float64(time.Second) / c.Hz)
}

// Missing returns how much of the wall-clock range [from, to) lies
// outside the recordings rs (in time order), in ns: between them, before
// the first or after the last. The sliver between two captures of one
// recording is no gap.
func Missing(rs []Recording, from, to int64) int64 {
	missing, at := int64(0), from
	for i := range rs {
		r := &rs[i]
		if r.End <= at || r.Start >= to {
			continue
		}
		missing += max(0, r.Start-at)
		if at = max(at, r.End); at >= to {
			return missing
		}
	}
	return missing + max(0, to-at)
}

// recordingAt returns the index of the recording of rs that holds the
// wall-clock time t, or -1.
func recordingAt(rs []Recording, t int64) int {
	for i := range rs {
		if t >= rs[i].Start && t < rs[i].End {
			return i
		}
	}
	return -1
}
