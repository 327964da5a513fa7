package store

import (
	"io"
	"sync"
)

// readAhead reads its source in a goroutine of its own, up to aheadBufs
// pieces of aheadPiece bytes ahead of its reader. The import puts it in
// front of a gzip decompressor, so that decompressing runs beside the
// hashing and cutting of the text instead of before them, on the one
// goroutine that every byte goes through.
type readAhead struct {
	src  io.ReadCloser
	full chan *aheadBuf // filled pieces, in order
	free chan *aheadBuf
	stop chan struct{}
	done chan struct{} // closed when the goroutine has returned
	cur  *aheadBuf
	once sync.Once
}

// aheadBuf is one piece read ahead: data[off:] is still to be read, and err
// is the source's error after it.
type aheadBuf struct {
	data []byte
	off  int
	err  error
}

const (
	aheadPiece = 256 << 10
	aheadBufs  = 4
)

// newReadAhead starts reading src ahead. Close stops it and closes src.
func newReadAhead(src io.ReadCloser) *readAhead {
	ra := &readAhead{src: src, full: make(chan *aheadBuf, aheadBufs), free: make(chan *aheadBuf, aheadBufs),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range aheadBufs {
		ra.free <- &aheadBuf{data: make([]byte, aheadPiece)}
	}
	go ra.fill()
	return ra
}

// fill runs in the goroutine: it reads whole pieces until the source fails
// or ends, or Close is called.
func (ra *readAhead) fill() {
	defer close(ra.done)
	for {
		var b *aheadBuf
		select {
		case b = <-ra.free:
		case <-ra.stop:
			return
		}
		// Not io.ReadFull: the source's own errors, io.ErrUnexpectedEOF
		// among them, must pass through as they are.
		data, n := b.data[:cap(b.data)], 0
		var err error
		for n < len(data) && err == nil {
			var m int
			m, err = ra.src.Read(data[n:])
			n += m
		}
		b.data, b.off, b.err = data[:n], 0, err
		select {
		case ra.full <- b:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads the pieces in order, then the source's error after the last.
func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.cur == nil || ra.cur.off == len(ra.cur.data) {
		if ra.cur != nil {
			if ra.cur.err != nil {
				return 0, ra.cur.err
			}
			ra.free <- ra.cur
		}
		ra.cur = <-ra.full
	}
	n := copy(p, ra.cur.data[ra.cur.off:])
	ra.cur.off += n
	return n, nil
}

// Close stops the goroutine, waiting for the read it is in, and closes the
// source. It may be called more than once.
func (ra *readAhead) Close() error {
	var err error
	ra.once.Do(func() {
		close(ra.stop)
		<-ra.done
		err = ra.src.Close()
	})
	return err
}
