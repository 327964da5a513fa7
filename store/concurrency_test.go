package store_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// trickle yields its text up to stallAt, then waits for release before
// yielding the rest: an upload whose body stalls midway.
type trickle struct {
	text     []byte
	pos      int
	stallAt  int
	released bool
	stalled  chan struct{} // closed when the reader reaches stallAt
	release  chan struct{}
}

func (r *trickle) Read(p []byte) (int, error) {
	if r.pos == r.stallAt && !r.released {
		close(r.stalled)
		<-r.release
		r.released = true
	}
	if r.pos == len(r.text) {
		return 0, io.EOF
	}
	end := len(r.text)
	if !r.released {
		end = r.stallAt
	}
	n := copy(p, r.text[r.pos:end])
	r.pos += n
	return n, nil
}

// TestTricklingImportStarvesNoWriter starts an import whose input stalls
// halfway, then imports and deletes other profiles: they must complete
// while the first is still waiting for its input, each within a second,
// since an import holds the database's writer only for its final commit.
func TestTricklingImportStarvesNoWriter(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		old, _, err := e.s.Import(ctx, strings.NewReader(badCapture), store.ImportOptions{Name: "old"})
		if err != nil {
			t.Fatal(err)
		}
		text := genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 41})
		slow := &trickle{text: text, stallAt: len(text) / 2, stalled: make(chan struct{}), release: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, _, err := e.s.Import(ctx, slow, store.ImportOptions{Name: "slow"})
			done <- err
		}()
		<-slow.stalled

		start := time.Now()
		p, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Name: "quick"})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("import beside a stalled one: %v", err)
		}
		if took > time.Second {
			t.Errorf("import beside a stalled one took %v; want under a second", took)
		}
		start = time.Now()
		if err := e.s.Delete(ctx, old.ID); err != nil {
			t.Fatalf("delete beside a stalled import: %v", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("delete beside a stalled import took %v; want under a second", took)
		}
		select {
		case err := <-done:
			t.Fatalf("the stalled import finished before its input did: %v", err)
		default:
		}
		close(slow.release)
		if err := <-done; err != nil {
			t.Fatalf("stalled import after its input resumed: %v", err)
		}
		list, err := e.s.List(ctx)
		if err != nil || len(list) != 2 || list[1].ID != p.ID {
			t.Errorf("List = %v, %v; want the slow import, then the quick one", list, err)
		}
	})
}

func TestConcurrentImportsAndReaders(t *testing.T) {
	forEach(t, store.Options{BlockSize: 32 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		seed, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Name: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		texts := [][]byte{
			genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 21}),
			genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 22}),
			genText(t, genConfig{CPUs: 8, Seconds: 4, Hz: 49, Seed: 21}), // the first again
		}
		var wg sync.WaitGroup
		ids := make([]string, len(texts))
		errs := make(chan error, 100)
		for i, text := range texts {
			wg.Go(func() {
				p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{Name: fmt.Sprint("gen", i)})
				if err != nil {
					errs <- fmt.Errorf("import %d: %v", i, err)
					return
				}
				ids[i] = p.ID
			})
		}
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for r := range 4 {
			readers.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					switch (n + r) % 3 {
					case 0:
						if _, err := e.s.List(ctx); err != nil {
							errs <- fmt.Errorf("List: %w", err)
						}
					case 1:
						c, err := e.fresh().Capture(ctx, seed.ID)
						if err != nil || c.Samples.Len() != 4 {
							errs <- fmt.Errorf("Capture during imports: %v", err)
						}
					case 2:
						cols, err := e.s.Window(ctx, seed.ID, subsecond.Range{Start: 100e9, End: 101e9}, nil)
						if err != nil || cols.Len() != 3 {
							errs <- fmt.Errorf("Window during imports: %d samples, %v; want 3", cols.Len(), err)
						}
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if ids[0] == "" || ids[0] != ids[2] {
			t.Errorf("the same text imported twice at once got IDs %q and %q; want one profile", ids[0], ids[2])
		}
		for i, id := range ids[:2] {
			c, err := e.fresh().Capture(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			compareCapture(t, c, buildCapture(t, texts[i]))
		}
		if n := e.rows()["profiles"]; n != 3 {
			t.Errorf("%d profiles; want 3", n)
		}
	})
}

// pausing wraps a Backend so that an import stops inside its transaction,
// after writing its first chunks, and says so on stdout.
type pausing struct{ store.Backend }

func (p pausing) Begin(ctx context.Context, id string) (store.Import, error) {
	im, err := p.Backend.Begin(ctx, id)
	return pausingImport{im}, err
}

type pausingImport struct{ store.Import }

func (p pausingImport) WriteChunks(ctx context.Context, chunks []store.Chunk) error {
	if err := p.Import.WriteChunks(ctx, chunks); err != nil {
		return err
	}
	fmt.Println("inside the transaction")
	select {}
}

// TestHelperImport is not a test on its own: TestKillMidImport runs the
// test binary again with SUBSECOND_HELPER_BACKEND set, and this function
// then imports into that backend's database until it is killed inside the
// import's transaction.
func TestHelperImport(t *testing.T) {
	if os.Getenv("SUBSECOND_HELPER_BACKEND") == "" {
		return
	}
	s := store.New(pausing{helperBackend()}, store.Options{})
	text := genText(t, genConfig{CPUs: 96, Seconds: 30, Hz: 49, Seed: 9})
	_, _, err := s.Import(context.Background(), bytes.NewReader(text), store.ImportOptions{})
	fmt.Println("finished:", err)
	os.Exit(3)
}

// TestKillMidImport kills a process inside an import's transaction, after
// it has written chunks: the database must show neither the profile nor
// any of its rows, and keep what was stored before.
func TestKillMidImport(t *testing.T) {
	if testing.Short() {
		t.Skip("kills an importing child process; run without -short")
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		if _, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Name: "kept"}); err != nil {
			t.Fatal(err)
		}
		before := e.rows()
		cmd, out := startHelper(t, e, "TestHelperImport")
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "inside the transaction" {
			cmd.Process.Kill()
			t.Fatalf("child said %q; want it inside the transaction", sc.Text())
		}
		killHelper(t, cmd, out)
		// A PostgreSQL server notices the lost connection and rolls back
		// on its own time; wait for that, briefly.
		for i := 0; i < 50 && !reflect.DeepEqual(e.rows(), before); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if after := e.rows(); !reflect.DeepEqual(after, before) {
			t.Errorf("row counts after the kill = %v; want %v (no orphan rows)", after, before)
		}
		list, err := e.fresh().List(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "kept" {
			t.Errorf("profiles after the kill = %v, %v; want only the one imported before", list, err)
		}
		if p, _, err := e.s.Import(ctx, strings.NewReader(oddCapture), store.ImportOptions{}); err != nil || p.Samples != 7 {
			t.Errorf("Import after the kill: %v, %v", p, err)
		}
	})
}
