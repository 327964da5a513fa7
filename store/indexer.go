package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subsecond/subsecond"
)

// An import answers once its capture is committed; the capture's fleet
// index is built and written after that, in a transaction of its own
// (Backend.WriteIndex), by a goroutine of the Store. On a fresh database
// building and writing the index took 9–25 ms of the real 5 s capture's
// 54 ms import and 26–56 ms of a fresh 10 s `perf record` capture's 165 ms,
// all of it on the way to the upload's answer, although only the fleet's
// views read it.
//
// What the fleet's views read stays what they read before: every method
// that reads the index waits first for the indexes still being written
// (indexer.wait), so an upload that has answered is in the next fleet
// answer. A write that failed (the database down) is retried by the next
// reader, which runs Reindex; a process that ends first leaves its captures
// without an index, as a capture imported before the index existed, and
// `serve` indexes them at start (Reindex, which `subsecond reindex` also
// runs). Close waits for the writes in flight.

// indexSlots bounds the indexes being built and written at once; an
// import that finds them all taken writes its own before it returns, so
// that imports faster than the database cannot pile up finished captures
// in memory.
const indexSlots = 2

// indexTimeout bounds one index write.
const indexTimeout = 2 * time.Minute

// closeWait bounds how long Close waits for the index writes in flight
// before it cancels them, so that a server stopping while its database
// hangs stops; their captures are indexed at the next start (Reindex).
var closeWait = 10 * time.Second

// indexer tracks the fleet index writes that imports left running.
type indexer struct {
	ctx     context.Context // the writes', cancelled by Close after closeWait
	cancel  context.CancelFunc
	slots   chan struct{}
	mu      sync.Mutex
	pending int
	idle    chan struct{} // closed while pending is 0
	failed  atomic.Bool   // a write failed since the last Reindex
	redo    sync.Mutex    // one Reindex after failures at a time
	// written and failures count the writes done and failed (IndexStats).
	written, failures atomic.Int64
}

func newIndexer() *indexer {
	idle := make(chan struct{})
	close(idle)
	ctx, cancel := context.WithCancel(context.Background())
	return &indexer{ctx: ctx, cancel: cancel, slots: make(chan struct{}, indexSlots), idle: idle}
}

// close waits for the writes in flight, for at most closeWait, then
// cancels those left and waits for them to return.
func (x *indexer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if x.wait(ctx) != nil {
		x.cancel()
		x.wait(context.Background())
	}
	x.cancel()
}

// take reserves a slot for a write, without waiting; false when all are
// taken.
func (x *indexer) take() bool {
	select {
	case x.slots <- struct{}{}:
	default:
		return false
	}
	x.mu.Lock()
	if x.pending == 0 {
		x.idle = make(chan struct{})
	}
	x.pending++
	x.mu.Unlock()
	return true
}

// done releases a slot that take reserved.
func (x *indexer) done() {
	x.mu.Lock()
	x.pending--
	if x.pending == 0 {
		close(x.idle)
	}
	x.mu.Unlock()
	<-x.slots
}

// wait returns once no write is in flight, or with ctx's error.
func (x *indexer) wait(ctx context.Context) error {
	x.mu.Lock()
	idle := x.idle
	x.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// indexLater builds and writes the fleet index of profile p, just
// committed, in a goroutine of its own when a slot is free, else before it
// returns, and then releases res's chunks. A write that fails leaves the
// capture stored, and to the next reader's Reindex.
func (s *Store) indexLater(res *parsed, p *subsecond.Profile, boot int64) {
	write := func() {
		defer res.chunks.release()
		ctx, cancel := context.WithTimeout(s.ix.ctx, indexTimeout)
		defer cancel()
		ix, err := s.importIndex(ctx, res, p, boot)
		if err == nil && ix != nil {
			_, err = s.b.WriteIndex(ctx, p.ID, ix)
		}
		if errors.Is(err, subsecond.ErrNotFound) { // deleted meanwhile: nothing to index
			return
		}
		if err != nil {
			s.ix.failed.Store(true)
			s.ix.failures.Add(1)
			return
		}
		if ix != nil {
			s.ix.written.Add(1)
		}
		s.changes.Add(1)
	}
	if !s.ix.take() {
		write()
		return
	}
	go func() {
		defer s.ix.done()
		write()
	}()
}

// IndexStats returns the fleet index writes under way, done and failed
// since the Store began.
func (s *Store) IndexStats() subsecond.IndexStats {
	s.ix.mu.Lock()
	pending := s.ix.pending
	s.ix.mu.Unlock()
	return subsecond.IndexStats{Pending: pending, Written: s.ix.written.Load(), Failed: s.ix.failures.Load()}
}

// Indexed waits until the fleet index of every capture this Store has
// imported is written: the writes still in flight, then, when one failed,
// Reindex. Every method that reads the fleet index calls it first.
func (s *Store) Indexed(ctx context.Context) error {
	if err := s.ix.wait(ctx); err != nil {
		return err
	}
	if !s.ix.failed.Load() {
		return nil
	}
	s.ix.redo.Lock()
	defer s.ix.redo.Unlock()
	if !s.ix.failed.Swap(false) {
		return nil
	}
	if _, err := s.Reindex(ctx); err != nil {
		s.ix.failed.Store(true)
		return err
	}
	return nil
}
