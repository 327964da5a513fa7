package store_test

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/subsecond/subsecond"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// TestRollupMatchesSummaries checks the rollup an import stores against
// the per-second summaries the host views read without it
// (timeline.FromChunks of Store.Summaries), and the rollup made on first
// read for a profile stored without one (imported before rollups were
// stored), which is then stored: for a generated capture of two events,
// its samples out of time order (many chunks a second), and the bundled
// real capture. A deleted profile takes its rollup with it.
func TestRollupMatchesSummaries(t *testing.T) {
	text := genText(t, genConfig{CPUs: 6, Seconds: 5, Hz: 49, Seed: 12, Start: 300.7, Events: 2})
	rc, err := sampledata.Real()
	if err != nil {
		t.Fatal(err)
	}
	real, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		name string
		text []byte
	}{{"generated", text}, {"shuffled", shuffleRecords(text, 3)}, {"real", real}} {
		t.Run(in.name, func(t *testing.T) {
			forEach(t, store.Options{Workers: 2, BlockSize: 8 << 10}, func(t *testing.T, e *env) {
				ctx := context.Background()
				p, _, err := e.s.Import(ctx, bytes.NewReader(in.text), store.ImportOptions{})
				if err != nil {
					t.Fatal(err)
				}
				sums, err := e.s.Summaries(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := timeline.FromChunks(sums)
				if len(want) < 5 {
					t.Fatalf("%d seconds; want at least 5", len(want))
				}
				check := func(how string) {
					t.Helper()
					r, err := e.fresh().Rollup(ctx, p.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got := r.Summaries(); !reflect.DeepEqual(got, want) {
						t.Errorf("%s: rollup of %d seconds differs from the %d seconds of the summaries", how, len(got), len(want))
					}
				}
				check("stored at import")
				if e.rows()["rollups"] != 1 {
					t.Fatalf("%d rollups stored; want 1", e.rows()["rollups"])
				}
				if _, err := e.db.Exec("DELETE FROM rollups"); err != nil {
					t.Fatal(err)
				}
				check("made on first read")
				if n := e.rows()["rollups"]; n != 1 {
					t.Errorf("%d rollups after the first read; want 1 stored", n)
				}
				check("stored on first read")
				if err := e.s.Delete(ctx, p.ID); err != nil {
					t.Fatal(err)
				}
				e.assertEmpty()
				if _, err := e.s.Rollup(ctx, p.ID); err == nil {
					t.Errorf("rollup of a deleted profile: no error")
				}
			})
		})
	}
}

// TestRollupWide checks a rollup whose counts need 32 bits (NewRollup
// keeps them wide), through Summaries.
func TestRollupWide(t *testing.T) {
	sums := []subsecond.ChunkSummary{
		{Start: 0, CPUs: []subsecond.CPUCount{{CPU: 3, Counts: subsecond.Counts{Samples: 70000, Busy: 69000, System: 5}}, {CPU: 7, Event: 1, Counts: subsecond.Counts{Samples: 1}}},
			Comms: []subsecond.CommCount{{Comm: "a", Counts: subsecond.Counts{Samples: 70000, Busy: 69000, System: 5}}}},
		{Start: 2e9, CPUs: []subsecond.CPUCount{{CPU: subsecond.Unknown, Counts: subsecond.Counts{Samples: 4}}}},
		{Start: 3e9, CPUs: []subsecond.CPUCount{{CPU: 1, Counts: subsecond.Counts{Samples: 2, Busy: 1}}, {CPU: 3, Counts: subsecond.Counts{Samples: 1}}}},
	}
	want := timeline.FromChunks(sums)
	if got := subsecond.NewRollup(sums).Summaries(); !reflect.DeepEqual(got, want) {
		t.Errorf("Summaries() = %+v; want %+v", got, want)
	}
}
