package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// t0 is a wall-clock time on a block boundary: 2023-11-14 22:20 UTC.
const t0 = int64(1_699_999_200e9)

// regular returns n points from start, step ns apart, with values f(i).
func regular(start, step int64, n int, f func(i int) float64) []subsecond.Point {
	ps := make([]subsecond.Point, n)
	for i := range ps {
		ps[i] = subsecond.Point{Time: start + int64(i)*step, Value: f(i)}
	}
	return ps
}

func TestSeriesRoundTrip(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		// 25 minutes: three blocks, the first and last partly.
		start := t0 + 7*60e9
		in := []subsecond.Series{
			{Name: "cpu.sys", CPU: 1, Points: regular(start, 1e9, 1500, func(i int) float64 { return float64(i%97) / 7 })},
			{Name: "cpu.sys", CPU: subsecond.Unknown, Points: regular(start, 1e9, 1500, func(i int) float64 { return 1.25 })},
			{Name: "cpu.sys", CPU: 0, Points: regular(start+5e8, 2e9, 10, func(i int) float64 { return 99.99 })},
			{Name: "irq", CPU: 0, Label: "45:mlx5_comp3", Points: regular(start, 3e9, 100, func(i int) float64 { return 1234.5678 })},
			{Name: "mem.available", CPU: subsecond.Unknown, Points: regular(start, 1e9, 20, func(i int) float64 { return 64e9 + float64(i) })},
			{Name: "load1", CPU: subsecond.Unknown, Points: regular(start, 1e9, 3, func(i int) float64 { return 0.527 })},
		}
		n, err := e.s.AddSeries(ctx, "node-1", in)
		if err != nil || n.Added != 1500+1500+10+100+20+3 || n.Refused != 0 {
			t.Fatalf("AddSeries = %d, %v; want 3133 new points", n.Added, err)
		}
		got, err := e.s.Series(ctx, "node-1", "cpu.sys", 0, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		want := []subsecond.Series{in[1], in[2], in[0]} // by CPU, Unknown first
		for i := range want[2].Points {
			want[2].Points[i].Value = math.Round(want[2].Points[i].Value*100) / 100
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Series(cpu.sys) = %d series; want %d, values to 0.01:\n%+v", len(got), len(want), got)
		}
		got, _ = e.s.Series(ctx, "node-1", "irq", start+3e9, start+9e9)
		if len(got) != 1 || got[0].Label != "45:mlx5_comp3" || !reflect.DeepEqual(got[0].Points,
			[]subsecond.Point{{Time: start + 3e9, Value: 1234.568}, {Time: start + 6e9, Value: 1234.568}}) {
			t.Errorf("Series(irq) in [3 s, 9 s) = %+v; want 2 points of 1234.568, a rate to 0.001", got)
		}
		got, _ = e.s.Series(ctx, "node-1", "load1", 0, math.MaxInt64)
		if len(got) != 1 || got[0].Points[0].Value != 0.53 {
			t.Errorf("Series(load1) = %+v; want 0.53, to 0.01", got)
		}
		got, _ = e.s.Series(ctx, "node-1", "mem.available", 0, math.MaxInt64)
		if len(got) != 1 || !reflect.DeepEqual(got[0].Points, in[4].Points) {
			t.Errorf("Series(mem.available) = %+v; want the bytes exactly", got)
		}
		if got, err := e.s.Series(ctx, "node-2", "cpu.sys", 0, math.MaxInt64); err != nil || got == nil || len(got) != 0 {
			t.Errorf("Series of another host = %v, %v; want none", got, err)
		}
		if _, err := e.s.Series(ctx, "node-1", "cpu.bogus", 0, 1); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("Series of an unknown kind: %v; want ErrInvalid", err)
		}

		names, err := e.s.SeriesNames(ctx, "node-1")
		if err != nil {
			t.Fatal(err)
		}
		wantNames := []subsecond.SeriesExtent{
			{Name: "cpu.sys", CPU: -1, First: start, Last: start + 1499e9},
			{Name: "cpu.sys", CPU: 0, First: start + 5e8, Last: start + 5e8 + 18e9},
			{Name: "cpu.sys", CPU: 1, First: start, Last: start + 1499e9},
			{Name: "irq", CPU: 0, Label: "45:mlx5_comp3", First: start, Last: start + 297e9},
			{Name: "mem.available", CPU: -1, First: start, Last: start + 19e9},
			{Name: "load1", CPU: -1, First: start, Last: start + 2e9},
		}
		if !reflect.DeepEqual(names, wantNames) {
			t.Errorf("SeriesNames =\n%+v\nwant\n%+v", names, wantNames)
		}
	})
}

