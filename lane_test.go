package subsecond

import (
	"encoding/json"
	"math"
	"testing"
)

func TestLaneValuesJSON(t *testing.T) {
	v := LaneValues{1.5, math.NaN(), 0, 100, math.Inf(1)}
	b, err := json.Marshal(Lane{Name: "cpu.sys", Series: []LaneSeries{{CPU: 3, Values: v}}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"cpu.sys","unit":"","from_ns":0,"to_ns":0,"bucket_ns":0,"series":[{"cpu":3,"values":[1.5,null,0,100,null]}]}`
	if string(b) != want {
		t.Errorf("json.Marshal(lane) = %s; want %s", b, want)
	}
	var back Lane
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Series[0].Values
	if len(got) != 5 || got[0] != 1.5 || !math.IsNaN(got[1]) || got[3] != 100 || !math.IsNaN(got[4]) {
		t.Errorf("values read back = %v; want [1.5 NaN 0 100 NaN]", got)
	}
}

func TestBuckets(t *testing.T) {
	tests := []struct{ from, to, bucket, want int64 }{
		{0, 10, 5, 2},
		{0, 11, 5, 3},
		{0, 0, 5, 0},
		{5, 0, 5, 0},
		{0, 10, 0, 0},
		{math.MinInt64, math.MaxInt64, math.MaxInt64, 3},
	}
	for _, tt := range tests {
		if got := Buckets(tt.from, tt.to, tt.bucket); got != tt.want {
			t.Errorf("Buckets(%d, %d, %d) = %d; want %d", tt.from, tt.to, tt.bucket, got, tt.want)
		}
	}
}
