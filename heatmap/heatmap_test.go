package heatmap_test

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

var filters = []query.Filter{
	{},
	{Idle: true},
	{CPUs: []int32{1, 3}},
	{PIDs: []int32{1000}, TIDs: []int32{1001, 1002}},
	{Comm: "swapper", Idle: true},
	{Comm: "swapper"},
	{CommRegex: "^(nccl|node)"},
	{Function: "mem_cgroup|ext4"},
	{Only: "kernel"},
	{Only: "user", Idle: true},
	{Event: "cycles", Idle: true},
	{CPUs: []int32{2}, Function: "^intel_idle$", Idle: true},
}

// dataset generates 8 CPUs × 6 s at 99 Hz starting at 5083.7 s, plus
// samples exactly on column and row boundaries, a sample at 5086.2 s, a few
// of a second event, and a last sample exactly on a whole second.
func dataset() []synth.Labeled {
	start := int64(5083_700_000_000)
	ss := synth.Generate(synth.Options{Seed: 7, CPUs: 8, Seconds: 6, Hz: 99, Start: start, Pegged: -1})
	extra := func(t int64, ev string) {
		ss = append(ss, synth.Labeled{Sample: subsecond.Sample{Comm: "edge", PID: 77, TID: 77, CPU: 5, Time: t, Event: ev,
			Frames: []subsecond.Frame{{Symbol: "edge_fn", DSO: "/bin/edge", Kind: subsecond.KindUser}}}})
	}
	t0 := subsecond.FloorSecond(start)
	for col := int64(0); col < 6; col++ {
		for _, d := range []int64{0, 1, 20e6, 20e6 - 1, 100e6, 300e6, 300e6 - 1, 333_333_333, 333_333_334, 999_999_999} {
			extra(t0+col*1e9+d, "cpu-clock")
		}
	}
	extra(5086_200_000_000, "cpu-clock")
	for i := int64(0); i < 30; i++ {
		extra(start+i*97e6, "cycles")
	}
	extra(5090_000_000_000, "cpu-clock") // the last sample, on a whole second
	return ss
}

