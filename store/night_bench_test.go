package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
	"github.com/subsecond/subsecond/timeline"
)

// BenchmarkNightSummaries reads every capture's per-second summaries, as
// the host views read them the first time (timeline.FromChunks), from the
// night database $SUBSECOND_NIGHT_DB (bench/nightload writes one); it is
// skipped without it. It reports the summaries' seconds read per op.
//
//	SUBSECOND_NIGHT_DB=/tmp/night.db go test -run '^$' -bench NightSummaries -benchtime 3x ./store
func BenchmarkNightSummaries(b *testing.B) {
	path := os.Getenv("SUBSECOND_NIGHT_DB")
	if path == "" {
		b.Skip("SUBSECOND_NIGHT_DB names no night database (go run ./bench/nightload -db PATH writes one)")
	}
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var secs int
	for b.Loop() {
		secs = 0
		for _, p := range list {
			sums, err := st.Summaries(ctx, p.ID)
			if err != nil {
				b.Fatal(err)
			}
			secs += len(timeline.FromChunks(sums))
		}
	}
	b.ReportMetric(float64(secs), "seconds")
}

// BenchmarkNightRollups reads every capture's rollup, as the host views
// read them the first time (Store.Rollup), from the night database
// $SUBSECOND_NIGHT_DB, as BenchmarkNightSummaries does; a database from
// before rollups gets them made and stored before the timer starts. It
// reports the rollups' seconds and their bytes in memory per op.
//
//	SUBSECOND_NIGHT_DB=/tmp/night.db go test -run '^$' -bench 'Night(Summaries|Rollups)' -benchtime 3x ./store
func BenchmarkNightRollups(b *testing.B) {
	path := os.Getenv("SUBSECOND_NIGHT_DB")
	if path == "" {
		b.Skip("SUBSECOND_NIGHT_DB names no night database (go run ./bench/nightload -db PATH writes one)")
	}
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range list {
		if _, err := st.Rollup(ctx, p.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var secs int
	var bytes int64
	for b.Loop() {
		secs, bytes = 0, 0
		for _, p := range list {
			r, err := st.Rollup(ctx, p.ID)
			if err != nil {
				b.Fatal(err)
			}
			secs += r.Len()
			bytes += r.Bytes()
		}
	}
	b.ReportMetric(float64(secs), "seconds")
	b.ReportMetric(float64(bytes)/(1<<20), "MiB")
}
