package hoststate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

// copyTree copies the files and links of dir under root.
func copyTree(t *testing.T, dir, root string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.Remove(dst)
			return os.Symlink(l, dst)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// clock returns a Now that returns times in turn, the last one ever after.
func clock(times ...time.Time) func() time.Time {
	return func() time.Time {
		t := times[0]
		if len(times) > 1 {
			times = times[1:]
		}
		return t
	}
}

// sampleFixture samples the proc96 fixture's t0 then t1, one second apart,
// and returns the second sample's values by key.
func sampleFixture(t *testing.T) (map[subsecond.SeriesKey]float64, time.Time) {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "testdata/proc96/t0", root)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	s, err := New(Options{Root: root, Now: clock(t0, t1)})
	if err != nil {
		t.Fatal(err)
	}
	series, err := s.Sample()
	if err != nil || len(series) != 0 {
		t.Fatalf("first Sample() = %d series, %v; want none, nil", len(series), err)
	}
	copyTree(t, "testdata/proc96/t1", root)
	series, err = s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	got := map[subsecond.SeriesKey]float64{}
	for _, x := range series {
		if _, ok := subsecond.Kind(x.Name); !ok {
			t.Errorf("series %v: unknown kind", x.Key())
		}
		if len(x.Points) != 1 || x.Points[0].Time != t1.UnixNano() {
			t.Errorf("series %v: points %v; want one at %d", x.Key(), x.Points, t1.UnixNano())
			continue
		}
		if _, dup := got[x.Key()]; dup {
			t.Errorf("series %v twice", x.Key())
		}
		got[x.Key()] = x.Points[0].Value
	}
	return got, t1
}

func TestSampleFixture(t *testing.T) {
	got, _ := sampleFixture(t)
	want := map[subsecond.SeriesKey]float64{}
	key := func(name string, cpu int32, label string) subsecond.SeriesKey {
		return subsecond.SeriesKey{Name: name, CPU: cpu, Label: label}
	}
	// Every CPU but busyCPU moved 100 jiffies: user 20 (guest 5), nice 4
	// (guest_nice 1), system 30, idle 35, iowait 5, irq 2, softirq 3,
	// steal 1. busyCPU: user 5, system 95.
	for cpu := range int32(fixtureCPUs) {
		pct := [8]float64{15, 3, 30, 5, 2, 3, 1, 35}
		if cpu == busyCPU {
			pct = [8]float64{5, 0, 95, 0, 0, 0, 0, 0}
		}
		for i, v := range pct {
			want[key(cpuKinds[i], cpu, "")] = v
		}
	}
	// The host: 9,600 jiffies.
	for i, j := range [8]float64{95*15 + 5, 95 * 3, 95*30 + 95, 95 * 5, 95 * 2, 95 * 3, 95 * 1, 95 * 35} {
		want[key(cpuKinds[i], subsecond.Unknown, "")] = j / 9600 * 100
	}
	for _, c := range []string{"cpuset", "cpu", "cpuacct", "blkio", "devices", "freezer", "net_cls", "perf_event", "net_prio", "hugetlb", "pids"} {
		want[key("cgroups", subsecond.Unknown, c)] = 1
	}
	want[key("cgroups", subsecond.Unknown, "memory")] = 70
	want[key("cgroup.descendants", subsecond.Unknown, "")] = 125
	want[key("cgroup.dying", subsecond.Unknown, "")] = 7
	for j := range int32(nicQueues) {
		want[key("irq", j, fmtIRQ(45+j, "mlx5_comp", j))] = float64(500 + j)
	}
	for cpu := range int32(fixtureCPUs) {
		want[key("irq", cpu, "LOC")] = 250
		want[key("softirq.net_rx", cpu, "")] = float64(10 * cpu)
		want[key("softirq.net_tx", cpu, "")] = 0
	}
	want[key("softirq.net_tx", 0, "")] = 2
	want[key("irq", subsecond.Unknown, "ERR")] = 3
	want[key("irq", 5, "109:nvme0q1")] = 16 // 4294967290 → 10, wrapped
	want[key("net.packets", subsecond.Unknown, "eth0")] = 1500
	want[key("net.errors", subsecond.Unknown, "eth0")] = 3
	want[key("net.drops", subsecond.Unknown, "eth0")] = 4
	want[key("mem.available", subsecond.Unknown, "")] = 24_000_000 * 1024
	want[key("load1", subsecond.Unknown, "")] = 3.52

	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%v missing; want %v", k, w)
		case math.Abs(g-w) > 1e-9:
			t.Errorf("%v = %v; want %v", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%v = %v; want no point", k, g)
		}
	}
}

func fmtIRQ(irq int32, dev string, j int32) string {
	return fmt.Sprintf("%d:%s%d@pci:0000:3b:00.0", irq, dev, j)
}

