package lru

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// item is a value whose bytes are its size plus what has grown from it.
type item struct {
	size  int64
	grown atomic.Int64
}

func newItem(size int64) *item { return &item{size: size} }

func newCache(budget int64) *Cache[string, *item] {
	return New[string](Options[*item]{
		Budget:  budget,
		Size:    func(it *item) int64 { return it.size },
		Growing: func(it *item) int64 { return it.grown.Load() },
	})
}

// keys returns the keys c holds, most recently used first.
func keys(c *Cache[string, *item]) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for el := c.lru.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*entry[string, *item]).key)
	}
	return out
}

// TestEviction checks that the least recently used values go first, as
// many as the bytes of the values arriving need, and that a value larger
// than the whole budget is returned but neither kept nor pushes others out.
func TestEviction(t *testing.T) {
	type op struct {
		get  bool // Get rather than Put
		key  string
		size int64
	}
	tests := []struct {
		name  string
		ops   []op
		want  []string // most recently used first
		bytes int64
	}{
		{"fits", []op{{false, "a", 3}, {false, "b", 3}, {false, "c", 4}}, []string{"c", "b", "a"}, 10},
		{"oldest out", []op{{false, "a", 4}, {false, "b", 4}, {false, "c", 4}}, []string{"c", "b"}, 8},
		{"used stays", []op{{false, "a", 4}, {false, "b", 4}, {true, "a", 0}, {false, "c", 4}}, []string{"c", "a"}, 8},
		{"loaded stays", []op{{true, "a", 4}, {true, "b", 4}, {true, "a", 0}, {true, "c", 4}}, []string{"c", "a"}, 8},
		{"by bytes", []op{{false, "a", 2}, {false, "b", 2}, {false, "c", 2}, {false, "d", 2}, {false, "big", 7}}, []string{"big", "d"}, 9},
		{"replaced", []op{{false, "a", 4}, {false, "b", 4}, {false, "a", 6}}, []string{"a", "b"}, 10},
		{"oversize put", []op{{false, "a", 4}, {false, "b", 4}, {false, "huge", 11}}, []string{"b", "a"}, 8},
		{"oversize load", []op{{false, "a", 4}, {false, "b", 4}, {true, "huge", 11}}, []string{"b", "a"}, 8},
		{"whole budget", []op{{false, "a", 4}, {true, "all", 10}}, []string{"all"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(10)
			for _, o := range tt.ops {
				if !o.get {
					c.Put(o.key, newItem(o.size))
					continue
				}
				want := newItem(o.size)
				got, _, err := c.Get(t.Context(), o.key, func(context.Context) (*item, error) { return want, nil })
				if err != nil || (o.size > 0 && got != want) {
					t.Fatalf("Get(%s) = %v, %v; want the value loaded", o.key, got, err)
				}
			}
			if got := keys(c); !slices.Equal(got, tt.want) {
				t.Errorf("keys = %v; want %v", got, tt.want)
			}
			if got := c.Bytes(); got != tt.bytes {
				t.Errorf("Bytes() = %d; want %d", got, tt.bytes)
			}
		})
	}
}

// TestOversizeReturned checks that a load larger than the budget reaches
// its caller, as a miss, and is loaded again on the next Get.
func TestOversizeReturned(t *testing.T) {
	c := newCache(10)
	loads := 0
	load := func(context.Context) (*item, error) { loads++; return newItem(11), nil }
	for i := range 2 {
		it, hit, err := c.Get(t.Context(), "huge", load)
		if err != nil || hit || it == nil || it.size != 11 {
			t.Fatalf("Get #%d of an oversize value = %v, %v, %v; want it, a miss", i, it, hit, err)
		}
	}
	if loads != 2 || c.Contains("huge") || c.Bytes() != 0 {
		t.Errorf("%d loads, Contains = %v, %d bytes; want 2 loads and nothing kept", loads, c.Contains("huge"), c.Bytes())
	}
}

