// Command archive measures how the server's answers and memory follow the
// number of stored profiles: it serves a fresh SQLite database, imports
// small captures over HTTP until the archive holds each count asked for,
// and at each prints the latency of the profile list (/api/profiles), the
// index page (/), the host list (/api/hosts) and its page (/hosts), one
// host's page (/hosts/host-0) and its sessions (/api/hosts/host-0/sessions,
// which its page's picker reads), the list's size, and the server's resident memory idle and at its peak, its
// Go heap in use and the part of that its capture cache holds (bounded by
// --cache-size). The
// aim is answers and idle memory that stay flat as the archive grows. It
// is not run in CI:
//
//	go run ./bench/archive                              # 100, 1,000 and 5,000 profiles
//	go run ./bench/archive -counts 100,1000 -events 65535
//	go run ./bench/archive -bin /tmp/subsecond-old      # another build, to compare
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/subsecond/subsecond/internal/benchserve"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

func run() error {
	countsFlag := flag.String("counts", "100,1000,5000", "comma-separated numbers of stored profiles to measure at, rising")
	events := flag.Int("events", 100, "event names in each capture (at most 65535)")
	hosts := flag.Int("hosts", 20, "hosts the captures come from")
	bin := flag.String("bin", "", "subsecond binary to serve (default: build ./cmd/subsecond)")
	idleFor := flag.Duration("idle", 5*time.Second, "how long the server idles before its memory is read (the Go runtime collects an idle heap every 2 minutes)")
	cacheSize := flag.String("cache-size", "", "the server's --cache-size (default its own)")
	keep := flag.Bool("keep", false, "keep the temporary directory with the database and the server's log")
	flag.Parse()
	var counts []int
	for _, f := range strings.Split(*countsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || len(counts) > 0 && n <= counts[len(counts)-1] {
			return fmt.Errorf("-counts %q: want rising positive numbers", *countsFlag)
		}
		counts = append(counts, n)
	}
	if *events < 1 || *events > 65535 {
		return fmt.Errorf("-events %d: want 1 to 65535", *events)
	}

	dir, err := os.MkdirTemp("", "subsecond-archive-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	if *bin == "" {
		*bin = filepath.Join(dir, "subsecond")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/subsecond").CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
	}
	srv, err := startServer(*bin, dir, *cacheSize)
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Printf("archive: %s against %s: captures of %d samples and %d event names from %d hosts\n\n", *bin, srv.Base, max(*events, 200), *events, *hosts)
	fmt.Printf("%9s %10s %10s %11s %10s %10s %11s %10s %10s %12s %12s %12s %12s\n", "profiles", "import/s", "list", "list bytes", "index", "hosts", "hosts page", "host page", "host API", "idle RSS", "peak RSS", "heap", "cache")

	stored := 0
	for _, n := range counts {
		start := time.Now()
		if err := importUpTo(srv.Base, stored, n, *events, *hosts); err != nil {
			return err
		}
		rate := float64(n-stored) / time.Since(start).Seconds()
		stored = n
		list, size, err := latency(srv.Base + "/api/profiles")
		if err != nil {
			return err
		}
		index, _, err := latency(srv.Base + "/")
		if err != nil {
			return err
		}
		hostList, _, err := latency(srv.Base + "/api/hosts")
		if err != nil {
			return err
		}
		hostsPage, _, err := latency(srv.Base + "/hosts")
		if err != nil {
			return err
		}
		hostPage, _, err := latency(srv.Base + "/hosts/host-0")
		if err != nil {
			return err
		}
		hostAPI, _, err := latency(srv.Base + "/api/hosts/host-0/sessions")
		if err != nil {
			return err
		}
		time.Sleep(*idleFor) // idle, so that the collector and scavenger catch up
		idle, err := srv.ProcStatus("VmRSS")
		if err != nil {
			return err
		}
		peak, err := srv.ProcStatus("VmHWM")
		if err != nil {
			return err
		}
		cache, err := metric(srv.Base, "subsecond_capture_cache_bytes")
		if err != nil {
			return err
		}
		heap, err := metric(srv.Base, "go_memstats_heap_inuse_bytes")
		if err != nil {
			return err
		}
		fmt.Printf("%9d %10.0f %10s %11d %10s %10s %11s %10s %10s %8.0f MiB %8.0f MiB %8.0f MiB %8.0f MiB\n", n, rate, round(list), size, round(index), round(hostList), round(hostsPage),
			round(hostPage), round(hostAPI),
			float64(idle)/(1<<20), float64(peak)/(1<<20), heap/(1<<20), cache/(1<<20))
	}
	return nil
}

// capture returns capture i: one second of 100 Hz on two CPUs, cycling
// through events event names, from one of hosts hosts, compressed.
func capture(i, events, hosts int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# ========\n# hostname : host-%d\n# ========\n#\n", i%hosts)
	n := max(events, 200)
	for k := range n {
		t := int64(1000+i)*1e9 + int64(k)*(1e9/int64(n))
		fmt.Fprintf(&b, "app %d/%d [%03d] %d.%09d: 10101010 ev%d: \n\tffffffff81000%03x work_%d+0x1a ([kernel.kallsyms])\n\t4a1f00 main.main+0x20 (/usr/bin/app)\n\n",
			100+i%7, 100+i%7, k%2, t/1e9, t%1e9, k%events, k%64, k%64)
	}
	zw, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	return zw.EncodeAll(b.Bytes(), nil)
}

// importUpTo uploads captures from to to-1, four at a time.
func importUpTo(base string, from, to, events, hosts int) error {
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= to {
					return
				}
				res, err := http.Post(base+"/api/profiles?name=archive-"+strconv.Itoa(i), "application/octet-stream", bytes.NewReader(capture(i, events, hosts)))
				if err != nil {
					errs[w] = err
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					errs[w] = fmt.Errorf("upload %d: %s", i, res.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// latency returns the median time of five GETs of url, and the size of
// its answer.
func latency(url string) (time.Duration, int, error) {
	var ds []time.Duration
	size := 0
	for range 5 {
		start := time.Now()
		res, err := http.Get(url)
		if err != nil {
			return 0, 0, err
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return 0, 0, err
		}
		if res.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %s", url, res.Status)
		}
		ds = append(ds, time.Since(start))
		size = len(b)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], size, nil
}

// metric returns the value of the server's metric name, a gauge without
// labels.
func metric(base, name string) (float64, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s in %s/metrics", name, base)
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// server is the subsecond serve process under test.
func startServer(bin, dir, cacheSize string) (*benchserve.Server, error) {
	flags := []string{"--db", filepath.Join(dir, "archive.db"), "--no-sample", "--log-level", "warn", "--uploads-per-client", "8", "--metrics", "on"}
	if cacheSize != "" {
		flags = append(flags, "--cache-size", cacheSize)
	}
	return benchserve.Start(bin, dir, flags...)
}
