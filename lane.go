package subsecond

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Lane is one kind of series of a host drawn over [From, To) (Unix ns,
// half-open) in buckets of Bucket ns: bucket i covers [From + i·Bucket,
// From + (i+1)·Bucket), the last one cut at To. It is what the page draws
// as a strip beside the night's heatmap, and the JSON of
// /api/hosts/{host}/series.
type Lane struct {
	Name   string       `json:"name"`
	Unit   string       `json:"unit"`
	From   int64        `json:"from_ns"`
	To     int64        `json:"to_ns"`
	Bucket int64        `json:"bucket_ns"`
	Series []LaneSeries `json:"series"`
}

// Buckets returns the number of buckets of [from, to) at bucket ns each,
// the last one possibly shorter; 0 when the range is empty or bucket is
// not positive.
func Buckets(from, to, bucket int64) int64 {
	if to <= from || bucket <= 0 {
		return 0
	}
	span := uint64(to - from) // to − from may exceed MaxInt64
	return int64((span-1)/uint64(bucket) + 1)
}

// LaneSeries is one series of a Lane: its CPU (Unknown for the host as a
// whole), its label and one value per bucket.
type LaneSeries struct {
	CPU    int32      `json:"cpu"`
	Label  string     `json:"label,omitempty"`
	Values LaneValues `json:"values"`
}

// LaneValues are a lane series' values, one per bucket: the mean of the
// series' points whose times lie in the bucket, or NaN for a bucket
// without points. JSON has no NaN: they are written as null, and null is
// read back as NaN.
type LaneValues []float64

// MarshalJSON writes v as an array of numbers, null for NaN (and for the
// infinities, which a mean of finite values never is).
func (v LaneValues) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+len(v)*6)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads an array of numbers and nulls, null as NaN.
func (v *LaneValues) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*v = nil
		return nil
	}
	var ps []*float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	out := make(LaneValues, len(ps))
	for i, p := range ps {
		out[i] = math.NaN()
		if p != nil {
			out[i] = *p
		}
	}
	*v = out
	return nil
}

// SeriesExtent is a series stored for a host and the times of its first
// and last stored points (Unix ns).
type SeriesExtent struct {
	Name  string `json:"name"`
	CPU   int32  `json:"cpu"`
	Label string `json:"label,omitempty"`
	First int64  `json:"first_ns"`
	Last  int64  `json:"last_ns"`
}

// Key returns e's series key.
func (e *SeriesExtent) Key() SeriesKey { return SeriesKey{Name: e.Name, CPU: e.CPU, Label: e.Label} }