// TestGrowingMeasuredOnGet checks that what grows from a value after it
// entered counts from the next use of the cache, evicting the least
// recently used to make room, and that a value that grows past the whole
// budget goes.
func TestGrowingMeasuredOnGet(t *testing.T) {
	c := newCache(10)
	a, b := newItem(3), newItem(3)
	c.Put("a", a)
	c.Put("b", b)
	a.grown.Store(2)
	if got := c.Bytes(); got != 6 {
		t.Errorf("Bytes() before another use = %d; want 6", got)
	}
	c.Get(t.Context(), "b", nil)
	if got := c.Bytes(); got != 8 {
		t.Errorf("Bytes() after a Get = %d; want the 2 grown counted, 8", got)
	}
	b.grown.Store(3) // 5 + 6 > 10: a, the least recently used, goes
	c.Get(t.Context(), "b", nil)
	if got, want := keys(c), []string{"b"}; !slices.Equal(got, want) || c.Bytes() != 6 {
		t.Errorf("keys = %v, %d bytes; want %v, 6 bytes", got, c.Bytes(), want)
	}
	b.grown.Store(8)
	c.Put("c", newItem(1))
	if got, want := keys(c), []string{"c"}; !slices.Equal(got, want) || c.Bytes() != 1 {
		t.Errorf("after b outgrew the budget: keys = %v, %d bytes; want %v, 1 byte", got, c.Bytes(), want)
	}
}

// TestSharedLoad checks that concurrent misses for one key load it once,
// all of them getting the one value.
func TestSharedLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(100)
		var loads atomic.Int32
		release := make(chan struct{})
		want := newItem(1)
		load := func(context.Context) (*item, error) {
			loads.Add(1)
			<-release
			return want, nil
		}
		const n = 8
		var wg sync.WaitGroup
		var hits atomic.Int32
		for range n {
			wg.Go(func() {
				got, hit, err := c.Get(t.Context(), "k", load)
				if err != nil || got != want {
					t.Errorf("Get = %v, %v; want the loaded value", got, err)
				}
				if hit {
					hits.Add(1)
				}
			})
		}
		synctest.Wait() // every caller is loading or waiting on the load
		close(release)
		wg.Wait()
		if loads.Load() != 1 || hits.Load() != n-1 {
			t.Errorf("%d loads, %d hits for %d concurrent misses; want 1 load, %d hits", loads.Load(), hits.Load(), n, n-1)
		}
	})
}

// TestCancelledLoadReloaded checks that when the caller loading a key
// gives up, a caller waiting on it with a live context loads it again
// itself, and the cache keeps that value.
func TestCancelledLoadReloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(100)
		var loads atomic.Int32
		gaveUp, cancel := context.WithCancel(t.Context())
		first := make(chan error, 1)
		go func() {
			_, _, err := c.Get(gaveUp, "k", func(ctx context.Context) (*item, error) {
				loads.Add(1)
				<-ctx.Done()
				return nil, fmt.Errorf("read k: %w", ctx.Err())
			})
			first <- err
		}()
		synctest.Wait()
		want := newItem(1)
		second := make(chan error, 1)
		go func() {
			got, hit, err := c.Get(t.Context(), "k", func(context.Context) (*item, error) {
				loads.Add(1)
				return want, nil
			})
			if got != want || hit {
				err = fmt.Errorf("got %v, hit %v; want its own load, a miss (%v)", got, hit, err)
			}
			second <- err
		}()
		synctest.Wait() // the second caller waits on the first's load
		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled caller's Get: %v; want context.Canceled", err)
		}
		if err := <-second; err != nil {
			t.Errorf("the live caller's Get: %v", err)
		}
		if loads.Load() != 2 || !c.Contains("k") {
			t.Errorf("%d loads, kept %v; want 2 loads, the second kept", loads.Load(), c.Contains("k"))
		}
	})
}

// TestWaiterGivesUp checks that a caller waiting on another's load
// returns when its own context ends, and the load goes on to be kept.
func TestWaiterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(100)
		release := make(chan struct{})
		loaded := make(chan error, 1)
		go func() {
			_, _, err := c.Get(t.Context(), "k", func(context.Context) (*item, error) {
				<-release
				return newItem(1), nil
			})
			loaded <- err
		}()
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, hit, err := c.Get(ctx, "k", nil); !errors.Is(err, context.Canceled) || hit {
			t.Errorf("Get with an ended context = %v, %v; want context.Canceled, no hit", hit, err)
		}
		close(release)
		if err := <-loaded; err != nil {
			t.Fatal(err)
		}
		if !c.Contains("k") || c.Bytes() != 1 {
			t.Errorf("after the load: kept %v, %d bytes; want it kept", c.Contains("k"), c.Bytes())
		}
	})
}

