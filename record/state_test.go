package record

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

// stateSink records what RunState sends, failing the first fail sends of
// series.
type stateSink struct {
	mu     sync.Mutex
	fail   int
	series map[subsecond.SeriesKey][]subsecond.Point
	marks  []subsecond.Marker
	sent   chan struct{}
}

func (s *stateSink) sendSeries(_ context.Context, ss []subsecond.Series) (subsecond.SeriesAdded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return subsecond.SeriesAdded{}, errors.New("server busy")
	}
	var a subsecond.SeriesAdded
	for _, x := range ss {
		s.series[x.Key()] = append(s.series[x.Key()], x.Points...)
		a.Added += len(x.Points)
	}
	return a, nil
}

func (s *stateSink) sendMarkers(_ context.Context, ms []subsecond.Marker) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks = append(s.marks, ms...)
	select {
	case s.sent <- struct{}{}:
	default:
	}
	return nil
}

// TestRunStateKeepsWhatFailedToGo samples two series every millisecond,
// sends every 5 ms to a sink that fails its first three sends, and checks
// that every point arrives once, in time order, and that a kernel-log
// marker is sent at once, not at the next flush.
func TestRunStateKeepsWhatFailedToGo(t *testing.T) {
	sink := &stateSink{fail: 3, series: map[subsecond.SeriesKey][]subsecond.Point{}, sent: make(chan struct{}, 1)}
	var log strings.Builder
	var logMu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	markAt := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunState(ctx, StateOptions{
			Sample: func(ctx context.Context, emit func([]subsecond.Series) error) error {
				for i := int64(1); ; i++ {
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(time.Millisecond):
					}
					// The sampler reuses its slices: RunState must copy.
					ss := []subsecond.Series{
						{Name: "cpu.sys", CPU: 0, Points: []subsecond.Point{{Time: i, Value: float64(i)}}},
						{Name: "cgroups", CPU: subsecond.Unknown, Label: "memory", Points: []subsecond.Point{{Time: i, Value: 7}}},
					}
					if err := emit(ss); err != nil {
						return err
					}
					ss[0].Points[0].Value = -1
				}
			},
			Follow: func(ctx context.Context, emit func(subsecond.Marker) error) error {
				time.Sleep(20 * time.Millisecond)
				markAt <- time.Now()
				if err := emit(subsecond.Marker{Time: 42, Text: "NETDEV WATCHDOG"}); err != nil {
					return err
				}
				<-ctx.Done()
				return nil
			},
			SendSeries:  sink.sendSeries,
			SendMarkers: sink.sendMarkers,
			Flush:       time.Hour, // series go only at the end, or with the ticker below
			Log:         lockedWriter{&logMu, &log},
		})
	}()
	at := <-markAt
	select {
	case <-sink.sent:
		if d := time.Since(at); d > time.Second {
			t.Errorf("marker sent %v after it was read; want at once", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("marker not sent within 2 s of being read")
	}
	time.Sleep(30 * time.Millisecond)
	cancel()
	<-done
	// The last send failed (fail 3 > 1 send): RunState sends once at the
	// end; with a failing sink the points stay unsent and it says so.
	logMu.Lock()
	if !strings.Contains(log.String(), "not sent, kept for the next try: server busy") {
		t.Errorf("log = %q; want the failure said", log.String())
	}
	logMu.Unlock()

	// Again with a sink that fails twice and a 5 ms flush: everything
	// arrives once, in order, copied before the sampler reused it.
	sink = &stateSink{fail: 2, series: map[subsecond.SeriesKey][]subsecond.Point{}, sent: make(chan struct{}, 1)}
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		RunState(ctx, StateOptions{
			Sample: func(ctx context.Context, emit func([]subsecond.Series) error) error {
				for i := int64(1); i <= 200; i++ {
					pts := []subsecond.Point{{Time: i, Value: float64(i)}}
					if err := emit([]subsecond.Series{{Name: "cpu.sys", CPU: 0, Points: pts}}); err != nil {
						return err
					}
					pts[0].Value = -1
					time.Sleep(100 * time.Microsecond)
				}
				<-ctx.Done()
				return nil
			},
			SendSeries: sink.sendSeries, SendMarkers: sink.sendMarkers, Flush: 5 * time.Millisecond,
		})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-done
	got := sink.series[subsecond.SeriesKey{Name: "cpu.sys", CPU: 0}]
	if len(got) != 200 {
		t.Fatalf("%d points arrived; want 200", len(got))
	}
	for i, p := range got {
		if p.Time != int64(i+1) || p.Value != float64(i+1) {
			t.Fatalf("point %d = %+v; want time and value %d", i, p, i+1)
		}
	}
}

// TestRunStateBoundsWhatItKeeps: a sink that never takes anything leaves
// at most MaxPoints points buffered, the newest, and the log counts the
// dropped ones.
func TestRunStateBoundsWhatItKeeps(t *testing.T) {
	b := &stateBuffer{o: StateOptions{MaxPoints: 10}, index: map[subsecond.SeriesKey]int{}}
	for i := int64(1); i <= 25; i++ {
		b.add([]subsecond.Series{{Name: "load1", CPU: subsecond.Unknown, Points: []subsecond.Point{{Time: i, Value: 1}}}})
	}
	if b.points != 10 || b.dropped != 15 || b.series[0].Points[0].Time != 16 {
		t.Errorf("buffer holds %d points from time %d, %d dropped; want the newest 10, 15 dropped", b.points, b.series[0].Points[0].Time, b.dropped)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestRunStateRateLimitsAKernelLogFlood: a driver logging a matching line
// in a loop makes at most the burst and the rate's markers; the rest are
// counted in the log, and the sampler goes on.
func TestRunStateRateLimitsAKernelLogFlood(t *testing.T) {
	sink := &stateSink{series: map[subsecond.SeriesKey][]subsecond.Point{}, sent: make(chan struct{}, 1)}
	var mu sync.Mutex
	var log strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	begin := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunState(ctx, StateOptions{
			Sample: func(ctx context.Context, emit func([]subsecond.Series) error) error {
				for i := int64(1); ctx.Err() == nil; i++ {
					emit([]subsecond.Series{{Name: "load1", CPU: subsecond.Unknown, Points: []subsecond.Point{{Time: i, Value: 1}}}})
					time.Sleep(5 * time.Millisecond)
				}
				return nil
			},
			Follow: func(ctx context.Context, emit func(subsecond.Marker) error) error {
				for i := range 5000 {
					emit(subsecond.Marker{Time: int64(i + 1), Text: "mlx5_core: resetting"})
				}
				<-ctx.Done()
				return nil
			},
			SendSeries: sink.sendSeries, SendMarkers: sink.sendMarkers, Flush: 20 * time.Millisecond,
			MarkerRate: 10, MarkerBurst: 100, Log: lockedWriter{&mu, &log},
		})
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done
	elapsed := time.Since(begin).Seconds()
	sink.mu.Lock()
	n, pts := len(sink.marks), len(sink.series[subsecond.SeriesKey{Name: "load1", CPU: subsecond.Unknown}])
	sink.mu.Unlock()
	if n < 100 || float64(n) > 100+10*elapsed+1 {
		t.Errorf("%d markers of a flood of 5000 in %.2f s; want the burst of 100 and at most 10 a second more", n, elapsed)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(log.String(), "matching lines not made markers") {
		t.Errorf("log = %q; want the dropped lines counted", log.String())
	}
	if pts < 10 {
		t.Errorf("%d points sampled meanwhile; want the sampler unhindered", pts)
	}
}

// TestRunStateSaysRefusedSeries: series the server refuses (the host
// keeps subsecond.MaxHostSeries) are said in the log with the server's
// reason once, and again only when more are refused; they are not kept
// to be sent again.
func TestRunStateSaysRefusedSeries(t *testing.T) {
	var log strings.Builder
	refused := []int{2, 2, 2, 3}
	sends := 0
	b := &stateBuffer{index: map[subsecond.SeriesKey]int{}, o: StateOptions{Log: &log, MaxPoints: 100,
		SendSeries: func(_ context.Context, ss []subsecond.Series) (subsecond.SeriesAdded, error) {
			n := refused[sends]
			sends++
			return subsecond.SeriesAdded{Added: 1, Refused: n, RefusedSeries: []subsecond.SeriesKey{{Name: "irq", CPU: 7, Label: "99:x"}}}, nil
		}}}
	for i := range refused {
		b.add([]subsecond.Series{{Name: "irq", CPU: 7, Label: "99:x", Points: []subsecond.Point{{Time: int64(i + 1), Value: 1}}}})
		b.send(context.Background(), true)
		if b.points != 0 {
			t.Fatalf("after send %d the buffer keeps %d points; want none", i+1, b.points)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	want := `host state: 2 series new to this host not stored: a host keeps at most 50000 series, and pruning its older recording frees those only it held (irq cpu 7 "99:x", …)`
	if len(lines) != 2 || lines[0] != want || !strings.HasPrefix(lines[1], "host state: 3 series new") {
		t.Errorf("log:\n%s\nwant two lines, the first\n%s", log.String(), want)
	}
}
