package store

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// lateCapture has samples out of time order, equal times, a sample more
// than a second late (stored with a far seq) and an event whose period
// changes.
const lateCapture = `a 1/1 [000] 20.000000: 100 cycles:
	400100 main+0x20 (/usr/bin/a)

a 1/1 [001] 20.000000: 100 cycles:
	400200 work+0x4 (/usr/bin/a)
	400100 main+0x20 (/usr/bin/a)

b 2/2 [002] 23.000000: 5 instructions:
	400300 spin+0x8 (/usr/bin/b)

a 1/1 [000] 20.000000: 300 cycles:
	400100 main+0x20 (/usr/bin/a)

a 1/1 [003] 22.500000: 100 cycles:
	400100 main+0x20 (/usr/bin/a)

b 2/3 [002] 19.000000: 5 instructions:

a 1/1 [001] 23.000000: 100 cycles:
	400200 work+0x4 (/usr/bin/a)

`

// cached returns the capture the store's cache holds for id, without
// loading it.
func cached(s *Store, id string) *subsecond.Capture {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	for _, e := range s.cache.entries {
		if e.id == id {
			select {
			case <-e.ready:
				return e.c
			default:
			}
		}
	}
	return nil
}

// TestImportWarmsCache checks that Import leaves the capture in the cache,
// identical in every field to what a cold load from SQLite returns.
func TestImportWarmsCache(t *testing.T) {
	ctx := context.Background()
	big := genConfig{CPUs: 48, Seconds: 22, Hz: 49, Seed: 5, Start: 77.25}
	for name, text := range map[string][]byte{
		"small":     []byte(smallCapture),
		"odd":       []byte(oddCapture),
		"late":      []byte(lateCapture),
		"warnings":  []byte(badCapture),
		"generated": genText(t, genConfig{CPUs: 8, Seconds: 3, Hz: 49, Seed: 9, Start: 1e6}),
		"halves":    genText(t, big), // loaded cold in two halves
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := openTest(t)
			p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{FileName: name + ".perf"})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			warm := cached(s, p.ID)
			if warm == nil {
				t.Fatalf("no capture cached after Import")
			}
			if c, err := s.Capture(ctx, p.ID); err != nil || c != warm {
				t.Errorf("Capture = %p, %v; want the cached %p", c, err, warm)
			}
			cold, err := s.loadCapture(ctx, p.ID)
			if err != nil {
				t.Fatalf("loadCapture: %v", err)
			}
			compareCapture(t, warm, cold)
			if !reflect.DeepEqual(warm.Profile, cold.Profile) {
				t.Errorf("cached Profile = %+v\nwant %+v", warm.Profile, cold.Profile)
			}
			if !reflect.DeepEqual(warm, cold) {
				t.Errorf("cached capture differs from the cold load")
			}
			compareCapture(t, warm, buildCapture(t, text))
			if err := checkRefs(warm); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestImportWarmOrder checks the cached order of out-of-order input
// directly: by time, input order among equal times.
func TestImportWarmOrder(t *testing.T) {
	s, _ := openTest(t)
	p, _, err := s.Import(context.Background(), strings.NewReader(lateCapture), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := cached(s, p.ID)
	if c == nil {
		t.Fatal("no capture cached after Import")
	}
	wantTime := []int64{19e9, 20e9, 20e9, 20e9, 22.5e9, 23e9, 23e9}
	wantCPU := []int32{2, 0, 1, 0, 3, 2, 1}
	wantWeight := []uint64{5, 100, 100, 300, 100, 5, 100}
	diff(t, "Time", c.Samples.Time, wantTime)
	diff(t, "CPU", c.Samples.CPU, wantCPU)
	diff(t, "Weight", c.Samples.Weight, wantWeight)
}

// TestImportWarmLimit checks that an import above the limit caches nothing
// and is loaded from SQLite on first use.
func TestImportWarmLimit(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	text := genText(t, genConfig{CPUs: 4, Seconds: 2, Hz: 49, Seed: 2})
	s.warmLimit = 4*2*49 - 1
	p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cached(s, p.ID); c != nil {
		t.Errorf("capture of %d samples cached with a limit of %d", c.Samples.Len(), s.warmLimit)
	}
	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	compareCapture(t, c, buildCapture(t, text))

	s.warmLimit = 4 * 2 * 49
	text = genText(t, genConfig{CPUs: 4, Seconds: 2, Hz: 49, Seed: 3})
	p, _, err = s.Import(ctx, bytes.NewReader(text), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cached(s, p.ID) == nil {
		t.Errorf("capture of exactly the limit (%d samples) not cached", s.warmLimit)
	}
}

// TestFailedImportCachesNothing checks that imports that store nothing
// (cancelled, strict parse error, broken input, not perf text) leave the
// cache empty, and a repeated import leaves it as it was.
func TestFailedImportCachesNothing(t *testing.T) {
	s, path := openTest(t)
	text := genText(t, genConfig{CPUs: 40, Seconds: 10, Hz: 49, Seed: 3}) // three batches
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{Progress: func(int64) {
		if calls++; calls == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Import error = %v; want context.Canceled", err)
	}
	bg := context.Background()
	if _, _, err := s.Import(bg, strings.NewReader(badCapture), ImportOptions{Strict: true}); err == nil {
		t.Errorf("strict Import of a bad capture succeeded")
	}
	if _, _, err := s.Import(bg, &failingReader{data: text[:len(text)/2], err: errors.New("reset")}, ImportOptions{}); err == nil {
		t.Errorf("Import of a failing reader succeeded")
	}
	if _, _, err := s.Import(bg, strings.NewReader("# only a comment\n"), ImportOptions{}); !errors.Is(err, subsecond.ErrNotPerf) {
		t.Errorf("Import of no samples: %v; want ErrNotPerf", err)
	}
	if n := len(s.cache.entries); n != 0 {
		t.Errorf("cache holds %d captures after failed imports; want 0", n)
	}
	assertEmpty(t, path)

	p, _, err := s.Import(bg, strings.NewReader(smallCapture), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := cached(s, p.ID)
	again, existed, err := s.Import(bg, strings.NewReader(smallCapture), ImportOptions{})
	if err != nil || !existed || again.ID != p.ID {
		t.Fatalf("second Import = %v, %v, %v; want the existing profile", again.ID, existed, err)
	}
	if n := len(s.cache.entries); n != 1 || cached(s, p.ID) != first {
		t.Errorf("after a repeated import the cache holds %d captures; want the first one alone", n)
	}
}

// TestDeleteDropsWarmCapture checks that a deleted profile's cached capture
// goes with it.
func TestDeleteDropsWarmCapture(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	p, _, err := s.Import(ctx, strings.NewReader(smallCapture), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Capture(ctx, p.ID); !errors.Is(err, subsecond.ErrNotFound) {
		t.Errorf("Capture after Delete: %v; want ErrNotFound", err)
	}
}
