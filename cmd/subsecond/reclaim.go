package main

import (
	"context"
	"net/http"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// reclaimer returns to the operating system the memory that an idle
// server's heap keeps but no longer uses. An import builds its capture's
// columns and stacks and leaves most of them as garbage; the Go runtime
// collects an idle heap only every two minutes and gives freed pages back
// gradually, so that a server that imported a thousand small captures
// idled at twice the memory it kept live (bench/archive). Once no request
// has run for quiet, if at least threshold bytes of the heap are garbage or
// free pages still resident, reclaim (debug.FreeOSMemory: a collection
// that returns every free page) runs once; requests that keep coming, a
// load balancer's health checks among them, allocate too little to make it
// run again.
type reclaimer struct {
	quiet       time.Duration
	threshold   uint64
	reclaimable func() uint64 // the heap's garbage and free resident bytes
	reclaim     func()

	mu      sync.Mutex
	running int       // requests in progress
	last    time.Time // when the last request ended
}

// newReclaimer returns a reclaimer of the Go runtime's own heap.
func newReclaimer() *reclaimer {
	return &reclaimer{quiet: 30 * time.Second, threshold: 64 << 20, reclaimable: heapReclaimable, reclaim: debug.FreeOSMemory}
}

// wrap returns next, its requests counted.
func (rc *reclaimer) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.running++
		rc.mu.Unlock()
		defer func() {
			rc.mu.Lock()
			rc.running--
			rc.last = time.Now()
			rc.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// check reclaims memory if the server has been idle for quiet at now and
// enough is reclaimable, and reports whether it did.
func (rc *reclaimer) check(now time.Time) bool {
	rc.mu.Lock()
	idle := rc.running == 0 && now.Sub(rc.last) >= rc.quiet
	rc.mu.Unlock()
	if !idle || rc.reclaimable() < rc.threshold {
		return false
	}
	rc.reclaim()
	return true
}

// run checks every interval until ctx ends.
func (rc *reclaimer) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			rc.check(now)
		}
	}
}

// heapReclaimable returns the bytes of the heap that a collection and a
// scavenge would return to the operating system: objects allocated since
// the last collection beyond those it found live, and free pages not yet
// released.
func heapReclaimable() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	objects, live, free := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	return max(objects, live) - live + free
}