func TestOffsetMatchesIndependentCount(t *testing.T) {
	ss := dataset()
	c := synth.Capture(ss)
	t0 := c.Profile.T0()
	if t0 != 5083e9 {
		t.Fatalf("T0 = %d; want 5083e9", t0)
	}
	for _, opt := range []heatmap.Options{{}, {Col: 300e6, Rows: 7}, {Col: 100e6, Rows: 1}, {Col: 10e9, Rows: 1000}, {Col: 1e9, Rows: 3}} {
		for _, f := range filters {
			name := fmt.Sprintf("col=%d rows=%d filter=%v", opt.Col, opt.Rows, f.Values().Encode())
			g, err := heatmap.Offset(c, f, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			C, R := opt.Col, int64(opt.Rows)
			if C == 0 {
				C, R = 1e9, 50
			}
			want := map[[2]int64]int64{}
			var total int64
			for i := range ss {
				if !synth.Keep(&ss[i], f, "cpu-clock") {
					continue
				}
				// col = floor(d/C), row = floor(frac(d/C)·R), in exact rationals.
				q := big.NewRat(ss[i].Time-t0, C)
				col := new(big.Int).Quo(q.Num(), q.Denom()).Int64()
				frac := new(big.Rat).Sub(q, new(big.Rat).SetInt64(col))
				fr := new(big.Rat).Mul(frac, new(big.Rat).SetInt64(R))
				row := new(big.Int).Quo(fr.Num(), fr.Denom()).Int64()
				want[[2]int64{col, row}]++
				total++
			}
			if g.Total != total {
				t.Errorf("%s: Total = %d; want %d", name, g.Total, total)
			}
			if wantCols := (5090e9-t0)/C + 1; int64(g.Cols) != wantCols || len(g.Counts) != g.Cols {
				t.Errorf("%s: Cols = %d (%d slices); want %d", name, g.Cols, len(g.Counts), wantCols)
			}
			var max int64
			bad := 0
			for col := range g.Counts {
				for row, n := range g.Counts[col] {
					max = maxInt(max, n)
					if w := want[[2]int64{int64(col), int64(row)}]; n != w && bad < 5 {
						bad++
						t.Errorf("%s: Counts[%d][%d] = %d; want %d", name, col, row, n, w)
					}
				}
			}
			if g.Max != max {
				t.Errorf("%s: Max = %d; want %d", name, g.Max, max)
			}
		}
	}
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func capture(times ...int64) *subsecond.Capture {
	b := subsecond.NewBuilder()
	for _, t := range times {
		b.Add(&subsecond.Sample{Comm: "a", PID: 1, TID: 1, CPU: 0, Time: t, Event: "cpu-clock",
			Frames: []subsecond.Frame{{Symbol: "f", Kind: subsecond.KindUser}}})
	}
	return b.Capture(subsecond.Profile{})
}

func TestFlameScopePitfalls(t *testing.T) {
	// 5086.2 s: float arithmetic puts it in the 180 ms row.
	g, err := heatmap.Offset(capture(5086_200_000_000), query.Filter{}, heatmap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Cols != 1 || g.Counts[0][10] != 1 {
		t.Errorf("sample at 5086.2 s: Cols = %d, Counts[0][10] = %d; want 1, 1 (the 200 ms row)", g.Cols, g.Counts[0][10])
	}
	if r := g.CellRange(0, 10); r.Start != 5086_200_000_000 || r.End != 5086_220_000_000 {
		t.Errorf("CellRange(0, 10) = %+v; want [5086.2 s, 5086.22 s)", r)
	}
	// Out of order, and the last sample exactly on a whole second.
	g, err = heatmap.Offset(capture(3e9, 1_500_000_000, 2e9), query.Filter{}, heatmap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.T0 != 1e9 || g.Cols != 3 || g.Counts[0][25] != 1 || g.Counts[1][0] != 1 || g.Counts[2][0] != 1 || g.Total != 3 {
		t.Errorf("Offset = T0 %d, cols %d, counts %v; want T0 1e9, 3 columns with 1.5 s, 2 s and 3 s in row 0/25", g.T0, g.Cols, g.Counts)
	}
	// Rows that do not divide the column: every boundary sample in one row.
	g, err = heatmap.Offset(capture(0, 142_857_142, 142_857_143, 999_999_999), query.Filter{}, heatmap.Options{Rows: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Counts[0]; got[0] != 2 || got[1] != 1 || got[6] != 1 {
		t.Errorf("7 rows: counts %v; want [2 1 0 0 0 0 1]", got)
	}
	for row := 0; row < 7; row++ {
		r := g.CellRange(0, row)
		if row == 1 && r.Start != 142_857_143 {
			t.Errorf("CellRange(0, 1).Start = %d; want 142857143", r.Start)
		}
		if next := g.CellRange(0, row+1); r.End != next.Start {
			t.Errorf("CellRange rows %d and %d do not meet", row, row+1)
		}
	}
}

func TestEmptyAndSingle(t *testing.T) {
	empty := capture()
	if _, err := heatmap.Offset(empty, query.Filter{}, heatmap.Options{}); !errors.Is(err, subsecond.ErrEmptyRange) {
		t.Errorf("Offset(empty) error = %v; want ErrEmptyRange", err)
	}
	if _, err := heatmap.PerCore(empty, query.Filter{}, 0); !errors.Is(err, subsecond.ErrEmptyRange) {
		t.Errorf("PerCore(empty) error = %v; want ErrEmptyRange", err)
	}
	one := capture(7_000_000_001)
	g, err := heatmap.Offset(one, query.Filter{}, heatmap.Options{})
	if err != nil || g.Cols != 1 || g.Total != 1 || g.Counts[0][0] != 1 {
		t.Errorf("Offset(one sample) = %+v, %v; want one column, Counts[0][0] = 1", g, err)
	}
	k, err := heatmap.PerCore(one, query.Filter{}, 0)
	if err != nil || k.Buckets != 1 || len(k.CPUs) != 1 || k.Samples[0][0] != 1 || k.Busy[0][0] != 1 {
		t.Errorf("PerCore(one sample) = %+v, %v; want one bucket, one sample, busy 1", k, err)
	}
}

func TestOptionErrors(t *testing.T) {
	c := capture(1)
	for _, o := range []heatmap.Options{{Col: 99e6}, {Col: 10e9 + 1}, {Rows: 1001}, {Rows: -1}} {
		if _, err := heatmap.Offset(c, query.Filter{}, o); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("Offset(%+v) error = %v; want ErrInvalid", o, err)
		}
	}
	for _, b := range []int64{-1, 999_999, query.MaxBucket + 1} {
		if _, err := heatmap.PerCore(c, query.Filter{}, b); !errors.Is(err, subsecond.ErrInvalid) || err == nil || !strings.HasPrefix(err.Error(), "bucket: ") {
			t.Errorf("PerCore(bucket %d) error = %v; want ErrInvalid naming bucket", b, err)
		}
	}
	if _, err := heatmap.Offset(capture(0, 1e18), query.Filter{}, heatmap.Options{}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Offset over 1e9 s: error = %v; want ErrInvalid (too many cells)", err)
	}
	if _, err := heatmap.PerCore(capture(-9e18, 9e18), query.Filter{}, 0); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("PerCore over an overflowing span: error = %v; want ErrInvalid", err)
	}
	if _, err := heatmap.Offset(c, query.Filter{Event: "nope"}, heatmap.Options{}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Offset(event=nope) error = %v; want ErrInvalid", err)
	}
}

func TestPerCoreMatchesIndependentCount(t *testing.T) {
	ss := dataset()
	c := synth.Capture(ss)
	if c.Profile.FrequencyHz < 98 || c.Profile.FrequencyHz > 100 {
		t.Fatalf("FrequencyHz = %v; want about 99", c.Profile.FrequencyHz)
	}
	t0 := c.Profile.T0()
	for _, bucket := range []int64{0, 250e6, 1e9} {
		for _, f := range filters {
			name := fmt.Sprintf("bucket=%d filter=%v", bucket, f.Values().Encode())
			k, err := heatmap.PerCore(c, f, bucket)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			B := bucket
			if B == 0 {
				B = 100e6
			}
			samples := map[[2]int64]int64{}
			busy := map[[2]int64]int64{}
			sys := map[[2]int64]int64{} // busy samples whose leaf frame is a kernel frame
			cpus := map[int32]bool{}
			for i := range ss {
				s := &ss[i]
				if len(f.CPUs) == 0 || slices.Contains(f.CPUs, s.CPU) {
					cpus[s.CPU] = true
				}
				key := [2]int64{int64(s.CPU), (s.Time - t0) / B}
				if synth.Keep(s, f, "cpu-clock") {
					samples[key]++
				}
				nf := f
				nf.Idle = false
				if synth.Keep(s, nf, "cpu-clock") {
					busy[key]++
					if len(s.Frames) > 0 && s.Frames[0].Kind == subsecond.KindKernel {
						sys[key]++
					}
				}
			}
			if len(k.CPUs) != len(cpus) {
				t.Errorf("%s: CPUs = %v; want %d of them", name, k.CPUs, len(cpus))
			}
			exp := c.Profile.FrequencyHz * float64(B) / 1e9
			if k.Expected != exp {
				t.Errorf("%s: Expected = %v; want %v", name, k.Expected, exp)
			}
			bad, sawSys := 0, 0
			for r, cpu := range k.CPUs {
				for b := range k.Buckets {
					key := [2]int64{int64(cpu), int64(b)}
					wb := min(1, float64(busy[key])/exp)
					ws := min(1, float64(sys[key])/exp)
					if (k.Samples[r][b] != samples[key] || k.Busy[r][b] != wb || k.System[r][b] != ws) && bad < 5 {
						bad++
						t.Errorf("%s: cpu %d bucket %d: samples %d busy %v system %v; want %d, %v, %v", name, cpu, b,
							k.Samples[r][b], k.Busy[r][b], k.System[r][b], samples[key], wb, ws)
					}
					if sys[key] > 0 {
						sawSys++
					}
				}
			}
			// Every cpu-clock filter keeps some system time (syscalls, memcg
			// walks, interrupts taken while idle), so System is checked
			// against non-zero counts too.
			if f.Event == "" && sawSys == 0 {
				t.Errorf("%s: no bucket with system samples; the check above compared zeros only", name)
			}
		}
	}
}

func TestPerCoreUnknownRate(t *testing.T) {
	// One sample per CPU: no rate can be inferred; the busiest bucket sets the scale.
	b := subsecond.NewBuilder()
	for i, comm := range []string{"a", "a", "a", "b"} {
		b.Add(&subsecond.Sample{Comm: comm, PID: 1, CPU: int32(i / 3), Time: int64(i) * 10e6, Event: "e",
			Frames: []subsecond.Frame{{Symbol: "f", Kind: subsecond.KindUser}}})
	}
	c := b.Capture(subsecond.Profile{})
	c.Profile.FrequencyHz = 0
	k, err := heatmap.PerCore(c, query.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Expected != 3 || k.Busy[0][0] != 1 || k.Busy[1][0] != 1.0/3 {
		t.Errorf("PerCore = expected %v busy %v; want 3, [[1] [1/3]]", k.Expected, k.Busy)
	}
}
