package store_test

import (
	"context"
	"database/sql"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// hostGen makes the series a recorder sends for a 96-CPU host, one point a
// second: mpstat's eight cpu.* kinds per CPU and for the host as a whole,
// computed as mpstat does from /proc/stat's ticks (100 a second per CPU,
// 99 to 101 in a measured second), and a few host-wide series (memory,
// load, cgroups, network, whose error rate omits its zero points). Most
// CPUs idle with a few ticks of noise; a fifth of them alternate between
// idle and busy spells of minutes, in user time with some system time and
// softirqs.
type hostGen struct {
	rng   *mrand.Rand
	cpus  int
	t     int64 // time of the next point
	prone []bool
	busy  []bool
	level []float64 // a busy CPU's user ticks, wandering
	mem   float64
	load  float64
	pkts  float64
	cg    [3]float64
}

// genKinds are the per-CPU kinds, in /proc/stat's order.
var genKinds = []string{"cpu.usr", "cpu.nice", "cpu.sys", "cpu.iowait", "cpu.irq", "cpu.soft", "cpu.steal", "cpu.idle"}

func newHostGen(cpus int, start int64) *hostGen {
	g := &hostGen{rng: mrand.New(mrand.NewPCG(7, 8)), cpus: cpus, t: start, prone: make([]bool, cpus),
		busy: make([]bool, cpus), level: make([]float64, cpus), mem: 200e9, load: 3, pkts: 50e3, cg: [3]float64{120, 95, 130}}
	for c := range cpus {
		g.prone[c] = g.rng.IntN(5) == 0
		g.level[c] = 40 + g.rng.Float64()*40
	}
	return g
}

// poisson returns a small Poisson-distributed count of mean m.
func (g *hostGen) poisson(m float64) int {
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= g.rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// next returns the series of the next secs seconds.
func (g *hostGen) next(secs int) []subsecond.Series {
	nk := len(genKinds)
	per := make([]subsecond.Series, nk*(g.cpus+1))
	for k, name := range genKinds {
		for c := -1; c < g.cpus; c++ {
			per[k*(g.cpus+1)+c+1] = subsecond.Series{Name: name, CPU: int32(c), Points: make([]subsecond.Point, 0, secs)}
		}
	}
	host := map[string]*subsecond.Series{}
	var hostOrder []string
	add := func(name, label string, t int64, v float64) {
		key := name + "/" + label
		s := host[key]
		if s == nil {
			s = &subsecond.Series{Name: name, CPU: subsecond.Unknown, Label: label}
			host[key] = s
			hostOrder = append(hostOrder, key)
		}
		s.Points = append(s.Points, subsecond.Point{Time: t, Value: v})
	}
	ticks := make([]int, nk)
	all := make([]int, nk)
	for range secs {
		t := g.t
		g.t += 1e9
		clear(all)
		allTotal := 0
		for c := range g.cpus {
			if g.prone[c] && g.rng.IntN(300) == 0 {
				g.busy[c] = !g.busy[c]
			}
			total := 100
			switch r := g.rng.IntN(10); r {
			case 0:
				total = 99
			case 1:
				total = 101
			}
			clear(ticks)
			if g.busy[c] {
				g.level[c] = min(85, max(20, g.level[c]+g.rng.NormFloat64()*2))
				ticks[0] = int(g.level[c]) + g.poisson(3)
				ticks[2] = 8 + g.poisson(6)
				ticks[5] = g.poisson(2)
				ticks[4] = g.poisson(0.3)
			} else {
				ticks[0] = g.poisson(1.5)
				ticks[2] = g.poisson(0.8)
				ticks[5] = g.poisson(0.1)
			}
			if g.rng.IntN(50) == 0 {
				ticks[3] = 1 + g.poisson(2) // iowait
			}
			if g.rng.IntN(200) == 0 {
				ticks[1] = g.poisson(5) // nice
			}
			ticks[6] = g.poisson(0.05) // steal
			used := 0
			for _, n := range ticks[:7] {
				used += n
			}
			ticks[7] = max(0, total-used)
			total = max(total, used)
			for k := range nk {
				v := math.Round(float64(ticks[k])*10000/float64(total)) / 100
				s := &per[k*(g.cpus+1)+c+1]
				s.Points = append(s.Points, subsecond.Point{Time: t, Value: v})
				all[k] += ticks[k]
			}
			allTotal += total
		}
		for k := range nk {
			s := &per[k*(g.cpus+1)]
			s.Points = append(s.Points, subsecond.Point{Time: t, Value: math.Round(float64(all[k])*10000/float64(allTotal)) / 100})
		}
		g.mem = min(250e9, max(20e9, g.mem+g.rng.NormFloat64()*4e6))
		add("mem.available", "", t, float64(int64(g.mem)/4096*4096))
		g.load = max(0, g.load*0.98+0.02*(float64(all[0]+all[2])/100+g.rng.NormFloat64()))
		add("load1", "", t, math.Round(g.load*100)/100)
		for i, l := range []string{"cpu", "memory", "pids"} {
			if g.rng.IntN(60) == 0 {
				g.cg[i] += float64(g.rng.IntN(5) - 2)
			}
			add("cgroups", l, t, g.cg[i])
		}
		add("cgroup.descendants", "", t, g.cg[1]-3)
		add("cgroup.dying", "", t, float64(g.rng.IntN(3)))
		g.pkts = max(0, g.pkts+g.rng.NormFloat64()*2000)
		add("net.packets", "eth0", t, math.Round(g.pkts*1.0003*1000)/1000)
		if g.rng.IntN(1000) == 0 {
			add("net.errors", "eth0", t, float64(1+g.rng.IntN(3)))
		}
	}
	for _, k := range hostOrder {
		per = append(per, *host[k])
	}
	return per
}

// The night the benchmarks read: 12 hours of a 96-CPU host.
const (
	nightCPUs  = 96
	nightHours = 12
	nightHost  = "node-1"
)

var (
	nightOnce sync.Once
	nightPath string
	nightErr  error
)

// buildNight stores the 12-hour night in s, ten minutes (a block of every
// series) per call: merging 10 s batches stores the same blocks (see
// BenchmarkAddSeries for their throughput), at 60 times the work.
func buildNight(s *store.Store) (points int64, err error) {
	g := newHostGen(nightCPUs, t0)
	for range nightHours * 6 {
		n, err := s.AddSeries(context.Background(), nightHost, g.next(600))
		if err != nil {
			return 0, err
		}
		points += int64(n.Added)
	}
	return points, nil
}

// nightPoints is the number of points buildNight stores.
var nightPoints int64

// nightStore returns a Store holding the night: on SQLite a copy of a
// file built once per process in a temporary directory, on PostgreSQL a
// schema of its own, built each time.
func nightStore(b *testing.B, bk backend) (*store.Store, *sql.DB, func() int64) {
	b.Helper()
	if bk.name != "sqlite" {
		be, db, _ := bk.open(b)
		s := store.New(be, store.Options{})
		n, err := buildNight(s)
		if err != nil {
			b.Fatal(err)
		}
		nightPoints = n
		return s, db, func() int64 { return dbSize(b, bk.name, be, db) }
	}
	nightOnce.Do(func() {
		dir, err := os.MkdirTemp("", "subsecond-series")
		if err != nil {
			nightErr = err
			return
		}
		nightPath = filepath.Join(dir, "night.db")
		be, err := sqlite.Open(context.Background(), nightPath, sqlite.Options{})
		if err != nil {
			nightErr = err
			return
		}
		s := store.New(be, store.Options{})
		nightPoints, nightErr = buildNight(s)
		if err := s.Close(); err != nil && nightErr == nil {
			nightErr = err
		}
	})
	if nightErr != nil {
		b.Fatal(nightErr)
	}
	be, err := sqlite.Open(context.Background(), nightPath, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := store.New(be, store.Options{})
	b.Cleanup(func() { s.Close() })
	return s, be.DB.DB, func() int64 { return dbSize(b, bk.name, be, be.DB.DB) }
}

// BenchmarkSeriesSize stores 12 hours of a 96-CPU host's series at one
// point a second (see hostGen) and reports what they take: MB and
// B/value, the database on disk (SQLite: the file, checkpointed;
// PostgreSQL: host_series with its indexes and TOAST), and blob_B/value,
// the compressed blocks alone. Its loop times SeriesNames. On SQLite the
// night is built once per process.
func BenchmarkSeriesSize(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		s, db, size := nightStore(b, bk)
		ctx := context.Background()
		var blobs, blocks int64
		if err := db.QueryRow(`SELECT SUM(length(data)), count(*) FROM host_series`).Scan(&blobs, &blocks); err != nil {
			b.Fatal(err)
		}
		bytes := size()
		var names []subsecond.SeriesExtent
		for b.Loop() {
			var err error
			if names, err = s.SeriesNames(ctx, nightHost); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(names)), "series")
		b.ReportMetric(float64(blocks), "blocks")
		b.ReportMetric(float64(nightPoints), "values")
		b.ReportMetric(float64(bytes)/1e6, "MB")
		b.ReportMetric(float64(bytes)/float64(nightPoints), "B/value")
		b.ReportMetric(float64(blobs)/float64(nightPoints), "blob_B/value")
	})
}