// blobs returns the host_series rows' data, by key and block.
func (e *env) blobs() map[string]string {
	e.t.Helper()
	rows, err := e.db.Query(`SELECT host, name, cpu, label, block_ns, data FROM host_series`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var host, name, label string
		var cpu, block int64
		var data []byte
		if err := rows.Scan(&host, &name, &cpu, &label, &block, &data); err != nil {
			e.t.Fatal(err)
		}
		out[fmt.Sprintf("%s %s %d %q %d", host, name, cpu, label, block)] = string(data)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestSeriesMerge sends batches of a recorder out of order and twice: the
// points are stored once each, the first value sent for a time kept.
func TestSeriesMerge(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		all := regular(t0+590e9, 1e9, 30, func(i int) float64 { return float64(i) })
		batch := func(lo, hi int) []subsecond.Series {
			return []subsecond.Series{{Name: "cpu.usr", CPU: 2, Points: all[lo:hi]}}
		}
		// The second and third batches first, the first spanning two blocks.
		for _, b := range []struct{ lo, hi, want int }{{10, 20, 10}, {20, 30, 10}, {0, 10, 10}, {0, 30, 0}, {5, 25, 0}} {
			if n, err := e.s.AddSeries(ctx, "node-1", batch(b.lo, b.hi)); err != nil || n.Added != b.want {
				t.Errorf("AddSeries of points [%d, %d) = %d, %v; want %d new", b.lo, b.hi, n.Added, err, b.want)
			}
		}
		before := e.blobs()
		if n, err := e.s.AddSeries(ctx, "node-1", batch(0, 30)); err != nil || n.Added != 0 {
			t.Errorf("AddSeries of every point again = %d, %v; want 0", n.Added, err)
		}
		if after := e.blobs(); !reflect.DeepEqual(after, before) || len(after) != 2 {
			t.Errorf("sending the points again changed the stored blocks (%d, then %d)", len(before), len(after))
		}
		// Another value at a stored time stays out; new times go in.
		changed := []subsecond.Point{{Time: all[3].Time, Value: 42}, {Time: all[29].Time + 5e8, Value: 7}}
		if n, err := e.s.AddSeries(ctx, "node-1", []subsecond.Series{{Name: "cpu.usr", CPU: 2, Points: changed}}); err != nil || n.Added != 1 {
			t.Errorf("AddSeries of a changed and a new point = %d, %v; want 1 new", n.Added, err)
		}
		// Two series of the same key in one call are merged, the first
		// value kept.
		twice := []subsecond.Series{
			{Name: "cpu.usr", CPU: 2, Points: []subsecond.Point{{Time: t0 + 700e9, Value: 1}}},
			{Name: "cpu.usr", CPU: 2, Points: []subsecond.Point{{Time: t0 + 699e9, Value: 3}, {Time: t0 + 700e9, Value: 2}}},
		}
		if n, err := e.s.AddSeries(ctx, "node-1", twice); err != nil || n.Added != 2 {
			t.Errorf("AddSeries of two series of one key = %d, %v; want 2 new", n.Added, err)
		}
		got, err := e.s.Series(ctx, "node-1", "cpu.usr", 0, math.MaxInt64)
		if err != nil || len(got) != 1 {
			t.Fatalf("Series = %+v, %v; want one", got, err)
		}
		want := append(append([]subsecond.Point{}, all...), changed[1], subsecond.Point{Time: t0 + 699e9, Value: 3}, subsecond.Point{Time: t0 + 700e9, Value: 1})
		if !reflect.DeepEqual(got[0].Points, want) {
			t.Errorf("Series after the batches =\n%+v\nwant\n%+v", got[0].Points, want)
		}
	})
}

