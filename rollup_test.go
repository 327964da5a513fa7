package subsecond

import (
	"slices"
	"testing"
)

// TestSumCPUs holds Rollup.SumCPUs to the sums of CPUCounts over the same
// seconds, in a rollup of 16-bit entries and in one a count made wide.
func TestSumCPUs(t *testing.T) {
	sums := []ChunkSummary{
		{Start: 0, CPUs: []CPUCount{{CPU: 3, Counts: Counts{5, 4, 1}}, {CPU: 9, Counts: Counts{2, 2, 2}}}},
		{Start: 1e9, CPUs: []CPUCount{{CPU: 9, Counts: Counts{7, 1, 0}}}},
		{Start: 2e9, CPUs: []CPUCount{{CPU: 1, Counts: Counts{0, 0, 0}}, {CPU: 3, Counts: Counts{1, 1, 1}}}},
		{Start: 3e9, CPUs: []CPUCount{{CPU: 1, Counts: Counts{4, 0, 0}}}},
	}
	for _, wide := range []bool{false, true} {
		if wide {
			sums[3].CPUs[0].Counts = Counts{70_000, 65_536, 1}
		}
		r := NewRollup(sums)
		for lo := range r.Len() + 1 {
			for hi := lo; hi <= r.Len(); hi++ {
				want, wantSeen := make([]Counts, len(r.CPUs)), make([]bool, len(r.CPUs))
				for i := lo; i < hi; i++ {
					for _, c := range r.CPUCounts(i, nil) {
						k, _ := slices.BinarySearch(r.CPUs, c.CPU)
						want[k].Add(c.Counts)
						wantSeen[k] = true
					}
				}
				got, seen := make([]Counts, len(r.CPUs)), make([]bool, len(r.CPUs))
				r.SumCPUs(lo, hi, got, seen)
				if !slices.Equal(got, want) || !slices.Equal(seen, wantSeen) {
					t.Errorf("wide %v: SumCPUs(%d, %d) = %v, %v; want %v, %v", wide, lo, hi, got, seen, want, wantSeen)
				}
			}
		}
	}
}
