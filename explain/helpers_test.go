package explain

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
	"github.com/subsecond/subsecond/timeline"
)

// storeSource reads a real store, with the rollups it stores as the
// timeline reads them.
type storeSource struct{ *store.Store }

// importNight writes every capture of n into a store in a temporary
// directory, with markers ms, and returns it.
func importNight(t testing.TB, n *nightgen.Night, ms []subsecond.Marker) storeSource {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.OpenStore(ctx, filepath.Join(t.TempDir(), "night.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i := range n.Captures {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprintf("capture-%02d", i), Host: n.Host}); err != nil {
			t.Fatal(err)
		}
	}
	if len(ms) > 0 {
		if _, err := s.AddMarkers(ctx, n.Host, ms); err != nil {
			t.Fatal(err)
		}
	}
	return storeSource{s}
}

// memSource is a host's captures held in memory, with its markers and,
// when series is set, its series.
type memSource struct {
	ps      []subsecond.Profile
	caps    map[string]*subsecond.Capture
	sums    map[string][]subsecond.ChunkSummary
	markers []subsecond.Marker
}

func (m *memSource) HostProfiles(_ context.Context, host string) ([]subsecond.Profile, error) {
	var out []subsecond.Profile
	for _, p := range m.ps {
		if p.Host == host {
			out = append(out, p)
		}
	}
	return out, nil
}
func (m *memSource) Rollup(_ context.Context, id string) (*subsecond.Rollup, error) {
	return subsecond.NewRollup(m.sums[id]), nil
}
func (m *memSource) Capture(_ context.Context, id string) (*subsecond.Capture, error) {
	c, ok := m.caps[id]
	if !ok {
		return nil, fmt.Errorf("capture %q: %w", id, subsecond.ErrNotFound)
	}
	return c, nil
}
func (m *memSource) Markers(_ context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	var out []subsecond.Marker
	for _, k := range m.markers {
		if k.Time >= from && k.Time < to {
			out = append(out, k)
		}
	}
	return out, nil
}

// add adds a capture built from samples to m.
func (m *memSource) add(host string, meta subsecond.Metadata, samples []subsecond.Sample) {
	b := subsecond.NewBuilder()
	for i := range samples {
		if err := b.Add(&samples[i]); err != nil {
			panic(err)
		}
	}
	id := fmt.Sprintf("c%02d", len(m.ps))
	c := b.Capture(subsecond.Profile{ID: id, Name: id, Host: host, Meta: meta})
	if m.caps == nil {
		m.caps, m.sums = map[string]*subsecond.Capture{}, map[string][]subsecond.ChunkSummary{}
	}
	m.ps = append(m.ps, c.Profile)
	m.caps[id] = c
	m.sums[id] = timeline.Summarize(c)
}

// samplesOf returns capture i of n as parsed samples, with its metadata.
func samplesOf(t testing.TB, n *nightgen.Night, i int) ([]subsecond.Sample, subsecond.Metadata) {
	t.Helper()
	var buf bytes.Buffer
	if err := n.Write(&buf, i, nil); err != nil {
		t.Fatal(err)
	}
	sc := parser.NewScanner(&buf, parser.Options{})
	var out []subsecond.Sample
	for sc.Scan() {
		s := *sc.Sample()
		s.Frames = append([]subsecond.Frame(nil), s.Frames...)
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, sc.Metadata()
}

// memNight returns n's captures in memory, each split at the wall-clock
// times split (none: as written).
func memNight(t testing.TB, n *nightgen.Night, ms []subsecond.Marker, split ...time.Time) *memSource {
	t.Helper()
	m := &memSource{markers: ms}
	for i := range n.Captures {
		ss, meta := samplesOf(t, n, i)
		for len(ss) > 0 {
			k := len(ss)
			for _, at := range split {
				j, _ := slices.BinarySearchFunc(ss, at.UnixNano(), func(s subsecond.Sample, t int64) int { return cmp.Compare(s.Time, t) })
				if j > 0 && j < k {
					k = j
				}
			}
			m.add(n.Host, meta, ss[:k])
			ss = ss[k:]
		}
	}
	return m
}

// Frames of the planted bursts, leaf first.
var (
	decoyStack = []string{
		"ffffffff81300100 shrink_slab+0x20 ([kernel.kallsyms])",
		"ffffffff81300200 drop_caches_sysctl_handler+0x40 ([kernel.kallsyms])",
		"ffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])",
		"55000001000 write+0x10 (/usr/bin/containerd)",
	}
)

// plantedNight is 25 min of 8 CPUs at 49 Hz in two-minute captures, a
// 70 s pause before the seventh (captures start at 0, 120, …, 600, then
// 790, 910, …, 1390 s); six markers "mlx5_core …: reset", each with the
// kubelet in mem_cgroup_nr_lru_pages on CPU 3 from 8 s to 2 s before it
// (the third's window across the rotation point at 360 s); three "eth0:
// link up" markers that match nothing; and a decoy, containerd pegging
// CPU 5 in shrink_slab for 6 s at five times more than a minute from any
// marker.
func plantedNight() (n *nightgen.Night, ms []subsecond.Marker, resets []time.Time) {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	n = &nightgen.Night{Host: "node-1", CPUs: 8, Hz: 49, Start: start, Captures: 12, Length: 2 * time.Minute,
		Gaps: map[int]time.Duration{6: 70 * time.Second}, Unanchored: -1, Seed: 3}
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	for _, s := range []int{100, 270, 364, 650, 970, 1240} {
		m := at(s)
		resets = append(resets, m)
		ms = append(ms, subsecond.Marker{Time: m.UnixNano(), Text: "mlx5_core 0000:3b:00.0: reset"})
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 3, Start: m.Add(-8 * time.Second), End: m.Add(-2 * time.Second)})
	}
	for _, s := range []int{30, 720, 1490} {
		ms = append(ms, subsecond.Marker{Time: at(s).UnixNano(), Text: "eth0: link up"})
	}
	for _, s := range []int{190, 470, 800, 1100, 1400} {
		n.Bursts = append(n.Bursts, nightgen.Burst{CPU: 5, Start: at(s), End: at(s + 6), Comm: "containerd", Stack: decoyStack})
	}
	return n, ms, resets
}