func TestAddSeriesInvalid(t *testing.T) {
	ctx := context.Background()
	ok := regular(t0, 1e9, 3, func(int) float64 { return 1 })
	with := func(i int, p subsecond.Point) []subsecond.Point {
		ps := append([]subsecond.Point{}, ok...)
		ps[i] = p
		return ps
	}
	tests := []struct {
		name string
		host string
		bad  subsecond.Series
		want string // in the error
		err  error
	}{
		{"host", "a/b", subsecond.Series{Name: "cpu.sys", Points: ok}, "host", subsecond.ErrInvalid},
		{"kind", "h", subsecond.Series{Name: "cpu.bogus", Points: ok}, `"cpu.bogus"`, subsecond.ErrInvalid},
		{"cpu", "h", subsecond.Series{Name: "cpu.sys", CPU: -2, Points: ok}, "CPU -2", subsecond.ErrInvalid},
		{"host-wide kind on a CPU", "h", subsecond.Series{Name: "load1", CPU: 3, Points: ok}, "not CPU 3", subsecond.ErrInvalid},
		{"long label", "h", subsecond.Series{Name: "irq", Label: strings.Repeat("x", subsecond.MaxSeriesLabel+1), Points: ok}, "label", subsecond.ErrInvalid},
		{"label not UTF-8", "h", subsecond.Series{Name: "irq", Label: "\xff", Points: ok}, "label", subsecond.ErrInvalid},
		{"label control", "h", subsecond.Series{Name: "irq", Label: "a\nb", Points: ok}, "control", subsecond.ErrInvalid},
		{"NaN", "h", subsecond.Series{Name: "cpu.sys", CPU: 4, Points: with(2, subsecond.Point{Time: t0 + 5e9, Value: math.NaN()})}, "series 2 (cpu.sys cpu 4): point 3", subsecond.ErrInvalid},
		{"Inf", "h", subsecond.Series{Name: "cpu.sys", Points: with(1, subsecond.Point{Time: t0 + 1e9, Value: math.Inf(1)})}, "point 2", subsecond.ErrInvalid},
		{"huge", "h", subsecond.Series{Name: "mem.available", CPU: -1, Points: with(1, subsecond.Point{Time: t0 + 1e9, Value: 1e300})}, "point 2", subsecond.ErrInvalid},
		{"time zero", "h", subsecond.Series{Name: "cpu.sys", Points: with(0, subsecond.Point{Time: 0})}, "point 1: time 0 is not positive", subsecond.ErrInvalid},
		{"time back", "h", subsecond.Series{Name: "cpu.sys", Points: with(2, subsecond.Point{Time: t0})}, "point 3", subsecond.ErrInvalid},
		{"time equal", "h", subsecond.Series{Name: "cpu.sys", Points: with(2, subsecond.Point{Time: t0 + 1e9})}, "not after the previous", subsecond.ErrInvalid},
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		for _, tt := range tests {
			ss := []subsecond.Series{{Name: "cpu.idle", CPU: 0, Points: ok}, tt.bad}
			n, err := e.s.AddSeries(ctx, tt.host, ss)
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.want) || n.Added != 0 {
				t.Errorf("%s: AddSeries = %d, %v; want an error wrapping %v that says %q", tt.name, n.Added, err, tt.err, tt.want)
			}
		}
		// Too many points in all: 11 series of a million.
		many := make([]subsecond.Series, 11)
		mil := regular(t0, 1e6, 1_000_000, func(int) float64 { return 0 })
		for i := range many {
			many[i] = subsecond.Series{Name: "cpu.sys", CPU: int32(i), Points: mil}
		}
		if n, err := e.s.AddSeries(ctx, "h", many); !errors.Is(err, subsecond.ErrTooLarge) || n.Added != 0 {
			t.Errorf("AddSeries of 11 M points = %d, %v; want ErrTooLarge", n.Added, err)
		}
		if n := e.rows()["host_series"]; n != 0 {
			t.Errorf("after refused calls host_series holds %d rows; want 0", n)
		}
		if n, err := e.s.AddSeries(ctx, "h", nil); n.Added != 0 || err != nil {
			t.Errorf("AddSeries of nothing = %d, %v", n.Added, err)
		}
	})
}

