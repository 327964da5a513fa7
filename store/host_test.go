package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// TestImportHostAndWallClock imports real captures: the host comes from
// "# hostname" unless the import names one, "unknown" without either, and
// the wall-clock anchor survives the round trip through the database.
func TestImportHostAndWallClock(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join("..", "testdata", "wallclock", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	rt, _, err := s.Import(ctx, open("realtime-2cpu-1s.perf.txt.gz"), ImportOptions{FileName: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := s.Import(ctx, open("boot-a-2cpu-1s.perf.txt.gz"), ImportOptions{FileName: "boot", Host: "db-7"})
	if err != nil {
		t.Fatal(err)
	}
	bare, _, err := s.Import(ctx, strings.NewReader("cc1 11361 [000]   464.971906:    2004008 cpu-clock:ppp: \n"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, host string
		wall     subsecond.WallClock
	}{
		{rt.ID, "vm", subsecond.WallClock{Source: subsecond.WallRealtime}},
		// captured on Mon Nov 30 17:11:08 2026; last sample at 309.806709 s.
		{boot.ID, "db-7", subsecond.WallClock{Offset: 1796058668_500_000_000 - 309_806_709_000, Source: subsecond.WallCapturedOn, Approximate: true}},
		{bare.ID, subsecond.UnknownHost, subsecond.WallClock{}},
	} {
		p, err := s.Profile(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Host != tt.host || p.Wall != tt.wall {
			t.Errorf("profile %s: host %q, wall %+v; want %q, %+v", p.FileName, p.Host, p.Wall, tt.host, tt.wall)
		}
	}
	if rt.Host != "vm" || boot.Host != "db-7" {
		t.Errorf("Import returned hosts %q and %q; want vm and db-7", rt.Host, boot.Host)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %d profiles, %v", len(list), err)
	}
	for _, p := range list {
		if p.Host == "" {
			t.Errorf("List: profile %s has no host", p.ID)
		}
	}
}

func TestMarkers(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	ms := []subsecond.Marker{{Time: 3e18, Text: "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out"}, {Time: 1e18, Text: "mlx5_core: reset"}}
	if n, err := s.AddMarkers(ctx, "node-1", ms); err != nil || n != 2 {
		t.Fatalf("AddMarkers = %d, %v; want 2 new", n, err)
	}
	if n, err := s.AddMarkers(ctx, "node-1", ms[:1]); err != nil || n != 0 {
		t.Errorf("AddMarkers of a stored marker = %d, %v; want 0 new", n, err)
	}
	if _, err := s.AddMarkers(ctx, "node-1", []subsecond.Marker{{Time: 5, Text: "ok"}, {Time: 6, Text: ""}}); err == nil {
		t.Error("AddMarkers with an empty text: no error")
	}
	if _, err := s.AddMarkers(ctx, "a/b", ms); err == nil {
		t.Error("AddMarkers for host a/b: no error")
	}
	got, err := s.Markers(ctx, "node-1", 0, 4e18)
	if err != nil || len(got) != 2 || got[0] != ms[1] || got[1] != ms[0] {
		t.Errorf("Markers = %+v, %v; want both in time order, and nothing of the refused batch", got, err)
	}
	if got, _ := s.Markers(ctx, "node-1", 2e18, 4e18); len(got) != 1 {
		t.Errorf("Markers in [2e18, 4e18) = %+v; want one", got)
	}
	if got, _ := s.Markers(ctx, "node-2", 0, 4e18); len(got) != 0 {
		t.Errorf("another host's markers = %+v; want none", got)
	}
}
