package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/subsecond/subsecond"
)

// Default bounds of an upload's pace and of the uploads one client may run.
const (
	// DefaultMinUploadRate is the slowest pace an upload may keep, in
	// bytes per second over each DefaultRateWindow it spends waiting for
	// the client.
	DefaultMinUploadRate = 64 << 10
	DefaultRateWindow    = 30 * time.Second
	// DefaultAuthWait bounds the time an upload whose token travels in the
	// form may take to send it: deadlines are extended for uploads only
	// once they are authorised.
	DefaultAuthWait = 10 * time.Second
	// DefaultUploadsPerClient bounds the uploads in progress from one
	// client address.
	DefaultUploadsPerClient = 4
)

// errTimeout marks an upload that was too slow: 408.
var errTimeout = errors.New("upload too slow")

// uploadBody is an upload's request body as the server reads it, bounded
// in size (http.MaxBytesReader), in time (read deadlines: a short one until
// the upload is authorised, then the upload timeout) and in pace: over each
// window of time spent waiting for the client, it must send at least
// minRate bytes a second, or the read is cut short. Time the server spends
// not reading (parsing, waiting for the database) does not count against
// the client. The body remembers what ended it, so that the response says
// so whatever its consumer wrapped the error in.
type uploadBody struct {
	r      io.Reader
	rc     *http.ResponseController
	rate   int64
	window time.Duration

	mu        sync.Mutex
	n         int64         // bytes read
	blocked   time.Duration // time spent waiting in Read, finished reads
	readStart time.Time     // when the current Read began; zero outside Read
	winN      int64         // n when the current window began
	winAt     time.Duration // blocked time when the current window began
	slow      bool          // the pace fell below the rate: reads fail
	ttl       time.Duration // the deadline last set, for the message
	overflow  *http.MaxBytesError
	err       error // the body's first error other than EOF
	done      chan struct{}
}

// newUploadBody returns r's body bounded as s's configuration says, with a
// read deadline of wait until extend is called. Call stop once done.
func (s *Server) newUploadBody(w http.ResponseWriter, r *http.Request, wait time.Duration) *uploadBody {
	b := &uploadBody{
		r:      http.MaxBytesReader(w, r.Body, s.maxUpload),
		rc:     http.NewResponseController(w),
		rate:   s.minRate,
		window: s.rateWindow,
		done:   make(chan struct{}),
	}
	b.setDeadline(wait)
	go b.watch()
	return b
}

// setDeadline sets the read deadline d from now, and a write deadline a
// minute later for the answer. Deadlines fail where unsupported (HTTP/2
// handles them per stream), which only leaves the server's defaults.
func (b *uploadBody) setDeadline(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slow {
		return
	}
	b.ttl = d
	_ = b.rc.SetReadDeadline(time.Now().Add(d))
	_ = b.rc.SetWriteDeadline(time.Now().Add(d + time.Minute))
}

// stop ends the pace watch.
func (b *uploadBody) stop() { close(b.done) }

func (b *uploadBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.slow {
		b.mu.Unlock()
		return 0, errTimeout
	}
	b.readStart = time.Now()
	b.mu.Unlock()
	n, err := b.r.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blocked += time.Since(b.readStart)
	b.readStart = time.Time{}
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			b.overflow = mbe
		}
	}
	return n, err
}

// watch checks the pace a few times per window until stop: a window of
// waiting that brought fewer than rate bytes a second ends the upload by
// moving the read deadline to now.
func (b *uploadBody) watch() {
	tick := time.NewTicker(min(time.Second, max(time.Millisecond, b.window/20)))
	defer tick.Stop()
	for {
		select {
		case <-b.done:
			return
		case now := <-tick.C:
			b.mu.Lock()
			waited := b.blocked
			if !b.readStart.IsZero() {
				waited += now.Sub(b.readStart)
			}
			if waited-b.winAt >= b.window {
				if float64(b.n-b.winN) < float64(b.rate)*b.window.Seconds() {
					b.slow = true
					_ = b.rc.SetReadDeadline(now)
					b.mu.Unlock()
					return
				}
				b.winN, b.winAt = b.n, waited
			}
			b.mu.Unlock()
		}
	}
}

// cause returns the error that describes why the upload failed with err:
// the body's own fault when it had one (too large, too slow, too long,
// broken off), whatever the reader's consumer wrapped it in; else err.
func (b *uploadBody) cause(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.overflow != nil:
		return b.overflow
	case b.slow:
		return errorf(errTimeout, "the upload was slower than %s/s over %s; send it faster", sizeText(b.rate), b.window)
	case b.err != nil && errors.Is(b.err, os.ErrDeadlineExceeded):
		return errorf(errTimeout, "the upload took longer than its limit of %s", b.ttl)
	case b.err != nil:
		return fmt.Errorf("file: the upload broke off after %d bytes (%v): %w", b.n, b.err, subsecond.ErrInvalid)
	}
	return err
}

// sizeText writes n bytes in KiB or MiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// clientUploads counts the uploads in progress per client address.
type clientUploads struct {
	mu  sync.Mutex
	max int
	n   map[string]int
}

// enter counts an upload from client in, or refuses it with errTooMany
// when the client has max in progress; release counts it out.
func (c *clientUploads) enter(client string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[client] >= c.max {
		return nil, errorf(errTooMany, "%d uploads from your address are in progress, this server's limit; wait for one to finish", c.max)
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[client]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n[client]--; c.n[client] <= 0 {
			delete(c.n, client)
		}
	}, nil
}

// errTooMany marks a client over its upload limit: 429.
var errTooMany = errors.New("too many uploads")
