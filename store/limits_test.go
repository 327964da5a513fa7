package store_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// repeated returns n copies of one small sample: text that compresses to
// almost nothing.
func repeated(n int) []byte {
	return bytes.Repeat([]byte("a 1/1 [000] 100.000001: 1 c:\n\tf\n\n"), n)
}

func zstdOf(t testing.TB, b []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll(b, nil)
}

func gzipOf(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestImportLimits refuses input past each limit with an error that wraps
// subsecond.ErrTooLarge and names the limit, and stores nothing.
func TestImportLimits(t *testing.T) {
	amplified := zstdOf(t, repeated(200_000)) // ~5 MB of text, 200k samples
	if len(amplified) > 64<<10 {
		t.Fatalf("amplifying input is %d bytes compressed; want a few KiB", len(amplified))
	}
	inner := zstdOf(t, repeated(50_000))
	tests := []struct {
		name string
		in   []byte
		opt  store.ImportOptions
		want string
	}{
		{"samples past the cap", amplified, store.ImportOptions{MaxSamples: 150_000}, "more than 150000 samples"},
		{"text past the cap", amplified, store.ImportOptions{MaxText: 1 << 20}, "larger than the limit of 1048576 bytes (--max-text)"},
		{"plain text past the cap", repeated(100_000), store.ImportOptions{MaxText: 1 << 20}, "--max-text"},
		{"zstd inside zstd", zstdOf(t, inner), store.ImportOptions{}, "zstd inside zstd"},
		{"zstd inside gzip", gzipOf(t, inner), store.ImportOptions{}, "zstd inside gzip"},
		{"gzip inside zstd", zstdOf(t, gzipOf(t, repeated(1000))), store.ImportOptions{}, "gzip inside zstd"},
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		for _, tt := range tests {
			_, _, err := e.s.Import(context.Background(), bytes.NewReader(tt.in), tt.opt)
			if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: Import error = %v; want ErrTooLarge saying %q", tt.name, err, tt.want)
			}
		}
		e.assertEmpty()
		// Within the limits the same input is accepted.
		p, _, err := e.s.Import(context.Background(), bytes.NewReader(amplified), store.ImportOptions{MaxSamples: 200_000})
		if err != nil || p.Samples != 200_000 {
			t.Errorf("Import at the sample cap: %v, %v; want 200000 samples", p, err)
		}
	})
}

// TestStoreLimits checks that the Store's own limits apply when an import
// sets none.
func TestStoreLimits(t *testing.T) {
	forEach(t, store.Options{MaxSamples: 1000, MaxText: 1 << 30}, func(t *testing.T, e *env) {
		_, _, err := e.s.Import(context.Background(), bytes.NewReader(repeated(1001)), store.ImportOptions{})
		if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "more than 1000 samples") {
			t.Errorf("Import of 1001 samples under a cap of 1000: %v; want ErrTooLarge", err)
		}
		if _, _, err := e.s.Import(context.Background(), bytes.NewReader(repeated(1000)), store.ImportOptions{}); err != nil {
			t.Errorf("Import of 1000 samples under a cap of 1000: %v", err)
		}
	})
}

// events returns a capture of n samples, each of its own event.
func events(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "a 1/1 [%03d] 100.%06d: 1 ev%d:\n\tf\n\n", i%4, i%1_000_000, i)
	}
	return b.Bytes()
}

// TestTooManyEvents imports captures with the most event names an event
// index holds and one more: the first is stored and read back, the second
// refused with an error naming the limit, in blocks parsed in parallel
// (each worker's own event indexes are below the limit).
func TestTooManyEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 65,535 events; run without -short")
	}
	forEach(t, store.Options{Workers: 3, BlockSize: 256 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		_, _, err := e.s.Import(ctx, bytes.NewReader(events(subsecond.MaxEvents+1)), store.ImportOptions{})
		if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "more than 65535 distinct event names") {
			t.Errorf("Import of 65,536 events: %v; want ErrTooLarge naming the limit", err)
		}
		e.assertEmpty()
		p, _, err := e.s.Import(ctx, bytes.NewReader(events(subsecond.MaxEvents)), store.ImportOptions{})
		if err != nil {
			t.Fatalf("Import of 65,535 events: %v", err)
		}
		c, err := e.fresh().Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := c.Samples.Len() - 1
		if len(c.Profile.Events) != subsecond.MaxEvents || c.Samples.Event[last] != subsecond.MaxEvents-1 ||
			c.Profile.Events[c.Samples.Event[last]].Name != "ev65534" {
			t.Errorf("capture of 65,535 events: %d events, last sample's %d; want the last to be ev65534",
				len(c.Profile.Events), c.Samples.Event[last])
		}
	})
}