func TestPruneSeries(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		// An hour of one point a minute: six blocks, for two hosts.
		ps := regular(t0, 60e9, 60, func(i int) float64 { return float64(i) })
		for _, h := range []string{"node-1", "node-2"} {
			if _, err := e.s.AddSeries(ctx, h, []subsecond.Series{{Name: "cgroups", CPU: -1, Label: "memory", Points: ps}}); err != nil {
				t.Fatal(err)
			}
		}
		first := func(h string) int64 {
			ss, err := e.s.Series(ctx, h, "cgroups", 0, math.MaxInt64)
			if err != nil || len(ss) != 1 {
				t.Fatalf("Series of %s = %+v, %v", h, ss, err)
			}
			return ss[0].Points[0].Time
		}
		// 25 minutes in: two blocks go whole, the third stays.
		if err := e.s.PruneSeries(ctx, "node-1", t0+25*60e9); err != nil {
			t.Fatal(err)
		}
		if got := first("node-1"); got != t0+20*60e9 {
			t.Errorf("after pruning 25 min of node-1 its first point is at %d min; want 20", (got-t0)/60e9)
		}
		if got := first("node-2"); got != t0 {
			t.Errorf("pruning node-1 pruned node-2 from %d min", (got-t0)/60e9)
		}
		if err := e.s.PruneSeries(ctx, "", t0+50*60e9); err != nil {
			t.Fatal(err)
		}
		if a, b := first("node-1"), first("node-2"); a != t0+50*60e9 || b != t0+50*60e9 {
			t.Errorf("after pruning every host to 50 min the first points are at %d, %d min; want 50", (a-t0)/60e9, (b-t0)/60e9)
		}
		if err := e.s.PruneSeries(ctx, "a/b", 0); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("PruneSeries of host a/b: %v; want ErrInvalid", err)
		}
		if n := e.rows()["host_series"]; n != 2 {
			t.Errorf("host_series holds %d rows; want 2, the last block of each host", n)
		}
	})
}

// TestLane compares lanes of random series, with gaps, against the means
// of the points Series returns, over ranges and buckets that cut blocks
// and that hold them whole.
func TestLane(t *testing.T) {
	ctx := context.Background()
	rng := mrand.New(mrand.NewPCG(3, 4))
	var in []subsecond.Series
	for cpu := int32(-1); cpu < 6; cpu++ {
		var ps []subsecond.Point
		for tm := t0 + rng.Int64N(5e9); tm < t0+3*3600e9; tm += 1e9 + rng.Int64N(3e9) {
			if rng.IntN(500) == 0 {
				tm += 1800e9 // a gap
			}
			ps = append(ps, subsecond.Point{Time: tm, Value: rng.Float64() * 100})
		}
		in = append(in, subsecond.Series{Name: "cpu.soft", CPU: cpu, Points: ps})
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		if _, err := e.s.AddSeries(ctx, "node-1", in); err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct{ from, to, bucket int64 }{
			{t0, t0 + 3*3600e9, 10e9},
			{t0 + 333e9, t0 + 7777e9, 43e9},
			{t0, t0 + 3*3600e9, 1800e9},              // whole blocks, from their sums
			{t0 - 3600e9, t0 + 4*3600e9, 3600e9 + 1}, // past both ends
			{t0 + 601e9, t0 + 5000e9, 5000e9},        // one bucket
			{math.MinInt64, math.MaxInt64, math.MaxInt64},
		} {
			lane, err := e.s.Lane(ctx, "node-1", "cpu.soft", r.from, r.to, r.bucket)
			if err != nil {
				t.Fatalf("Lane(%+v): %v", r, err)
			}
			ss, err := e.s.Series(ctx, "node-1", "cpu.soft", r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			n := subsecond.Buckets(r.from, r.to, r.bucket)
			if lane.Name != "cpu.soft" || lane.Unit != "%" || lane.From != r.from || lane.To != r.to || lane.Bucket != r.bucket || len(lane.Series) != len(ss) {
				t.Fatalf("Lane(%+v) = %s %s [%d, %d) by %d, %d series; want %d", r, lane.Name, lane.Unit, lane.From, lane.To, lane.Bucket, len(lane.Series), len(ss))
			}
			for i, s := range ss {
				sum, cnt := make([]float64, n), make([]int, n)
				for _, p := range s.Points {
					k := int64(uint64(p.Time-r.from) / uint64(r.bucket))
					sum[k] += p.Value
					cnt[k]++
				}
				ls := lane.Series[i]
				if ls.CPU != s.CPU || len(ls.Values) != int(n) {
					t.Fatalf("Lane(%+v) series %d: CPU %d, %d values; want CPU %d, %d", r, i, ls.CPU, len(ls.Values), s.CPU, n)
				}
				for k := range n {
					got := ls.Values[k]
					if cnt[k] == 0 {
						if !math.IsNaN(got) {
							t.Errorf("Lane(%+v) CPU %d bucket %d = %v; want NaN, no points", r, s.CPU, k, got)
						}
						continue
					}
					if want := sum[k] / float64(cnt[k]); !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
						t.Errorf("Lane(%+v) CPU %d bucket %d = %v; want %v, the mean of %d points", r, s.CPU, k, got, want, cnt[k])
					}
				}
			}
		}
		for _, bad := range []struct {
			name             string
			from, to, bucket int64
		}{{"cpu.soft", 10, 10, 1}, {"cpu.soft", 0, 10, 0}, {"cpu.soft", 0, 1e9, 1}, {"bogus", 0, 10, 1}} {
			if _, err := e.s.Lane(ctx, "node-1", bad.name, bad.from, bad.to, bad.bucket); !errors.Is(err, subsecond.ErrInvalid) {
				t.Errorf("Lane(%+v): %v; want ErrInvalid", bad, err)
			}
		}
		if lane, err := e.s.Lane(ctx, "node-2", "cpu.soft", t0, t0+1e9, 1e6); err != nil || lane.Series == nil || len(lane.Series) != 0 {
			t.Errorf("Lane of a host without series = %+v, %v; want no series", lane, err)
		}
	})
}

