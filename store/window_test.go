package store

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

func TestWindowMatchesCapture(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	text := genText(t, genConfig{CPUs: 12, Seconds: 30, Hz: 49, Seed: 5, Start: 7200})
	p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	t0 := p.T0()
	tests := []struct {
		r    subsecond.Range
		cpus []int32
	}{
		{subsecond.Range{Start: t0 + 10e9, End: t0 + 20e9}, nil},
		{subsecond.Range{Start: t0 + 10e9, End: t0 + 20e9}, []int32{0, 3, 11}},
		{subsecond.Range{Start: t0 + 5_500_000_000, End: t0 + 5_600_000_000}, []int32{7}},
		{subsecond.Range{Start: t0 - 100e9, End: t0 + 1e12}, nil},
		{subsecond.Range{Start: t0 + 40e9, End: t0 + 50e9}, nil},
		{subsecond.Range{Start: t0 + 20e9, End: t0 + 10e9}, nil},
	}
	for _, tt := range tests {
		got, err := s.Window(ctx, p.ID, tt.r, tt.cpus)
		if err != nil {
			t.Fatalf("Window(%v, %v): %v", tt.r, tt.cpus, err)
		}
		want := filterColumns(c, tt.r, tt.cpus)
		if got.Len() != want.Len() || (want.Len() > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("Window(%v, %v) = %d samples; want the Capture's %d", tt.r, tt.cpus, got.Len(), want.Len())
		}
	}
	if got, _ := s.Window(ctx, p.ID, tests[0].r, nil); got.Len() == 0 {
		t.Errorf("Window over 10 s of a busy capture is empty")
	}
}

// filterColumns is the reference for Window: a scan of the whole capture.
func filterColumns(c *subsecond.Capture, r subsecond.Range, cpus []int32) subsecond.Columns {
	var out subsecond.Columns
	in := &c.Samples
	for i := range in.Time {
		if !r.Contains(in.Time[i]) {
			continue
		}
		if len(cpus) > 0 && !containsCPU(cpus, in.CPU[i]) {
			continue
		}
		out.Time = append(out.Time, in.Time[i])
		out.CPU = append(out.CPU, in.CPU[i])
		out.PID = append(out.PID, in.PID[i])
		out.TID = append(out.TID, in.TID[i])
		out.Comm = append(out.Comm, in.Comm[i])
		out.Event = append(out.Event, in.Event[i])
		out.Weight = append(out.Weight, in.Weight[i])
		out.Stack = append(out.Stack, in.Stack[i])
	}
	return out
}

func containsCPU(cpus []int32, c int32) bool {
	for _, x := range cpus {
		if x == c {
			return true
		}
	}
	return false
}

// TestWindowUsesPrimaryKey checks with EXPLAIN QUERY PLAN that a window
// query, with and without a CPU filter, is a range search on the samples
// table's (profile, t) key prefix rather than a scan of the profile.
func TestWindowUsesPrimaryKey(t *testing.T) {
	s, _ := openTest(t)
	for _, cpus := range [][]int32{nil, {1, 2, 40}} {
		q, args := windowQuery(1, 1000, subsecond.Range{Start: 10e9, End: 20e9}, cpus)
		rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		if !strings.Contains(all, "SEARCH samples USING PRIMARY KEY (profile=? AND t>? AND t<?)") ||
			strings.Contains(all, "TEMP B-TREE") {
			t.Errorf("plan for cpus %v = %q; want a primary-key range search with no sort", cpus, all)
		}
	}
}

func TestWindowTimeConversionDoesNotOverflow(t *testing.T) {
	for _, base := range []int64{0, 1e18, -1e18} {
		_, args := windowQuery(1, base, subsecond.Range{Start: -1 << 63, End: 1<<63 - 1}, nil)
		lo, hi := args[1].(int64), args[2].(int64)
		if lo > hi {
			t.Errorf("windowQuery(base %d) bounds = %d, %d; want lo ≤ hi", base, lo, hi)
		}
	}
}
