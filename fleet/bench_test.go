package fleet_test

import (
	"context"
	"testing"

	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/fleet/fleetgen"
)

// BenchmarkFleet runs the four views over an in-memory fleet of 50 hosts
// recorded for an hour each (two sessions of 15 two-minute captures), with
// the default buckets, candidates and permutations: the views' own cost,
// to set beside the store-backed run.
func BenchmarkFleet(b *testing.B) {
	f := fleetgen.Fleet{Hosts: 50, Boots: 1, Sessions: 2, PerSession: 15, Leak: 4, Seed: 1}
	src := f.Source()
	caps, err := src.IndexedCaptures(context.Background(), 0, 1<<62)
	if err != nil {
		b.Fatal(err)
	}
	from, to := caps[0].Start, caps[0].Start
	for _, c := range caps {
		from, to = min(from, c.Start), max(to, c.Start+int64(len(c.Slots))*10e9)
	}
	opt := fleet.Options{From: from, To: to, Group: "zone", Match: plantedRE}
	for _, v := range []struct {
		name string
		run  func(context.Context, fleet.Source, fleet.Options) error
	}{
		{"Map", func(ctx context.Context, s fleet.Source, o fleet.Options) error {
			_, err := fleet.Map(ctx, s, o)
			return err
		}},
		{"Search", func(ctx context.Context, s fleet.Source, o fleet.Options) error {
			_, err := fleet.Search(ctx, s, o)
			return err
		}},
		{"Groups", func(ctx context.Context, s fleet.Source, o fleet.Options) error {
			o.Match = nil
			_, err := fleet.Groups(ctx, s, o)
			return err
		}},
		{"Uptime", func(ctx context.Context, s fleet.Source, o fleet.Options) error {
			o.Match = nil
			_, err := fleet.Uptime(ctx, s, o)
			return err
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.run(context.Background(), src, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
