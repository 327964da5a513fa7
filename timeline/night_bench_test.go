package timeline

import (
	"context"
	"os"
	"testing"

	"github.com/subsecond/subsecond"

	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// BenchmarkNightTimeline times the whole-night timeline of the night
// database $SUBSECOND_NIGHT_DB (bench/nightload writes one; a copy, since
// its first open migrates it and stores missing rollups) at the page's
// default columns under the server's default --max-cells, as the serve
// command answers it: through a RollupCache. Cold, the cache is new for
// each timeline, which reads every capture's rollup from the database;
// warm, the cache holds them all, as after serve's start. It is skipped
// without the database. It reports the grid's columns and CPUs.
//
//	SUBSECOND_NIGHT_DB=/tmp/night.db go test -run '^$' -bench NightTimeline -benchtime 10x -benchmem ./timeline
func BenchmarkNightTimeline(b *testing.B) {
	path := os.Getenv("SUBSECOND_NIGHT_DB")
	if path == "" {
		b.Skip("SUBSECOND_NIGHT_DB names no night database (go run ./bench/nightload -db PATH writes one)")
	}
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil || len(list) == 0 {
		b.Fatalf("list: %d profiles, %v", len(list), err)
	}
	host := list[0].Host
	// The server's default --max-cells (server.DefaultMaxCells).
	span := Span{MaxCells: 1_000_000}
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			cache := NewRollupCache(st.Rollup, 0)
			src := cachedSource{storeSource{st}, cache}
			if warm {
				for _, p := range list {
					if _, err := cache.Rollup(ctx, p.ID); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			var g *Grid
			for b.Loop() {
				if !warm {
					src.cache = NewRollupCache(st.Rollup, 0)
				}
				if g, err = Timeline(ctx, src, host, span); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.Buckets), "columns")
			b.ReportMetric(float64(len(g.CPUs)), "CPUs")
		})
	}
}

// cachedSource reads rollups through a RollupCache, as the serve command
// does.
type cachedSource struct {
	storeSource
	cache *RollupCache
}

func (c cachedSource) Rollup(ctx context.Context, id string) (*subsecond.Rollup, error) {
	return c.cache.Rollup(ctx, id)
}
