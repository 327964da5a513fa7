package store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// gatedIndex is a backend whose fleet index writes wait for gate to be
// closed (when it is not nil) and fail while fail is above 0, counting
// down; started receives the ID of each write as it starts.
type gatedIndex struct {
	store.Backend
	gate    chan struct{}
	started chan string
	fail    *atomic.Int32
}

func (b gatedIndex) WriteIndex(ctx context.Context, id string, ix *store.Index) (bool, error) {
	if b.started != nil {
		b.started <- id
	}
	if b.gate != nil {
		select {
		case <-b.gate:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if b.fail != nil && b.fail.Add(-1) >= 0 {
		return false, errors.New("disk on fire")
	}
	return b.Backend.WriteIndex(ctx, id, ix)
}

// realCapture returns the text of the repository's real 5 s capture
// (which has a wall clock, so it is indexed) with a first line of its
// own, so that each call's is a new capture to the store.
func realCapture(t *testing.T, n int) []byte {
	t.Helper()
	text := readText(t, filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz"))
	return append([]byte(fmt.Sprintf("# capture %d\n", n)), text...)
}

// TestIndexAfterAnswer: an import answers before its capture's fleet index
// is written, and the fleet's readers of the same store wait for that write,
// so that they see every capture it answered for; a reader whose context
// ends first gets its error.
func TestIndexAfterAnswer(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		b := gatedIndex{Backend: e.b, gate: make(chan struct{}), started: make(chan string, 1)}
		s := store.New(b, store.Options{})
		imported := make(chan error, 1)
		var id string
		go func() {
			p, _, err := s.Import(ctx, bytes.NewReader(realCapture(t, 1)), store.ImportOptions{})
			if err == nil {
				id = p.ID
			}
			imported <- err
		}()
		select {
		case err := <-imported:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			close(b.gate)
			t.Fatal("the import waited for its fleet index to be written")
		}
		if got := <-b.started; got != id {
			t.Fatalf("index written for %s; want %s", got, id)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := s.IndexedCaptures(short, 0, 1<<62); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("IndexedCaptures while the index is written, with a short deadline: %v; want the deadline's error", err)
		}
		read := make(chan int, 1)
		go func() {
			ics, err := s.IndexedCaptures(ctx, 0, 1<<62)
			if err != nil {
				t.Error(err)
			}
			read <- len(ics)
		}()
		select {
		case n := <-read:
			t.Fatalf("IndexedCaptures answered (%d captures) before the index was written", n)
		case <-time.After(100 * time.Millisecond):
		}
		close(b.gate)
		if n := <-read; n != 1 {
			t.Errorf("IndexedCaptures after the write = %d captures; want the one imported", n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// importHeld imports a real capture through a Store over b whose fleet
// index writes wait for the gate it returns, and returns once the
// capture's write has started.
func importHeld(t *testing.T, b store.Backend) (*store.Store, *subsecond.Profile, chan struct{}) {
	t.Helper()
	g := gatedIndex{Backend: b, gate: make(chan struct{}), started: make(chan string, 1)}
	s := store.New(g, store.Options{})
	p, _, err := s.Import(context.Background(), bytes.NewReader(realCapture(t, 1)), store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-g.started
	return s, p, g.gate
}

// TestIndexOfDeleted: a capture deleted before its fleet index is written
// leaves no index and counts no failure.
func TestIndexOfDeleted(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		s, p, gate := importHeld(t, e.b)
		if err := s.Delete(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		close(gate)
		if err := s.Indexed(ctx); err != nil {
			t.Fatal(err)
		}
		if st := s.IndexStats(); st.Failed != 0 || st.Written != 0 || st.Pending != 0 {
			t.Errorf("IndexStats after the capture was deleted = %+v; want nothing written, failed or pending", st)
		}
		if n := e.fleetRows(); n != 0 {
			t.Errorf("%d fleet rows of a deleted capture", n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIndexRetried: a fleet index write that fails leaves the import
// answered and its capture stored; the next reader of the fleet index
// writes it (Reindex) and sees the capture.
func TestIndexRetried(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		var fail atomic.Int32
		fail.Store(1)
		s := store.New(gatedIndex{Backend: e.b, fail: &fail}, store.Options{})
		p, _, err := s.Import(ctx, bytes.NewReader(realCapture(t, 1)), store.ImportOptions{})
		if err != nil {
			t.Fatalf("import whose index failed to be written: %v; want it stored", err)
		}
		if err := s.Indexed(ctx); err != nil {
			t.Fatal(err)
		}
		if fail.Load() >= 0 {
			t.Fatalf("%d index writes left to fail; want the one that failed and the retry", fail.Load())
		}
		checkIndex(t, s, p)
	})
}

// TestIndexSlots: with indexSlots (2) writes in flight, the next import
// writes its capture's index itself before it answers, so that imports
// faster than the database do not pile up.
func TestIndexSlots(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		b := gatedIndex{Backend: e.b, gate: make(chan struct{}), started: make(chan string, 3)}
		s := store.New(b, store.Options{})
		defer s.Close()
		for i := range 2 {
			if _, _, err := s.Import(ctx, bytes.NewReader(realCapture(t, i)), store.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		third := make(chan error, 1)
		go func() {
			_, _, err := s.Import(ctx, bytes.NewReader(realCapture(t, 2)), store.ImportOptions{})
			third <- err
		}()
		for range 3 {
			<-b.started
		}
		select {
		case err := <-third:
			t.Fatalf("the third import answered (%v) while two index writes were in flight and its own waited", err)
		case <-time.After(100 * time.Millisecond):
		}
		close(b.gate)
		if err := <-third; err != nil {
			t.Fatal(err)
		}
		ics, err := s.IndexedCaptures(ctx, 0, 1<<62)
		if err != nil || len(ics) != 3 {
			t.Errorf("IndexedCaptures = %d, %v; want 3", len(ics), err)
		}
	})
}

// TestCloseWritesIndex: Close waits for the index writes in flight, as
// `subsecond import` closes its store before it exits: another process
// finds every capture indexed.
func TestCloseWritesIndex(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		other, err := reopen(e.name, e.where)
		if err != nil {
			t.Fatal(err)
		}
		s := store.New(other, store.Options{})
		for i := range 3 {
			if _, _, err := s.Import(ctx, bytes.NewReader(realCapture(t, i)), store.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		ids, err := e.b.Unindexed(ctx)
		if err != nil || len(ids) != 0 {
			t.Errorf("Unindexed after Close = %v, %v; want none", ids, err)
		}
	})
}

// TestCloseCancelsHungWrites: Close waits for an index write that does not
// end only so long (SetCloseWait), then cancels it and closes; the capture
// is stored and left to Reindex.
func TestCloseCancelsHungWrites(t *testing.T) {
	defer store.SetCloseWait(store.SetCloseWait(200 * time.Millisecond))
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		other, err := reopen(e.name, e.where) // Close closes it
		if err != nil {
			t.Fatal(err)
		}
		s, p, gate := importHeld(t, other)
		start := time.Now()
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			close(gate)
			t.Fatal("Close waited for a write that does not end")
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("Close returned after %v, before its wait", d)
		}
		ids, err := e.b.Unindexed(ctx)
		if err != nil || len(ids) != 1 || ids[0] != p.ID {
			t.Errorf("Unindexed after Close = %v, %v; want [%s]", ids, err, p.ID)
		}
	})
}

// TestHelperImportUnindexed is not a test on its own: TestKillBeforeIndex
// runs the test binary again with SUBSECOND_HELPER_BACKEND set, and this
// function then imports a capture whose fleet index write never ends,
// says so, and waits to be killed.
func TestHelperImportUnindexed(t *testing.T) {
	if os.Getenv("SUBSECOND_HELPER_BACKEND") == "" {
		return
	}
	s := store.New(gatedIndex{Backend: helperBackend(), gate: make(chan struct{})}, store.Options{})
	p, _, err := s.Import(context.Background(), bytes.NewReader(realCapture(t, 1)), store.ImportOptions{})
	if err != nil {
		fmt.Println("import:", err)
		os.Exit(2)
	}
	fmt.Println(p.ID)
	select {}
}

// TestKillBeforeIndex kills a process after its import answered and
// before the capture's fleet index was written: the capture is stored,
// Unindexed lists it, and Reindex (which `serve` runs at start) writes the
// index that the import would have.
func TestKillBeforeIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("kills an importing child process; run without -short")
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		cmd, out := startHelper(t, e, "TestHelperImportUnindexed")
		sc := bufio.NewScanner(out)
		if !sc.Scan() || !store.ValidID(sc.Text()) {
			cmd.Process.Kill()
			t.Fatalf("child said %q; want the ID of the capture it imported", sc.Text())
		}
		id := sc.Text()
		killHelper(t, cmd, out)
		s := e.fresh()
		if _, err := s.Profile(ctx, id); err != nil {
			t.Fatalf("the capture whose import answered: %v", err)
		}
		ids, err := e.b.Unindexed(ctx)
		if err != nil || len(ids) != 1 || ids[0] != id {
			t.Fatalf("Unindexed = %v, %v; want [%s]", ids, err, id)
		}
		if n, err := s.Reindex(ctx); err != nil || n != 1 {
			t.Fatalf("Reindex = %d, %v; want 1", n, err)
		}
		p, err := s.Profile(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		checkIndex(t, s, p)
	})
}