// TestSampleMissing checks that absent sources are skipped: a host without
// cgroup v2, network devices or softirqs still gives the rest.
func TestSampleMissing(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/proc96/t0", root)
	for _, p := range []string{"sys", "proc/softirqs"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Root: root, Now: clock(t0, t0.Add(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.Sample(); err != nil {
			t.Fatalf("Sample() = %v; want nil", err)
		}
	}
}

// TestSampleInvalid checks that a malformed file is reported, naming it,
// while the other sources still give their points.
func TestSampleInvalid(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/proc96/t0", root)
	if err := os.WriteFile(filepath.Join(root, "proc/loadavg"), []byte("x y z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Root: root, Now: clock(t0, t0.Add(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	s.Sample()
	series, err := s.Sample()
	if !errors.Is(err, subsecond.ErrInvalid) || len(series) == 0 {
		t.Errorf("Sample() = %d series, %v; want some, and an error wrapping ErrInvalid", len(series), err)
	}
}

func TestNewInterval(t *testing.T) {
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {MinInterval, true}, {MaxInterval, true}, {99 * time.Millisecond, false}, {11 * time.Second, false}, {-time.Second, false}} {
		_, err := New(Options{Interval: tc.d})
		if (err == nil) != tc.ok {
			t.Errorf("New(Interval: %v) = %v; want ok %v", tc.d, err, tc.ok)
		}
	}
}

func TestMpstat(t *testing.T) {
	ct := func(user, nice, sys, idle, iowait, irq, soft, steal, guest, gnice uint64) CPUTimes {
		return CPUTimes{User: user, Nice: nice, System: sys, Idle: idle, IOWait: iowait, IRQ: irq, SoftIRQ: soft, Steal: steal, Guest: guest, GuestNice: gnice}
	}
	for _, tc := range []struct {
		name string
		p, c CPUTimes
		want [8]float64
		ok   bool
	}{
		{"plain", ct(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ct(10, 0, 20, 70, 0, 0, 0, 0, 0, 0), [8]float64{10, 0, 20, 0, 0, 0, 0, 70}, true},
		{"guest is not usr", ct(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ct(50, 10, 0, 40, 0, 0, 0, 0, 30, 5), [8]float64{20, 5, 0, 0, 0, 0, 0, 40}, true},
		{"tickless", ct(1, 2, 3, 4, 5, 6, 7, 8, 0, 0), ct(1, 2, 3, 4, 5, 6, 7, 8, 0, 0), [8]float64{7: 100}, true},
		// A CPU back online: idle and iowait restart from zero.
		{"back online", ct(100, 0, 100, 5000, 300, 0, 0, 0, 0, 0), ct(110, 0, 120, 60, 10, 0, 0, 0, 0, 0), [8]float64{10, 0, 20, 10, 0, 0, 0, 60}, true},
		// Guest counted ahead of user: the interval grows by the excess,
		// as in sysstat.
		{"guest ahead", ct(100, 0, 0, 0, 0, 0, 0, 0, 90, 0), ct(110, 0, 0, 80, 0, 0, 0, 0, 105, 0), [8]float64{0, 0, 0, 0, 0, 0, 0, 80.0 / 95 * 100}, true},
		{"went back", ct(100, 0, 100, 100, 0, 0, 0, 0, 0, 0), ct(50, 0, 50, 100, 0, 0, 0, 0, 0, 0), [8]float64{}, false},
	} {
		got, ok := mpstat(tc.p, tc.c)
		if ok != tc.ok {
			t.Errorf("%s: mpstat ok = %v; want %v", tc.name, ok, tc.ok)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: mpstat = %v; want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestDelta(t *testing.T) {
	for _, tc := range []struct {
		prev, cur uint64
		wrap32    bool
		want      uint64
		ok        bool
	}{
		{10, 15, false, 5, true},
		{10, 10, true, 0, true},
		{4294967290, 10, true, 16, true},
		{4294967290, 10, false, 0, false},
		{1000, 5, true, 0, false},          // a reset, not a wrap
		{1 << 40, 5, true, 0, false},       // not a 32-bit counter
		{math.MaxUint32, 0, true, 1, true}, // the smallest wrap
	} {
		got, ok := delta(tc.prev, tc.cur, tc.wrap32)
		if got != tc.want || ok != tc.ok {
			t.Errorf("delta(%d, %d, %v) = %d, %v; want %d, %v", tc.prev, tc.cur, tc.wrap32, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRunStampsTheTick: Run's points are stamped on multiples of the
// interval, not when the reading happened to run, so a point at t covers
// exactly the interval a cores map's column ending at t does.
func TestRunStampsTheTick(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/proc96/t0", root)
	s, err := New(Options{Root: root, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var times []int64
	err = s.Run(ctx, func(ss []subsecond.Series) error {
		times = append(times, ss[0].Points[0].Time)
		if len(times) == 3 {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range times {
		if at%int64(100*time.Millisecond) != 0 {
			t.Errorf("point at %d; want a multiple of 100 ms", at)
		}
	}
}
