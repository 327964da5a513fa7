package store

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/subsecond/subsecond"
)

// spoolMemory is how many bytes of encoded chunks an import keeps in
// memory; past it they go to a temporary file, so that a large import's
// memory does not grow with its samples.
const spoolMemory = 64 << 20

// writeBatch is the bytes of chunk data handed to the backend at a time.
const writeBatch = 8 << 20

// chunkSpool keeps an import's encoded chunks until Store.Import writes
// them. It is safe for concurrent use by the encoders.
type chunkSpool struct {
	mu     sync.Mutex
	dir    string
	chunks []spooled
	mem    int64
	file   *os.File // unlinked once created: a killed process leaves nothing
	off    int64
}

type spooled struct {
	Chunk
	off, n int64 // where Data is in file, when Data is nil
}

func newChunkSpool(dir string) *chunkSpool { return &chunkSpool{dir: dir} }

// add keeps ch.
func (s *chunkSpool) add(ch Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mem+int64(len(ch.Data)) <= spoolMemory {
		s.mem += int64(len(ch.Data))
		s.chunks = append(s.chunks, spooled{Chunk: ch})
		return nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "subsecond-import-*")
		if err != nil {
			return fmt.Errorf("spool chunks: %w", noSpace(err))
		}
		os.Remove(f.Name())
		s.file = f
	}
	if _, err := s.file.WriteAt(ch.Data, s.off); err != nil {
		return fmt.Errorf("spool chunks: %w", noSpace(err))
	}
	sp := spooled{Chunk: ch, off: s.off, n: int64(len(ch.Data))}
	sp.Data = nil
	s.off += sp.n
	s.chunks = append(s.chunks, sp)
	return nil
}

// sort puts the chunks in (Second, Seq) order.
func (s *chunkSpool) sort() {
	slices.SortFunc(s.chunks, func(a, b spooled) int {
		return cmp.Or(cmp.Compare(a.Second, b.Second), cmp.Compare(a.Seq, b.Seq))
	})
}

// sorted returns the chunks in (Second, Seq) order, without their Data.
func (s *chunkSpool) sorted() []Chunk {
	s.sort()
	out := make([]Chunk, len(s.chunks))
	for i, sp := range s.chunks {
		out[i] = sp.Chunk
		out[i].Data = nil
	}
	return out
}

// each calls fn with the chunks in (Second, Seq) order, in batches of
// about writeBatch bytes.
func (s *chunkSpool) each(fn func([]Chunk) error) error {
	s.sort()
	var batch []Chunk
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := fn(batch)
		batch, size = batch[:0], 0
		return err
	}
	for _, sp := range s.chunks {
		ch := sp.Chunk
		if ch.Data == nil && sp.n > 0 {
			ch.Data = make([]byte, sp.n)
			if _, err := s.file.ReadAt(ch.Data, sp.off); err != nil {
				return fmt.Errorf("read spooled chunks: %w", err)
			}
		}
		batch = append(batch, ch)
		size += len(ch.Data)
		if size >= writeBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// bytes returns the encoded size of the chunks and their summaries.
func (s *chunkSpool) bytes() int64 {
	var n int64
	for _, sp := range s.chunks {
		n += int64(len(sp.Data)) + sp.n + int64(len(sp.Summary))
	}
	return n
}

// noSpace marks err with subsecond.ErrNoSpace when it is ENOSPC.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", subsecond.ErrNoSpace, err)
	}
	return err
}

// release drops the chunks and the temporary file.
func (s *chunkSpool) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.chunks = nil
}