// TestSeriesConcurrent: calls adding points to the same new blocks at
// once, as recorders of one host through several servers would, lose
// none of them.
func TestSeriesConcurrent(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		const callers = 6
		var wg sync.WaitGroup
		errs := make([]error, callers)
		for c := range callers {
			wg.Go(func() {
				var ss []subsecond.Series
				for cpu := range int32(4) {
					ss = append(ss, subsecond.Series{Name: "cpu.iowait", CPU: cpu,
						Points: regular(t0+int64(c)*1e8, callers*1e8, 100, func(i int) float64 { return float64(c) })})
				}
				_, errs[c] = e.s.AddSeries(ctx, "node-1", ss)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		ss, err := e.s.Series(ctx, "node-1", "cpu.iowait", 0, math.MaxInt64)
		if err != nil || len(ss) != 4 {
			t.Fatalf("Series = %d series, %v; want 4", len(ss), err)
		}
		for _, s := range ss {
			if len(s.Points) != callers*100 {
				t.Errorf("CPU %d holds %d points; want %d", s.CPU, len(s.Points), callers*100)
			}
		}
	})
}

// TestSeriesReadBounded: Series counts the points of the range's blocks
// from their summaries before it reads any, and refuses a range holding
// more than Options.MaxSeriesRead (ErrTooLarge, naming the limit and how
// to narrow it) while a narrower range of the same series is read.
func TestSeriesReadBounded(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{MaxSeriesRead: 1000}, func(t *testing.T, e *env) {
		// Two CPUs × 20 minutes at a point a second: 2,400 points in two
		// blocks each.
		in := []subsecond.Series{
			{Name: "cpu.sys", CPU: 0, Points: regular(t0, 1e9, 1200, func(i int) float64 { return 1 })},
			{Name: "cpu.sys", CPU: 1, Points: regular(t0, 1e9, 1200, func(i int) float64 { return 2 })},
		}
		if _, err := e.s.AddSeries(ctx, "node-1", in); err != nil {
			t.Fatal(err)
		}
		_, err := e.s.Series(ctx, "node-1", "cpu.sys", t0, t0+1200e9)
		if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "2400 points") || !strings.Contains(err.Error(), "more than the 1000 one request may read: narrow the range") {
			t.Errorf("Series of 2,400 points with a limit of 1,000: %v; want ErrTooLarge naming both and how to narrow", err)
		}
		// The first block alone (ten minutes, 1,200 points) is over the
		// limit too: the count is of whole blocks, the data read.
		if _, err := e.s.Series(ctx, "node-1", "cpu.sys", t0, t0+60e9); !errors.Is(err, subsecond.ErrTooLarge) {
			t.Errorf("Series of one block's minute: %v; want ErrTooLarge (its blocks hold 1,200 points)", err)
		}
		got, err := e.s.Series(ctx, "node-1", "cpu.sys", t0+1200e9, t0+1300e9)
		if err != nil || len(got) != 0 {
			t.Errorf("Series after the points = %+v, %v; want none", got, err)
		}
	})
}

// TestSeriesReadDefault: under the default Options.MaxSeriesRead the range
// TestSeriesReadBounded refuses is read whole.
func TestSeriesReadDefault(t *testing.T) {
	ctx := context.Background()
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		in := []subsecond.Series{{Name: "cpu.sys", CPU: 0, Points: regular(t0, 1e9, 1200, func(i int) float64 { return 1 })}}
		if _, err := e.s.AddSeries(ctx, "node-1", in); err != nil {
			t.Fatal(err)
		}
		got, err := e.s.Series(ctx, "node-1", "cpu.sys", t0, t0+1200e9)
		if err != nil || len(got) != 1 || len(got[0].Points) != 1200 {
			t.Errorf("Series under the default limit: %d series, %v; want one of 1,200 points", len(got), err)
		}
	})
}

