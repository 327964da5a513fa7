package store_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/subsecond/subsecond/store"
)

// TestImportSmallAllocatesLittle: the import of a capture of a few
// kilobytes whose size is known (as an upload's Content-Length, an
// imported file's) allocates a few times its size, not the parse
// pipeline's blocks of 4 MiB whole (three of them took half its time).
func TestImportSmallAllocatesLittle(t *testing.T) {
	text := readText(t, filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz"))
	// The header and the first 20 samples: records end with a blank line.
	end := 0
	for range 20 {
		end += bytes.Index(text[end:], []byte("\n\n")) + 2
	}
	small := text[:end]
	be, _, _ := openSQLite(t)
	s := store.New(be, store.Options{})
	defer s.Close()
	imp := func(n int) {
		again := append([]byte(fmt.Sprintf("# small %d\n", n)), small...)
		if _, _, err := s.Import(context.Background(), bytes.NewReader(again), store.ImportOptions{FileName: "small", Size: int64(len(again))}); err != nil {
			t.Fatal(err)
		}
	}
	imp(0) // what a process sets up once: encoders, statements
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	imp(1)
	runtime.ReadMemStats(&m1)
	got := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("the import of %d bytes allocated %d bytes", len(small), got)
	if got > 4<<20 {
		t.Errorf("the import of %d bytes allocated %d bytes; want at most 4 MiB", len(small), got)
	}
}