// BenchmarkSeriesLane draws the night's cpu.sys, 97 series of 43,200
// points, as a lane of 1,000 buckets (43.2 s each). cpu_ms/op is the
// process's CPU time (user and system, every thread) per lane: on a
// shared machine it varies less than the time per lane, which it exceeds
// when the lane's decoding runs on several cores.
func BenchmarkSeriesLane(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		s, _, _ := nightStore(b, bk)
		const span = nightHours * 3600e9
		cpu0 := cpuTime(b)
		for b.Loop() {
			lane, err := s.Lane(context.Background(), nightHost, "cpu.sys", t0, t0+span, span/1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(lane.Series) != nightCPUs+1 || len(lane.Series[1].Values) != 1000 || math.IsNaN(lane.Series[1].Values[999]) {
				b.Fatalf("lane of %d series; want %d of 1000 values", len(lane.Series), nightCPUs+1)
			}
		}
		b.ReportMetric((cpuTime(b)-cpu0).Seconds()*1e3/float64(b.N), "cpu_ms/op")
	})
}

// BenchmarkAddSeries sends the host's series as the recorder does, 10 s a
// call (7,840 points), into a database growing by 10 s an iteration, so
// that 59 calls in 60 merge into stored blocks.
func BenchmarkAddSeries(b *testing.B) {
	benchEach(b, func(b *testing.B, bk backend) {
		be, _, _ := bk.open(b)
		s := store.New(be, store.Options{})
		g := newHostGen(nightCPUs, t0)
		var points int64
		for b.Loop() {
			b.StopTimer()
			batch := g.next(10)
			b.StartTimer()
			n, err := s.AddSeries(context.Background(), nightHost, batch)
			if err != nil {
				b.Fatal(err)
			}
			points += int64(n.Added)
		}
		b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
		b.ReportMetric(float64(points)/float64(b.N), "points/op")
	})
}
