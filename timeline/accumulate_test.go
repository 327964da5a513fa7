package timeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/parser"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// timelineBefore is Timeline as it was before it summed each capture's
// rollup column by column: every second's counts added CPU by CPU into
// three [][]int64 grids. The tests hold Timeline to its answers, byte for
// byte.
func timelineBefore(ctx context.Context, src Source, host string, span Span) (*Grid, error) {
	sp, err := plan(ctx, src, host, span)
	if err != nil {
		return nil, err
	}
	from, to, bucket, nb := sp.from, sp.to, sp.bucket, sp.buckets
	const second = int64(time.Second)
	g := &Grid{Host: host, From: from, To: to, Cells: heatmap.Cells{Bucket: bucket, Buckets: int(nb)},
		Covered: make([]float64, nb), Unplaced: sp.unplaced, Resolution: second}
	var rows cpuRows
	var busy, sys [][]int64
	err = eachSecond(ctx, src, sp, perCPU, func(c *Capture) {
		g.Captures = append(g.Captures, *c)
		for b := max(0, (c.Start-from)/bucket); b < nb; b++ {
			lo, hi := from+b*bucket, from+(b+1)*bucket
			if lo >= c.End {
				break
			}
			g.Covered[b] += float64(min(hi, c.End)-max(lo, c.Start)) / float64(bucket)
		}
	}, func(s *subsecond.ChunkSummary, b int64) error {
		for _, cc := range s.CPUs {
			r, err := rows.row(cc.CPU)
			if err != nil {
				return fmt.Errorf("host %q: %w", host, err)
			}
			if r == len(g.CPUs) {
				g.CPUs = append(g.CPUs, cc.CPU)
				g.Samples = append(g.Samples, make([]int64, nb))
				busy = append(busy, make([]int64, nb))
				sys = append(sys, make([]int64, nb))
			}
			g.Samples[r][b] += cc.Samples
			busy[r][b] += cc.Busy
			sys[r][b] += cc.System
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for b := range g.Covered {
		g.Covered[b] = min(g.Covered[b], 1)
	}
	order := make([]int, len(g.CPUs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(g.CPUs[a], g.CPUs[b]) })
	cpus, samples := make([]int32, len(order)), make([][]int64, len(order))
	g.Busy, g.System = make([][]float64, len(order)), make([][]float64, len(order))
	for i, r := range order {
		cpus[i], samples[i] = g.CPUs[r], g.Samples[r]
		g.Busy[i], g.System[i] = make([]float64, nb), make([]float64, nb)
		for b, n := range samples[i] {
			if n > 0 {
				g.Busy[i][b] = math.Round(float64(busy[r][b])/float64(n)*1e4) / 1e4
				g.System[i][b] = math.Round(float64(sys[r][b])/float64(n)*1e4) / 1e4
			}
		}
	}
	g.CPUs, g.Samples = cpus, samples
	if g.Captures == nil {
		g.Captures = []Capture{}
	}
	return g, nil
}

// rollupSource is a host's captures held in memory as their profiles and
// rollups.
type rollupSource struct {
	ps    []subsecond.Profile
	rolls map[string]*subsecond.Rollup
}

func (m *rollupSource) HostProfiles(_ context.Context, host string) ([]subsecond.Profile, error) {
	var out []subsecond.Profile
	for _, p := range m.ps {
		if p.Host == host {
			out = append(out, p)
		}
	}
	return out, nil
}
func (m *rollupSource) Rollup(_ context.Context, id string) (*subsecond.Rollup, error) {
	return m.rolls[id], nil
}
func (m *rollupSource) Capture(context.Context, string) (*subsecond.Capture, error) {
	return nil, errors.New("no samples in memory")
}

// add adds capture id on host, its own clock's [start, end) placed on the
// wall clock offset ns later, with rollup r.
func (m *rollupSource) add(id, host string, start, end, offset int64, cpus int, r *subsecond.Rollup) {
	var n int64
	for i := range r.Len() {
		for _, c := range r.CPUCounts(i, nil) {
			n += c.Samples
		}
	}
	m.ps = append(m.ps, subsecond.Profile{ID: id, Name: id, Host: host, Start: start, End: end, Samples: max(n, 1), CPUs: cpus,
		FrequencyHz: 49, Wall: subsecond.WallClock{Offset: offset, Source: subsecond.WallRealtime}})
	m.rolls[id] = r
}

// incidentNight is the bundled sample placed five times on one host's
// wall clock, listed out of time order: at offsets that are no whole
// second, the second overlapping the first by 0.6 s, a pause before the
// fourth, the fifth between the first two.
func incidentNight(t *testing.T) *rollupSource {
	t.Helper()
	r, err := sampledata.Incident()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := parser.NewScanner(r, parser.Options{})
	bl := subsecond.NewBuilder()
	for sc.Scan() {
		if err := bl.Add(sc.Sample()); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	c := bl.Capture(subsecond.Profile{})
	roll := subsecond.NewRollup(Summarize(c))
	base := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).UnixNano() - c.Profile.Start
	length := c.Profile.End - c.Profile.Start
	m := &rollupSource{rolls: map[string]*subsecond.Rollup{}}
	for i, at := range []int64{
		3*length + int64(7*time.Minute) + 123_456_789,
		int64(370 * time.Millisecond),
		length - int64(230*time.Millisecond),
		2*length + int64(5*time.Minute) + 999_999_999,
		length / 2,
	} {
		m.add(fmt.Sprintf("incident-%d", i), "node-1", c.Profile.Start, c.Profile.End, base+at, c.Profile.CPUs, roll)
	}
	return m
}

// randomNight is a host's captures of random lengths, CPUs and counts at
// random offsets, overlapping and listed out of order: each capture has
// its own CPUs (ids up to 300, some only in a few seconds), some seconds
// have counts past 16 bits or an entry of no samples, and every fifth
// second none at all.
func randomNight(seed uint64) *rollupSource {
	rnd := rand.New(rand.NewPCG(seed, 1))
	m := &rollupSource{rolls: map[string]*subsecond.Rollup{}}
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).UnixNano()
	for i := range 40 {
		secs := 1 + rnd.IntN(150)
		var cpus []int32
		for cpu := range int32(300) {
			if rnd.IntN(3) == 0 {
				cpus = append(cpus, cpu)
			}
		}
		var sums []subsecond.ChunkSummary
		for s := range secs {
			if s%5 == 4 {
				continue
			}
			sum := subsecond.ChunkSummary{Start: int64(s) * int64(time.Second)}
			for _, cpu := range cpus {
				if rnd.IntN(4) == 0 && s > 0 {
					continue
				}
				n := int64(rnd.IntN(100))
				if rnd.IntN(500) == 0 {
					n = 70_000 + int64(rnd.IntN(1000))
				}
				busy := rnd.Int64N(n + 1)
				sum.CPUs = append(sum.CPUs, subsecond.CPUCount{CPU: cpu, Counts: subsecond.Counts{Samples: n, Busy: busy, System: rnd.Int64N(busy + 1)}})
			}
			sums = append(sums, sum)
		}
		r := subsecond.NewRollup(sums)
		if r.Len() == 0 {
			continue
		}
		m.add(fmt.Sprintf("random-%02d", i), "node-1", 0, int64(secs)*int64(time.Second)-int64(time.Second)/49, at, len(cpus), r)
		at += int64(secs)*int64(time.Second) + rnd.Int64N(int64(40*time.Second)) - int64(20*time.Second)
	}
	rnd.Shuffle(len(m.ps), func(i, j int) { m.ps[i], m.ps[j] = m.ps[j], m.ps[i] })
	return m
}

// shuffledNight imports the test's night into a real store in the order
// 4, 1, 5, 0, 3, 2 rather than that of time.
func shuffledNight(t *testing.T) Source {
	t.Helper()
	n := testNight()
	ctx := context.Background()
	s, err := sqlite.OpenStore(ctx, filepath.Join(t.TempDir(), "night.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, i := range []int{4, 1, 5, 0, 3, 2} {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(n.Write(pw, i, nil)) }()
		if _, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: fmt.Sprintf("capture-%d", i), Host: n.Host}); err != nil {
			t.Fatal(err)
		}
	}
	return storeSource{s}
}

// TestTimelineAsBefore holds Timeline's grids to those of timelineBefore,
// byte for byte as JSON, on the bundled sample, a stored night imported
// out of order and random nights, over whole nights and ranges that start
// and end inside captures, in columns of whole and of fractional seconds.
func TestTimelineAsBefore(t *testing.T) {
	ctx := context.Background()
	sources := map[string]Source{"incident": incidentNight(t), "stored": shuffledNight(t)}
	for seed := range uint64(3) {
		sources[fmt.Sprintf("random-%d", seed)] = randomNight(seed)
	}
	for name, src := range sources {
		caps, _, err := HostCaptures(ctx, src, "node-1")
		if err != nil {
			t.Fatal(err)
		}
		first, last := caps[0].Start, caps[len(caps)-1].End
		for _, c := range caps {
			last = max(last, c.End)
		}
		c := caps[len(caps)/2]
		mid := c.Start + (c.End-c.Start)/3 + 123_456_789
		for _, span := range []Span{
			{},
			{MaxCells: 5000},
			{Bucket: int64(time.Second)},
			{Bucket: int64(7 * time.Second)},
			{Bucket: int64(1500 * time.Millisecond)},
			{Bucket: int64(time.Hour)},
			{From: mid, To: mid + int64(4*time.Minute) + 1, Bucket: int64(time.Second)},
			{From: mid, Bucket: int64(13 * time.Second)},
			{From: first - int64(time.Minute), To: mid},
		} {
			want, werr := timelineBefore(ctx, src, "node-1", span)
			got, gerr := Timeline(ctx, src, "node-1", span)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s, %+v: error %v; before %v", name, span, gerr, werr)
			}
			if werr != nil {
				continue
			}
			if len(want.CPUs) == 0 {
				t.Fatalf("%s, %+v: no CPUs before; the case tests nothing", name, span)
			}
			wj, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			gj, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gj, wj) {
				t.Errorf("%s, %+v: the grid differs from before's: %s", name, span, gridDiff(got, want))
			}
		}
	}
}

// gridDiff describes the first difference between grids got and want.
func gridDiff(got, want *Grid) string {
	if !slices.Equal(got.CPUs, want.CPUs) {
		return fmt.Sprintf("CPUs %v; want %v", got.CPUs, want.CPUs)
	}
	for r := range want.CPUs {
		for b := range want.Buckets {
			if got.Samples[r][b] != want.Samples[r][b] || got.Busy[r][b] != want.Busy[r][b] || got.System[r][b] != want.System[r][b] {
				return fmt.Sprintf("CPU %d, column %d: %d samples, %v busy, %v system; want %d, %v, %v", want.CPUs[r], b,
					got.Samples[r][b], got.Busy[r][b], got.System[r][b], want.Samples[r][b], want.Busy[r][b], want.System[r][b])
			}
		}
	}
	return "outside the cells (columns, coverage or captures)"
}
