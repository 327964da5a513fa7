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