// TestSeriesPerHostBounded: a host keeps at most keep distinct series. A
// post that would pass it stores the points of the series the host has
// and of new ones up to the bound, in the kinds' order, and says which it
// refused; series that go on after a gap are not new; other hosts, and
// the host after its old series are pruned, add again.
func TestSeriesPerHostBounded(t *testing.T) {
	ctx := context.Background()
	one := func(name string, cpu int32, label string, at int64) subsecond.Series {
		return subsecond.Series{Name: name, CPU: cpu, Label: label, Points: []subsecond.Point{{Time: at, Value: 1}}}
	}
	const keep = 5
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		add := func(host string, want subsecond.SeriesAdded, ss ...subsecond.Series) {
			t.Helper()
			got, err := store.AddSeriesKeeping(e.s, ctx, host, ss, keep)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("AddSeries(%s) = %+v, %v; want %+v", host, got, err, want)
			}
		}
		names := func(host string) []string {
			t.Helper()
			es, err := e.s.SeriesNames(ctx, host)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, x := range es {
				out = append(out, x.Key().String())
			}
			return out
		}
		add("node-1", subsecond.SeriesAdded{Added: 3},
			one("cpu.sys", 0, "", t0+1e9), one("cpu.sys", 1, "", t0+1e9), one("load1", -1, "", t0+1e9))
		// Four new series and a point of a stored one: two of the new go,
		// the last in the kinds' order (irq before mem.available, cpu.usr
		// first of all), whatever the order they came in.
		add("node-1", subsecond.SeriesAdded{Added: 3, Refused: 2, RefusedSeries: []subsecond.SeriesKey{
			{Name: "irq", CPU: 0, Label: "b"}, {Name: "mem.available", CPU: -1}}},
			one("mem.available", -1, "", t0+2e9), one("irq", 0, "b", t0+2e9), one("irq", 0, "a", t0+2e9),
			one("cpu.sys", 0, "", t0+2e9), one("cpu.usr", 0, "", t0+2e9))
		want := []string{"cpu.usr cpu 0", "cpu.sys cpu 0", "cpu.sys cpu 1", `irq cpu 0 "a"`, "load1"}
		if got := names("node-1"); !slices.Equal(got, want) {
			t.Errorf("node-1's series = %q; want %q", got, want)
		}
		if got := e.rows()["host_series"]; got != 5 {
			t.Errorf("host_series holds %d rows; want 5 (a refused series leaves no block)", got)
		}
		// At the bound: stored series go on, in the next block and after
		// a gap of blocks, and a new one is refused alone.
		add("node-1", subsecond.SeriesAdded{Added: 2, Refused: 1, RefusedSeries: []subsecond.SeriesKey{{Name: "cgroups", CPU: -1, Label: "memory"}}},
			one("cpu.sys", 0, "", t0+store.SeriesBlockSpan+1e9), one("cpu.sys", 1, "", t0+5*store.SeriesBlockSpan+1e9),
			one("cgroups", -1, "memory", t0+5*store.SeriesBlockSpan+1e9))
		// Another host has its own bound.
		add("node-2", subsecond.SeriesAdded{Added: 5, Refused: 1, RefusedSeries: []subsecond.SeriesKey{{Name: "irq", CPU: 3, Label: "x"}}},
			one("cpu.sys", 0, "", t0), one("cpu.sys", 1, "", t0), one("cpu.sys", 2, "", t0), one("cpu.sys", 3, "", t0),
			one("cpu.sys", 4, "", t0), one("irq", 3, "x", t0))
		// Pruning the first block frees the series only it held.
		if err := e.s.PruneSeries(ctx, "node-1", t0+store.SeriesBlockSpan); err != nil {
			t.Fatal(err)
		}
		add("node-1", subsecond.SeriesAdded{Added: 3},
			one("mem.available", -1, "", t0+6*store.SeriesBlockSpan), one("irq", 0, "b", t0+6*store.SeriesBlockSpan),
			one("cgroups", -1, "memory", t0+6*store.SeriesBlockSpan))
		if got := len(names("node-1")); got != keep {
			t.Errorf("node-1 has %d series; want %d", got, keep)
		}
	})
}
