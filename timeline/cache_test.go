package timeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/subsecond/subsecond"
)

func TestRollupCache(t *testing.T) {
	loads := map[string]int{}
	sums := func(n int) *subsecond.Rollup {
		out := make([]subsecond.ChunkSummary, n)
		for i := range out {
			out[i] = subsecond.ChunkSummary{Start: int64(i), CPUs: []subsecond.CPUCount{{CPU: 0, Counts: subsecond.Counts{Samples: 1}}}}
		}
		return subsecond.NewRollup(out)
	}
	c := NewRollupCache(func(ctx context.Context, id string) (*subsecond.Rollup, error) {
		loads[id]++
		if id == "bad" {
			return nil, errors.New("no such capture")
		}
		return sums(10), nil
	}, 2*sums(10).Bytes())
	ctx := context.Background()
	for _, id := range []string{"a", "b", "a", "b", "a"} {
		if got, err := c.Rollup(ctx, id); err != nil || got.Len() != 10 {
			t.Fatalf("Rollup(%s) = %v, %v", id, got, err)
		}
	}
	if loads["a"] != 1 || loads["b"] != 1 {
		t.Errorf("loads %v; want each capture loaded once", loads)
	}
	c.Rollup(ctx, "c") // over budget: b, the least recently used, goes
	c.Rollup(ctx, "a")
	c.Rollup(ctx, "b")
	if loads["a"] != 1 || loads["b"] != 2 || loads["c"] != 1 {
		t.Errorf("loads %v; want b loaded again after c pushed it out, a kept", loads)
	}
	if _, err := c.Rollup(ctx, "bad"); err == nil {
		t.Error("a failed load: no error")
	}
	if _, err := c.Rollup(ctx, "bad"); err == nil || loads["bad"] != 2 {
		t.Errorf("a failed load was cached: %v, %d loads", err, loads["bad"])
	}
}

// TestRollupCacheSharesLoads checks that concurrent requests for a
// capture that is not cached read its rollup once.
func TestRollupCacheSharesLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var loads atomic.Int32
		release := make(chan struct{})
		c := NewRollupCache(func(ctx context.Context, id string) (*subsecond.Rollup, error) {
			loads.Add(1)
			<-release
			return subsecond.NewRollup([]subsecond.ChunkSummary{{Start: 1e9, CPUs: []subsecond.CPUCount{{Counts: subsecond.Counts{Samples: 1}}}}}), nil
		}, 0)
		const n = 8
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if got, err := c.Rollup(t.Context(), "a"); err != nil || got.Len() != 1 {
					t.Errorf("Rollup(a) = %v, %v", got, err)
				}
			})
		}
		synctest.Wait() // every request is reading or waiting on the read
		close(release)
		wg.Wait()
		if loads.Load() != 1 {
			t.Errorf("%d concurrent requests loaded capture a %d times; want once", n, loads.Load())
		}
	})
}
