package store

import (
	"reflect"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestRollupCodec round-trips a rollup whose counts need 32 bits, and
// checks that every truncation of its encoding is an error.
func TestRollupCodec(t *testing.T) {
	r := subsecond.NewRollup([]subsecond.ChunkSummary{
		{Start: -3e9, CPUs: []subsecond.CPUCount{{CPU: 0, Counts: subsecond.Counts{Samples: 70000, Busy: 69000, System: 5}}, {CPU: 9, Counts: subsecond.Counts{Samples: 1}}},
			Comms: []subsecond.CommCount{{Comm: "a", Counts: subsecond.Counts{Samples: 3}}, {Comm: "b", Counts: subsecond.Counts{Samples: 69998, Busy: 69000, System: 5}}}},
		{Start: 5e9, CPUs: []subsecond.CPUCount{{CPU: 9, Counts: subsecond.Counts{Samples: 2, Busy: 2, System: 1}}}},
	})
	b := encodeRollup(r)
	got, err := decodeRollup(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Summaries(), r.Summaries()) {
		t.Errorf("decodeRollup(encodeRollup(r)) = %+v; want %+v", got.Summaries(), r.Summaries())
	}
	for n := range len(b) {
		if _, err := decodeRollup(b[:n]); err == nil {
			t.Errorf("decodeRollup of the first %d of %d bytes: no error", n, len(b))
		}
	}
}

// TestRollupCodecSmall round-trips a rollup of one-byte entries, as most
// are, and checks that the entries read in one step are checked as the
// others are: a busy count above the samples, or an index past the CPUs,
// is an error.
func TestRollupCodecSmall(t *testing.T) {
	var sums []subsecond.ChunkSummary
	for s := range int64(3) {
		sum := subsecond.ChunkSummary{Start: s * 1e9}
		for cpu := range int32(6) {
			if cpu == 2 && s == 1 {
				continue // a step of 2
			}
			sum.CPUs = append(sum.CPUs, subsecond.CPUCount{CPU: cpu, Counts: subsecond.Counts{Samples: 100 + int64(cpu), Busy: 50, System: s}})
		}
		sums = append(sums, sum)
	}
	r := subsecond.NewRollup(sums)
	b := encodeRollup(r)
	got, err := decodeRollup(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Summaries(), r.Summaries()) {
		t.Errorf("decodeRollup(encodeRollup(r)) = %+v; want %+v", got.Summaries(), r.Summaries())
	}
	// The last second's last CPU entry is the four bytes before the
	// second's command count (0): step 1, samples 105, busy 50, system 2.
	last := len(b) - 5
	if want := []byte{1, 105, 50, 2, 0}; !reflect.DeepEqual(b[last:], want) {
		t.Fatalf("the encoding ends % x; want % x", b[last:], want)
	}
	for _, bad := range []struct {
		at   int
		to   byte
		what string
	}{
		{last + 2, 106, "busy above samples"},
		{last + 3, 51, "system above busy"},
		{last, 2, "index past the CPUs"},
		{last, 7, "step past the CPUs"},
	} {
		c := append([]byte(nil), b...)
		c[bad.at] = bad.to
		if _, err := decodeRollup(c); err == nil {
			t.Errorf("%s: no error", bad.what)
		}
	}
}
