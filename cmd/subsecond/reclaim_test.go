package main

import (
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"
	"time"
)

// TestReclaimer serves requests through a reclaimer over a real HTTP
// server: memory is reclaimed only once no request has run for the quiet
// time and enough of the heap is reclaimable, never while a request runs,
// and not again until more is.
func TestReclaimer(t *testing.T) {
	var garbage uint64 = 100 << 20
	reclaimed := 0
	rc := &reclaimer{quiet: 30 * time.Second, threshold: 64 << 20,
		reclaimable: func() uint64 { return garbage },
		reclaim:     func() { reclaimed++; garbage = 0 }}
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(rc.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
	})))
	defer srv.Close()
	get := func(path string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}

	done := make(chan struct{})
	go func() { defer close(done); get("/slow") }()
	<-entered
	if rc.check(time.Now().Add(time.Hour)) {
		t.Errorf("check an hour into a request = true; want false while it runs")
	}
	close(release)
	<-done
	rc.mu.Lock()
	end := rc.last
	rc.mu.Unlock()
	if rc.check(end.Add(rc.quiet - time.Nanosecond)) {
		t.Errorf("check before the quiet time = true; want false")
	}
	if !rc.check(end.Add(rc.quiet)) || reclaimed != 1 {
		t.Errorf("check after the quiet time reclaimed %d times; want once", reclaimed)
	}
	get("/healthz")
	garbage = 1 << 20
	rc.mu.Lock()
	end = rc.last
	rc.mu.Unlock()
	if rc.check(end.Add(time.Hour)) || reclaimed != 1 {
		t.Errorf("check after a request that left 1 MiB reclaimed %d times in all; want once", reclaimed)
	}
}

// TestHeapReclaimable: garbage left by a large allocation counts, and a
// collection that returns free pages leaves less than the threshold. The
// collector is off meanwhile, so that the garbage is still there to count.
func TestHeapReclaimable(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.FreeOSMemory()
	before := heapReclaimable()
	keep := make([][]byte, 0, 256)
	for range 256 {
		keep = append(keep, make([]byte, 1<<20))
	}
	keep = nil
	if got := heapReclaimable(); got < before+200<<20 && got < 200<<20 {
		t.Errorf("heapReclaimable after 256 MiB of garbage = %d MiB (before %d MiB); want at least 200 MiB", got>>20, before>>20)
	}
	debug.FreeOSMemory()
	if got := heapReclaimable(); got >= newReclaimer().threshold {
		t.Errorf("heapReclaimable after FreeOSMemory = %d MiB; want under %d MiB", got>>20, newReclaimer().threshold>>20)
	}
}
