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

func TestSummaryCache(t *testing.T) {
	loads := map[string]int{}
	sums := func(n int) []subsecond.ChunkSummary {
		out := make([]subsecond.ChunkSummary, n)
		for i := range out {
			out[i] = subsecond.ChunkSummary{Start: int64(i), CPUs: []subsecond.CPUCount{{CPU: 0, Counts: subsecond.Counts{Samples: 1}}}}
		}
		return out
	}
	c := NewSummaryCache(func(ctx context.Context, id string) ([]subsecond.ChunkSummary, error) {
		loads[id]++
		if id == "bad" {
			return nil, errors.New("no such capture")
		}
		return sums(10), nil
	}, 2*sizeOf(sums(10)))
	ctx := context.Background()
	for _, id := range []string{"a", "b", "a", "b", "a"} {
		if got, err := c.Summaries(ctx, id); err != nil || len(got) != 10 {
			t.Fatalf("Summaries(%s) = %d, %v", id, len(got), err)
		}
	}
	if loads["a"] != 1 || loads["b"] != 1 {
		t.Errorf("loads %v; want each capture loaded once", loads)
	}
	c.Summaries(ctx, "c") // over budget: b, the least recently used, goes
	c.Summaries(ctx, "a")
	c.Summaries(ctx, "b")
	if loads["a"] != 1 || loads["b"] != 2 || loads["c"] != 1 {
		t.Errorf("loads %v; want b loaded again after c pushed it out, a kept", loads)
	}
	if _, err := c.Summaries(ctx, "bad"); err == nil {
		t.Error("a failed load: no error")
	}
	if _, err := c.Summaries(ctx, "bad"); err == nil || loads["bad"] != 2 {
		t.Errorf("a failed load was cached: %v, %d loads", err, loads["bad"])
	}
}

// TestSummaryCacheSharesLoads checks that concurrent requests for a
// capture that is not cached read its summaries once.
func TestSummaryCacheSharesLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var loads atomic.Int32
		release := make(chan struct{})
		c := NewSummaryCache(func(ctx context.Context, id string) ([]subsecond.ChunkSummary, error) {
			loads.Add(1)
			<-release
			return []subsecond.ChunkSummary{{Start: 1}}, nil
		}, 0)
		const n = 8
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if got, err := c.Summaries(t.Context(), "a"); err != nil || len(got) != 1 {
					t.Errorf("Summaries(a) = %d, %v", len(got), err)
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
