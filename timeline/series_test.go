package timeline

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

// seriesOf is a LaneSource over fixed series, which it buckets as
// store.Store.Lane does.
type seriesOf []subsecond.Series

func (ss seriesOf) Lane(_ context.Context, host, name string, from, to, bucket int64) (*subsecond.Lane, error) {
	n := subsecond.Buckets(from, to, bucket)
	l := &subsecond.Lane{Name: name, From: from, To: to, Bucket: bucket}
	for _, s := range ss {
		if s.Name != name {
			continue
		}
		sum, cnt := make([]float64, n), make([]float64, n)
		for _, p := range s.Points {
			if p.Time >= from && p.Time < to {
				sum[(p.Time-from)/bucket] += p.Value
				cnt[(p.Time-from)/bucket]++
			}
		}
		vs := make(subsecond.LaneValues, n)
		for i := range vs {
			vs[i] = math.NaN()
			if cnt[i] > 0 {
				vs[i] = sum[i] / cnt[i]
			}
		}
		l.Series = append(l.Series, subsecond.LaneSeries{CPU: s.CPU, Label: s.Label, Values: vs})
	}
	return l, nil
}

func TestLaneSharesTheCoresMapsColumns(t *testing.T) {
	n := rangeNight()
	src, _, _ := importNight(t, n)
	ctx := context.Background()
	start := n.CaptureStart(0).UnixNano()
	sec := int64(time.Second)
	// CPU 3's system time at 1 s: 100% for the points at start+11 s and
	// start+12 s (the seconds [10, 12) of the night), 0 elsewhere; the
	// host's rate of errors at start+5 s and start+30 s only.
	var sys, errs subsecond.Series
	sys = subsecond.Series{Name: "cpu.sys", CPU: 3}
	for k := int64(1); k <= 60; k++ {
		v := 0.0
		if k == 11 || k == 12 {
			v = 100
		}
		sys.Points = append(sys.Points, subsecond.Point{Time: start + k*sec, Value: v})
	}
	errs = subsecond.Series{Name: "net.errors", CPU: subsecond.Unknown, Label: "eth0",
		Points: []subsecond.Point{{Time: start + 5*sec, Value: 2}, {Time: start + 30*sec, Value: 4}}}
	ss := seriesOf{sys, errs}

	g, err := Timeline(ctx, src, "node-1", Span{From: start, To: start + 60*sec, Bucket: 2 * sec})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Lane(ctx, src, ss, "node-1", "cpu.sys", Span{From: start, To: start + 60*sec, Bucket: 2 * sec})
	if err != nil {
		t.Fatal(err)
	}
	if l.From != g.From || l.To != g.To || l.Bucket != g.Bucket || len(l.Series) != 1 || len(l.Series[0].Values) != g.Buckets {
		t.Fatalf("Lane = [%d, %d) by %d with %d series; want the cores map's [%d, %d) by %d, %d columns",
			l.From, l.To, l.Bucket, len(l.Series), g.From, g.To, g.Bucket, g.Buckets)
	}
	if l.Unit != "%" || !l.PerCPU || l.Series[0].CPU != 3 || l.Series[0].Max != 100 {
		t.Errorf("Lane = %+v; want CPU 3's %% with max 100", l)
	}
	// The points at 11 s and 12 s cover the seconds [10, 12): column 5.
	for b, v := range l.Series[0].Values {
		want := 0.0
		if b == 5 {
			want = 100
		}
		if v == nil || *v != want {
			t.Errorf("column %d = %v; want %v", b, v, want)
		}
	}

	// A rate's omitted zeros are zeros between its points, null outside.
	l, err = Lane(ctx, src, ss, "node-1", "net.errors", Span{From: start, To: start + 60*sec, Bucket: 10 * sec})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, v := range l.Series[0].Values {
		if v == nil {
			got = append(got, "-")
		} else {
			got = append(got, strconv.FormatFloat(*v, 'g', -1, 64))
		}
	}
	if want := "2 0 4 - - -"; strings.Join(got, " ") != want {
		t.Errorf("net.errors by 10 s = %s; want %s", strings.Join(got, " "), want)
	}

	if _, err := Lane(ctx, src, ss, "node-1", "cpu.bogus", Span{}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Lane(cpu.bogus) = %v; want ErrInvalid", err)
	}
}
