package fleet_test

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
)

// countingSource counts the name totals read through it, and hides the
// captures in hide, as if they had been deleted.
type countingSource struct {
	fleet.Source
	totals atomic.Int32
	hide   map[string]bool
}

func (s *countingSource) NameTotals(ctx context.Context, q subsecond.TotalsQuery) ([]subsecond.NameCount, error) {
	s.totals.Add(1)
	return s.Source.NameTotals(ctx, q)
}

func (s *countingSource) IndexedCaptures(ctx context.Context, from, to int64) ([]subsecond.IndexedCapture, error) {
	caps, err := s.Source.IndexedCaptures(ctx, from, to)
	var out []subsecond.IndexedCapture
	for _, c := range caps {
		if !s.hide[c.ID] {
			out = append(out, c)
		}
	}
	return out, err
}

// TestCacheCountsOnce asks the group and uptime contrasts through a Cache
// with other seeds, other hosts and after a capture is gone: each gives
// the report computed without the cache, and the names are counted once
// per set of captures and units.
func TestCacheCountsOnce(t *testing.T) {
	ctx := context.Background()
	f := planted(1)
	gen := f.Source()
	src := &countingSource{Source: gen}
	from, to := span(t, gen)
	cache := fleet.NewCache(0)
	counted := int32(0)
	check := func(what string, opt fleet.Options, wantCount bool) {
		t.Helper()
		got, err := cache.Groups(ctx, src, opt)
		if err != nil {
			t.Fatal(what, err)
		}
		want, err := fleet.Groups(ctx, &countingSource{Source: gen, hide: src.hide}, opt)
		if err != nil {
			t.Fatal(what, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the cached table's report differs from the one counted anew", what)
		}
		if wantCount {
			counted++
		}
		if n := src.totals.Load(); n != counted {
			t.Errorf("%s: names counted %d times in all; want %d", what, n, counted)
		}
	}
	opt := fleet.Options{From: from, To: to, Group: "zone", Seed: 5, Limit: 1000}
	check("seed 5", opt, true)
	opt.Seed = 6
	check("seed 6", opt, false)
	opt.Permutations = 2000
	check("2000 permutations", opt, false)
	caps, err := gen.IndexedCaptures(ctx, from, to)
	if err != nil || len(caps) == 0 {
		t.Fatal(len(caps), err)
	}
	src.hide = map[string]bool{caps[0].ID: true}
	check("a capture deleted", opt, true)
	src.hide = nil
	check("the capture back", opt, false)

	uopt := fleet.Options{From: from, To: to, Seed: 9, Limit: 1000}
	for seed := range uint64(2) {
		uopt.Seed = 9 + seed
		got, err := cache.Uptime(ctx, src, uopt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fleet.Uptime(ctx, gen, uopt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("uptime, seed %d: the cached table's report differs from the one counted anew", uopt.Seed)
		}
	}
	if n := src.totals.Load(); n != counted+1 {
		t.Errorf("uptime twice: names counted %d times in all; want %d", n, counted+1)
	}
}
