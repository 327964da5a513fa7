package store

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
)

func TestSeriesCodecRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	regular := func(n int, start, step int64) []int64 {
		ts := make([]int64, n)
		for i := range ts {
			ts[i] = start + int64(i)*step
		}
		return ts
	}
	jitter := regular(600, 1_700_000_000e9, 1e9)
	for i := range jitter {
		jitter[i] += rng.Int64N(3e6)
	}
	tests := []struct {
		name string
		ts   []int64
		qs   []int64
		dec  int
	}{
		{"one point", []int64{1}, []int64{-maxQuantized}, 0},
		{"two points", []int64{5, math.MaxInt64}, []int64{maxQuantized, -maxQuantized}, 3},
		{"regular", regular(600, 1_700_000_000e9, 1e9), make([]int64, 600), 2},
		{"jittered", jitter, make([]int64, 600), 2},
		{"gaps", []int64{1, 2, 1000, 1001, 1e18}, []int64{1, -1, 7, 0, 3}, 1},
	}
	for _, tt := range tests {
		for i := range tt.qs {
			if tt.name == "regular" || tt.name == "jittered" {
				tt.qs[i] = 50 + rng.Int64N(40)
			}
		}
		blob := encodeSeries(tt.ts, tt.qs, tt.dec)
		var p seriesPoints
		if _, err := decodeSeries(blob, &p, nil); err != nil {
			t.Errorf("%s: decode: %v", tt.name, err)
			continue
		}
		if !slices.Equal(p.ts, tt.ts) || !slices.Equal(p.qs, tt.qs) || p.dec != tt.dec {
			t.Errorf("%s: decode(encode(points)) = %v %v (%d); want %v %v (%d)", tt.name, p.ts, p.qs, p.dec, tt.ts, tt.qs, tt.dec)
		}
		t.Logf("%s: %d points in %d bytes", tt.name, len(tt.ts), len(blob))
	}
}

// TestSeriesRegularTimes: a block of one point a second spends under a
// byte a point on its times.
func TestSeriesRegularTimes(t *testing.T) {
	ts := make([]int64, 600)
	for i := range ts {
		ts[i] = 1_700_000_000e9 + int64(i)*1e9
	}
	if n := len(encodeSeries(ts, make([]int64, 600), 2)); n > 100 {
		t.Errorf("600 regular times and zero values take %d bytes; want at most 100", n)
	}
}

func TestQuantize(t *testing.T) {
	tests := []struct {
		v   float64
		dec int
		q   int64
		ok  bool
	}{
		{12.34, 2, 1234, true},
		{12.3456, 2, 1235, true},
		{0.0004, 3, 0, true},
		{-3.5, 0, -4, true},
		{maxQuantized, 0, maxQuantized, true},
		{maxQuantized * 2, 0, 0, false},
		{1e14, 2, 0, false},
		{math.NaN(), 2, 0, false},
		{math.Inf(-1), 0, 0, false},
	}
	for _, tt := range tests {
		q, ok := quantize(tt.v, tt.dec)
		if q != tt.q || ok != tt.ok {
			t.Errorf("quantize(%v, %d) = %d, %v; want %d, %v", tt.v, tt.dec, q, ok, tt.q, tt.ok)
		}
	}
}

func TestMergeSeriesBlocks(t *testing.T) {
	k := subsecond.SeriesKey{Name: "cpu.sys", CPU: 3}
	stored := seriesBlock(k, 0, []int64{10, 20, 30}, []int64{100, 200, 300}, 2)
	add := seriesBlock(k, 0, []int64{5, 20, 40}, []int64{50, 999, 400}, 2)
	m, n, err := MergeSeriesBlocks(&stored, &add)
	if err != nil || n != 2 {
		t.Fatalf("MergeSeriesBlocks = %d new, %v; want 2", n, err)
	}
	var p seriesPoints
	if _, err := decodeSeries(m.Data, &p, nil); err != nil {
		t.Fatal(err)
	}
	if want := []int64{5, 10, 20, 30, 40}; !slices.Equal(p.ts, want) {
		t.Errorf("merged times = %v; want %v", p.ts, want)
	}
	if want := []int64{50, 100, 200, 300, 400}; !slices.Equal(p.qs, want) {
		t.Errorf("merged values = %v; want %v (the stored 200 at 20 kept)", p.qs, want)
	}
	if m.First != 5 || m.Last != 40 || m.Points != 5 || m.Min != 0.5 || m.Max != 4 || m.Sum != 10.5 {
		t.Errorf("merged summary = %+v; want 5..40, 5 points, min 0.5, max 4, sum 10.5", m)
	}
	again, n, err := MergeSeriesBlocks(&m, &add)
	if err != nil || n != 0 || !slices.Equal(again.Data, m.Data) {
		t.Errorf("merging the same block again = %d new, %v; want 0 and the block unchanged", n, err)
	}
	coarse := seriesBlock(k, 0, []int64{50}, []int64{7}, 0)
	m2, _, err := MergeSeriesBlocks(&m, &coarse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSeries(m2.Data, &p, nil); err != nil || p.dec != 2 || p.qs[len(p.qs)-1] != 700 {
		t.Errorf("a whole-number block merged on the 0.01 grid: %v %+v; want 7 kept as 700 hundredths", err, p)
	}
	bad := stored
	bad.Data = []byte("not zstd")
	if _, _, err := MergeSeriesBlocks(&bad, &add); !errors.Is(err, errCorrupt) {
		t.Errorf("merging with a damaged block: %v; want errCorrupt", err)
	}
}

// FuzzDecodeSeries: decoding any bytes never panics, and what it accepts
// is within its bounds and encodes back to itself.
func FuzzDecodeSeries(f *testing.F) {
	raw, _ := unzstd(nil, encodeSeries([]int64{1e18, 1e18 + 1e9, 1e18 + 2e9, 1e18 + 3e9 + 7}, []int64{5, -3, 0, 1 << 40}, 2))
	f.Add(raw)
	f.Add([]byte{seriesFormat, 2, 1, 2, 0})
	f.Add([]byte{seriesFormat, 9, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p seriesPoints
		if err := decodeSeriesRaw(b, &p); err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v does not wrap errCorrupt", err)
			}
			return
		}
		if len(p.ts) > maxBlockPoints || len(p.ts) > len(b) || len(p.ts) != len(p.qs) {
			t.Fatalf("%d times and %d values from %d bytes", len(p.ts), len(p.qs), len(b))
		}
		for i, ts := range p.ts {
			if ts <= 0 || i > 0 && ts <= p.ts[i-1] || p.qs[i] < -maxQuantized || p.qs[i] > maxQuantized {
				t.Fatalf("point %d = %d, %d out of bounds", i, ts, p.qs[i])
			}
		}
		var q seriesPoints
		if _, err := decodeSeries(encodeSeries(p.ts, p.qs, p.dec), &q, nil); err != nil ||
			!slices.Equal(q.ts, p.ts) || !slices.Equal(q.qs, p.qs) || q.dec != p.dec {
			t.Fatalf("round trip of %+v = %+v, %v", p, q, err)
		}
	})
}
