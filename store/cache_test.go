package store_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
)

// TestCacheBudgetHoldsIndexes checks that the capture cache's budget bounds
// the memory its captures really keep once the views have used them: a
// deep-stacked real capture's flame-graph indexes (one per setting of only)
// and filter index outweigh its samples, and must count.
func TestCacheBudgetHoldsIndexes(t *testing.T) {
	r, err := sampledata.Real()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	b, _, _ := openSQLite(t)
	const budget = 8 << 20
	s := store.New(b, store.Options{CacheSize: budget})
	// What the store and the database keep whatever the cache holds (the
	// SQLite connections' page caches, the fleet index's name dictionary,
	// pools) is counted out: a capture of the same shape is imported,
	// viewed and deleted before the baseline is taken.
	warm, _, err := s.Import(t.Context(), strings.NewReader(text), store.ImportOptions{Name: "warm-up"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Capture(t.Context(), warm.ID); err != nil {
		t.Fatal(err)
	} else if _, err := flame.Build(c, query.Filter{}, subsecond.Range{Start: c.Profile.Start, End: c.Profile.End + 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), warm.ID); err != nil {
		t.Fatal(err)
	}
	before := synth.LiveHeap()
	var last string
	for i := range 12 {
		// Twelve distinct captures of the same shape: another host name each.
		copy := strings.Replace(text, "# hostname : vm\n", fmt.Sprintf("# hostname : vm-%d\n", i), 1)
		p, _, err := s.Import(t.Context(), strings.NewReader(copy), store.ImportOptions{Name: fmt.Sprint("copy ", i)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Capture(t.Context(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		all := subsecond.Range{Start: c.Profile.Start, End: c.Profile.End + 1}
		for _, only := range []string{"", "kernel", "user"} {
			if _, err := flame.Build(c, query.Filter{Only: only}, all); err != nil {
				t.Fatal(err)
			}
		}
		last = p.ID
	}
	// The last capture's indexes are counted from the cache's next use.
	if _, err := s.Capture(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	held := synth.LiveHeap() - before
	if held > budget*5/4 {
		t.Errorf("with a %d MiB cache, the store keeps %.1f MiB live after flame graphs of 12 captures; want at most the budget and a quarter",
			budget>>20, float64(held)/(1<<20))
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(text)
}

// TestCacheStats checks that CacheStats counts Capture's lookups: the
// first after an import that does not warm the cache loads (a miss), the
// next finds the capture kept (a hit), and its bytes are within budget.
func TestCacheStats(t *testing.T) {
	b, _, _ := openSQLite(t)
	const budget = 64 << 20
	s := store.New(b, store.Options{CacheSize: budget, WarmLimit: -1})
	defer s.Close()
	p, _, err := s.Import(t.Context(), strings.NewReader(smallCapture), store.ImportOptions{FileName: "small.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.CacheStats(), (subsecond.CacheStats{Budget: budget}); got != want {
		t.Errorf("CacheStats() after import = %+v; want %+v", got, want)
	}
	for range 2 {
		if _, err := s.Capture(t.Context(), p.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Capture(t.Context(), "nosuchid"); err == nil {
		t.Fatal("Capture(nosuchid) succeeded")
	}
	got := s.CacheStats()
	if got.Hits != 1 || got.Misses != 1 || got.Budget != budget {
		t.Errorf("CacheStats() = %+v; want 1 hit, 1 miss, budget %d", got, budget)
	}
	if got.Bytes <= 0 || got.Bytes > budget {
		t.Errorf("CacheStats().Bytes = %d; want within (0, %d]", got.Bytes, budget)
	}
}