// TestFailedLoad checks that a load's error reaches the callers waiting
// on it and that nothing is kept, so the next Get loads again; a panicking
// load likewise leaves no entry for later callers to wait on.
func TestFailedLoad(t *testing.T) {
	errLoad := errors.New("no such value")
	tests := []struct {
		name string
		load func(context.Context) (*item, error)
		want error // what the waiting caller gets
	}{
		{"error", func(context.Context) (*item, error) { return nil, errLoad }, errLoad},
		{"panic", func(context.Context) (*item, error) { panic("load failed") }, errPanicked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCache(100)
				release := make(chan struct{})
				go func() {
					defer func() { recover() }()
					c.Get(t.Context(), "k", func(ctx context.Context) (*item, error) {
						<-release
						return tt.load(ctx)
					})
				}()
				synctest.Wait()
				waited := make(chan error, 1)
				go func() {
					_, _, err := c.Get(t.Context(), "k", nil)
					waited <- err
				}()
				synctest.Wait()
				close(release)
				if err := <-waited; !errors.Is(err, tt.want) {
					t.Errorf("the waiting caller's Get: %v; want %v", err, tt.want)
				}
				synctest.Wait()
				if c.Contains("k") {
					t.Error("a failed load is kept")
				}
				want := newItem(1)
				if got, hit, err := c.Get(t.Context(), "k", func(context.Context) (*item, error) { return want, nil }); got != want || hit || err != nil {
					t.Errorf("Get after a failed load = %v, %v, %v; want a fresh load", got, hit, err)
				}
			})
		})
	}
}

// TestChangedDuringLoad checks that a Remove or Put of a key while it
// loads wins: the load still reaches its callers but is not kept.
func TestChangedDuringLoad(t *testing.T) {
	put := newItem(2)
	tests := []struct {
		name   string
		change func(c *Cache[string, *item])
		want   *item // kept afterwards
	}{
		{"remove", func(c *Cache[string, *item]) { c.Remove("k") }, nil},
		{"put", func(c *Cache[string, *item]) { c.Put("k", put) }, put},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCache(100)
				release := make(chan struct{})
				loaded := newItem(1)
				got := make(chan *item, 1)
				go func() {
					v, _, _ := c.Get(t.Context(), "k", func(context.Context) (*item, error) {
						<-release
						return loaded, nil
					})
					got <- v
				}()
				synctest.Wait()
				tt.change(c)
				close(release)
				if v := <-got; v != loaded {
					t.Errorf("the loading caller got %v; want what it loaded", v)
				}
				var kept *item
				if c.Contains("k") {
					kept, _, _ = c.Get(t.Context(), "k", nil)
				}
				if kept != tt.want || c.Bytes() != tt.want.bytes() {
					t.Errorf("kept %v, %d bytes; want %v", kept, c.Bytes(), tt.want)
				}
			})
		})
	}
}

func (it *item) bytes() int64 {
	if it == nil {
		return 0
	}
	return it.size + it.grown.Load()
}

func BenchmarkGetHit(b *testing.B) {
	c := newCache(1 << 20)
	for i := range 100 {
		c.Put(fmt.Sprint(i), newItem(1))
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.Get(ctx, "42", nil)
	}
}

// TestPeek checks that Peek returns a loaded value and makes it the most
// recently used, and reports false, loading nothing, for a key it does not
// hold, one being loaded and one whose load failed.
func TestPeek(t *testing.T) {
	c := newCache(100)
	ctx := context.Background()
	if _, ok := c.Peek("a"); ok || c.Contains("a") {
		t.Fatalf("Peek(a) of an empty cache = true or loaded it")
	}
	c.Put("a", newItem(1))
	c.Put("b", newItem(1))
	if v, ok := c.Peek("a"); !ok || v.size != 1 {
		t.Errorf("Peek(a) = %v, %v; want the value put, true", v, ok)
	}
	if got, want := keys(c), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("after Peek(a), keys = %v; want %v", got, want)
	}
	loading, release := make(chan struct{}), make(chan struct{})
	go c.Get(ctx, "slow", func(context.Context) (*item, error) {
		close(loading)
		<-release
		return newItem(1), nil
	})
	<-loading
	if _, ok := c.Peek("slow"); ok {
		t.Errorf("Peek(slow) while it loads = true; want false")
	}
	close(release)
	if _, _, err := c.Get(ctx, "bad", func(context.Context) (*item, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("the failing load did not fail")
	}
	if _, ok := c.Peek("bad"); ok {
		t.Errorf("Peek(bad) after a failed load = true; want false")
	}
}
