package fleet_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/fleet/fleetgen"
)

// TestMapBruteForce checks Map's cells, shares, peaks and markers against
// a count over every slot of every capture, with and without a match,
// over ranges whose ends and columns fall inside slots.
func TestMapBruteForce(t *testing.T) {
	ctx := context.Background()
	f := fleetgen.Fleet{Hosts: 6, Leak: 4, Seed: 7, Markers: 5}
	src := f.Source()
	all, err := src.IndexedCaptures(ctx, math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := src.NameCounts(ctx, subsecond.NameFunction, plantedRE, math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	matched := map[string][]int64{}
	for _, nc := range counts {
		matched[nc.Capture] = nc.Slots
	}
	first, last := span(t, src)
	markers := 0
	c := all[3]
	for _, r := range []struct {
		from, to int64
		buckets  int
		labels   []subsecond.Label
	}{
		{first + 86_400e9 + 3_700e6, last - 86_400e9 + 1_234e6, 37, nil},
		{c.Start + 25e9 + 1, c.Start + 95e9, 13, nil},
		{first, last, 0, []subsecond.Label{{Key: "zone", Value: "b"}}},
	} {
		for _, match := range []bool{false, true} {
			opt := fleet.Options{From: r.from, To: r.to, Buckets: r.buckets, Labels: r.labels, Group: "zone"}
			if match {
				opt.Match = plantedRE
			}
			g, err := fleet.Map(ctx, src, opt)
			if err != nil {
				t.Fatal(err)
			}
			B := max(r.buckets, fleet.DefaultBuckets*boolInt(r.buckets == 0))
			w := (r.to - r.from + int64(B) - 1) / int64(B)
			if g.Bucket != w || g.From != r.from || g.To != r.to {
				t.Errorf("grid %d–%d by %d; want %d–%d by %d", g.From, g.To, g.Bucket, r.from, r.to, w)
			}
			// The rows: every host with a slot in range carrying the labels,
			// by zone, then name.
			var want []string
			for h := range f.Hosts {
				name := fleetgen.HostName(h)
				if r.labels != nil && f.Zone(h) != r.labels[0].Value {
					continue
				}
				if slices.ContainsFunc(all, func(c subsecond.IndexedCapture) bool { return c.Host == name && hasSlotIn(&c, r.from, r.to) }) {
					want = append(want, name)
				}
			}
			var got []string
			for _, row := range g.Rows {
				got = append(got, row.Host)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %v; want %v", got, want)
			}
			for _, row := range g.Rows {
				checkRow(t, row, all, matched, match, r.from, r.to, w, B)
				var marks []int64
				for i := range f.Hosts {
					if fleetgen.HostName(i) == row.Host {
						for _, m := range f.HostMarkers(i) {
							if m.Time >= r.from && m.Time < r.to {
								marks = append(marks, m.Time)
							}
						}
					}
				}
				markers += len(marks)
				if !slices.Equal(row.Markers, append([]int64{}, marks...)) {
					t.Errorf("%s: markers %v; want %v", row.Host, row.Markers, marks)
				}
			}
		}
	}
	if markers == 0 {
		t.Error("no marker in any range: the markers were not checked")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hasSlotIn reports whether one of c's slots starts in [from, to).
func hasSlotIn(c *subsecond.IndexedCapture, from, to int64) bool {
	for i := range c.Slots {
		if s := c.Start + int64(i)*subsecond.IndexSlot; s >= from && s < to {
			return true
		}
	}
	return false
}

// checkRow compares row with a count over every slot of the host's
// captures.
func checkRow(t *testing.T, row fleet.Row, all []subsecond.IndexedCapture, matched map[string][]int64, match bool, from, to, w int64, B int) {
	t.Helper()
	samples, busy, hits := make([]int64, B), make([]int64, B), make([]int64, B)
	peak := make([]float64, B)
	var total, totalBusy, totalHits int64
	for _, c := range all {
		if c.Host != row.Host {
			continue
		}
		for i, sl := range c.Slots {
			s := c.Start + int64(i)*subsecond.IndexSlot
			for b := range B {
				lo, hi := from+int64(b)*w, min(from+int64(b+1)*w, to)
				if s >= lo && s < hi && sl.Samples > 0 {
					m := int64(0)
					if i < len(matched[c.ID]) {
						m = min(matched[c.ID][i], sl.Samples)
					}
					samples[b] += sl.Samples
					busy[b] += sl.Busy
					hits[b] += m
					peak[b] = max(peak[b], sl.PeakCore)
					total, totalBusy, totalHits = total+sl.Samples, totalBusy+sl.Busy, totalHits+m
				}
			}
		}
	}
	if row.Samples != total || len(row.Values) != B {
		t.Fatalf("%s: %d samples, %d values; want %d, %d", row.Host, row.Samples, len(row.Values), total, B)
	}
	best, at := math.Inf(-1), from
	for b := range B {
		want := math.NaN()
		switch {
		case samples[b] == 0:
		case match:
			want = float64(hits[b]) / float64(samples[b])
		default:
			want = peak[b]
		}
		if got := row.Values[b]; !(math.IsNaN(got) && math.IsNaN(want)) && math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: bucket %d = %v; want %v", row.Host, b, got, want)
		}
		if want > best {
			best, at = want, from+int64(b)*w
		}
	}
	share := float64(totalBusy) / float64(total)
	if match {
		share = float64(totalHits) / float64(total)
	}
	if math.Abs(row.Share-share) > 1e-12 || row.Peak != best || row.PeakAt != at {
		t.Errorf("%s: share %v, peak %v at %d; want %v, %v at %d", row.Host, row.Share, row.Peak, row.PeakAt, share, best, at)
	}
}
