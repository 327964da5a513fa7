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
