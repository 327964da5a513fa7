package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// soakHost writes a host as bench/soak's uploaders make one: n captures
// of the bundled incident (96 CPUs, 120 s), 5 s apart on the host's wall
// clock from 2026-11-29T08:53:20Z, with the series cpu.sys of CPUs 38–40
// over each and a marker in the middle of every third. It returns the
// store (its capture cache holding the captures, as a serving store's
// does) and the wall-clock start of capture k.
func soakHost(b *testing.B, n int) (storeSource, func(k int) int64) {
	b.Helper()
	ctx := context.Background()
	capture, err := os.ReadFile("../sample-data/incident-96cpu-120s.perf.txt.zst")
	if err != nil {
		b.Fatal(err)
	}
	var truth struct {
		T0   int64 `json:"t0_ns"`
		Last int64 `json:"last_ns"`
	}
	tb, err := os.ReadFile("../sample-data/incident-96cpu-120s.perf.txt.truth.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(tb, &truth); err != nil {
		b.Fatal(err)
	}
	span := truth.Last - truth.T0
	wallStart := func(k int) int64 {
		return 1796000000*int64(time.Second) + int64(k)*(span+5*int64(time.Second))
	}
	s, err := sqlite.OpenStore(ctx, filepath.Join(b.TempDir(), "soak.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	const host = "soak-0"
	for k := range n {
		var body bytes.Buffer
		zw, _ := zstd.NewWriter(&body)
		wall := wallStart(k)
		fmt.Fprintf(zw, "# bench capture : %d\n# reference time : %s = %d.%09d (TOD) = %d.%09d (realtime)\n",
			k, time.Unix(0, wall).UTC().Format("2006-01-02 15:04:05.000000"), wall/1e9, wall%1e9, truth.T0/1e9, truth.T0%1e9)
		zw.Close()
		body.Write(capture)
		if _, _, err := s.Import(ctx, &body, store.ImportOptions{FileName: fmt.Sprintf("soak-%02d", k), Host: host}); err != nil {
			b.Fatal(err)
		}
		var ss []subsecond.Series
		for _, cpu := range []int32{38, 39, 40} {
			sr := subsecond.Series{Name: "cpu.sys", CPU: cpu}
			for t := int64(0); t < span; t += int64(time.Second) {
				sr.Points = append(sr.Points, subsecond.Point{Time: wall + t, Value: float64((t/int64(time.Second)*7 + int64(cpu)) % 23)})
			}
			ss = append(ss, sr)
		}
		if _, err := s.AddSeries(ctx, host, ss); err != nil {
			b.Fatal(err)
		}
		if k%3 == 0 {
			m := subsecond.Marker{Time: wall + span/2, Text: fmt.Sprintf("NETDEV WATCHDOG: eth0 (soak): transmit queue %d timed out", k%16)}
			if _, err := s.AddMarkers(ctx, host, []subsecond.Marker{m}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return storeSource{s}, wallStart
}

// BenchmarkSoakAnalyses times the host analyses bench/soak's readers ask
// for, on a host of 12 captures as its uploaders make them: Moves with a
// command and with a series over five captures, and Explain of the
// NETDEV markers against 200 control windows. Each computes from the
// captures the store's cache holds, no cache of answers in front; then
// explain-counted explains other seeds through a Cache holding the
// windows' counts.
//
//	go test -run '^$' -bench SoakAnalyses -benchtime 10x ./explain
func BenchmarkSoakAnalyses(b *testing.B) {
	ctx := context.Background()
	src, wallStart := soakHost(b, 12)
	const host = "soak-0"
	from, to := wallStart(5), wallStart(10)
	b.Run("moves-comm", func(b *testing.B) {
		for range b.N {
			if _, err := Moves(ctx, src, host, MoveOptions{From: from, To: to, Feature: &Feature{Kind: KindComm, Comm: "ksoftirqd/39", CPU: subsecond.Unknown}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("moves-series", func(b *testing.B) {
		for range b.N {
			if _, err := Moves(ctx, src, host, MoveOptions{From: from, To: to, Series: &subsecond.SeriesKey{Name: "cpu.sys", CPU: 39}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("explain", func(b *testing.B) {
		for i := range b.N {
			if _, err := Explain(ctx, src, host, Options{Match: regexp.MustCompile("NETDEV"), Seed: uint64(1 + i%5)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Explanations of seeds not asked before through a cache that holds
	// the windows' counts: the windows counted once.
	cache := NewCache(0)
	if _, _, err := cache.Explain(ctx, src, host, Options{Match: regexp.MustCompile("NETDEV")}, nil); err != nil {
		b.Fatal(err)
	}
	seed := uint64(100)
	b.Run("explain-counted", func(b *testing.B) {
		for range b.N {
			seed++
			if _, hit, err := cache.Explain(ctx, src, host, Options{Match: regexp.MustCompile("NETDEV"), Seed: seed}, nil); err != nil || hit {
				b.Fatal(hit, err)
			}
		}
	})
}
