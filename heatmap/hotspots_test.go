package heatmap_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/query"
)

func TestHotspotsFindPeggedCPU(t *testing.T) {
	start := int64(2000_250_000_000)
	pegStart, pegEnd := int64(5e9), int64(9_500_000_000)
	ss := synth.Generate(synth.Options{Seed: 11, CPUs: 8, Seconds: 20, Hz: 49, Start: start, Busy: 0.3,
		Pegged: 2, PegStart: pegStart, PegEnd: pegEnd})
	c := synth.Capture(ss)
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Spots) != 1 {
		t.Fatalf("Hotspots = %+v; want one episode on CPU 2", rep.Spots)
	}
	s := rep.Spots[0]
	bucket := query.DefaultBucket
	if s.CPU != 2 || abs(s.Start-(start+pegStart)) > bucket || abs(s.End-(start+pegEnd)) > bucket {
		t.Errorf("episode CPU %d [%d, %d); want CPU 2 [%d, %d) within %d ns", s.CPU, s.Start, s.End, start+pegStart, start+pegEnd, bucket)
	}
	if s.Function != "mem_cgroup_nr_lru_pages" || s.FunctionShare < 0.95 {
		t.Errorf("top function %q (%.2f); want mem_cgroup_nr_lru_pages", s.Function, s.FunctionShare)
	}
	if s.Comm != "node-agent" || s.CommShare < 0.95 {
		t.Errorf("dominant comm %q (%.2f); want node-agent", s.Comm, s.CommShare)
	}
	if !strings.HasPrefix(s.Stack, "node-agent;runtime.goexit;main.collect;") || !strings.HasSuffix(s.Stack, ";memcg_stat_show;mem_cgroup_nr_lru_pages") {
		t.Errorf("top stack %q", s.Stack)
	}
	if s.Busy < 0.9 || s.Samples < int64(float64(s.End-s.Start)/1e9*49*0.9) {
		t.Errorf("busy %.2f with %d samples over %d ns", s.Busy, s.Samples, s.End-s.Start)
	}

	// Hottest cells: sorted, the first is the heatmap's maximum.
	g, _ := heatmap.Offset(c, query.Filter{}, heatmap.Options{})
	if len(rep.Cells) != 10 || rep.Cells[0].Count != g.Max {
		t.Fatalf("cells = %+v; want 10, the first with %d samples", rep.Cells, g.Max)
	}
	for i, cell := range rep.Cells {
		if g.Counts[cell.Col][cell.Row] != cell.Count || i > 0 && cell.Count > rep.Cells[i-1].Count {
			t.Errorf("cell %d = %+v; heatmap has %d", i, cell, g.Counts[cell.Col][cell.Row])
		}
		if r := g.CellRange(cell.Col, cell.Row); r.Start != cell.Start || r.End != cell.End {
			t.Errorf("cell %d range [%d, %d); want %+v", i, cell.Start, cell.End, r)
		}
	}

	// Filters apply: without the node agent nothing is hot; a 5 s minimum drops the 4.5 s episode.
	rep, _ = heatmap.Hotspots(c, query.Filter{CommRegex: "^[^n]"}, heatmap.HotOptions{})
	if len(rep.Spots) != 0 {
		t.Errorf("Hotspots(comm_regex=^[^n]) = %+v; want none", rep.Spots)
	}
	// …but the report says that the filter hides CPU 2.
	if len(rep.Hidden) != 1 || rep.Hidden[0] != 2 || !strings.Contains(rep.Note, "1 core busy ≥ 70% for 1 s or more is hidden by comm_regex=^[^n]: CPU 2 has hot spots") {
		t.Errorf("Hotspots(comm_regex=^[^n]): hidden %v, note %q; want CPU 2 named as hidden", rep.Hidden, rep.Note)
	}
	rep, _ = heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Min: 5e9})
	if len(rep.Spots) != 0 {
		t.Errorf("Hotspots(min 5 s) = %+v; want none", rep.Spots)
	}
	rep, _ = heatmap.Hotspots(c, query.Filter{Only: "kernel"}, heatmap.HotOptions{})
	if len(rep.Spots) != 1 || !strings.HasPrefix(rep.Spots[0].Stack, "node-agent;entry_SYSCALL_64_after_hwframe;") {
		t.Errorf("Hotspots(only=kernel) = %+v; want the kernel part of the stack", rep.Spots)
	}
	if _, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Threshold: 1.5}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("threshold 1.5: error %v; want ErrInvalid", err)
	}
}

func abs(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// TestHotOptionsCheckedByTable: a Go caller's bad hot-spot option gets the
// error the query table gives the same value in a URL, and zero options
// are the table's defaults.
func TestHotOptionsCheckedByTable(t *testing.T) {
	ss := synth.Generate(synth.Options{Seed: 3, CPUs: 2, Seconds: 4, Hz: 49, Start: 1e12, Busy: 0.5})
	c := synth.Capture(ss)
	for _, tt := range []struct {
		opt   heatmap.HotOptions
		param string
	}{
		{heatmap.HotOptions{Measure: "idle"}, "measure=idle"},
		{heatmap.HotOptions{Threshold: 1.5}, "threshold=1.5"},
		{heatmap.HotOptions{Min: 500_000}, "min=0.0005"},
		{heatmap.HotOptions{Cells: 1001}, "cells=1001"},
	} {
		_, err := heatmap.Hotspots(c, query.Filter{}, tt.opt)
		v, _ := url.ParseQuery(tt.param)
		_, want := query.Parse(v)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("Hotspots(%+v) error = %v; want Parse(%s)'s %v", tt.opt, err, tt.param, want)
		}
	}
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := query.Default()
	if rep.Measure != d.Measure || rep.Threshold != d.Threshold || rep.Min != d.Min {
		t.Errorf("Hotspots(zero options) found with %s, %v, %d; want the table's defaults %s, %v, %d",
			rep.Measure, rep.Threshold, rep.Min, d.Measure, d.Threshold, d.Min)
	}
}
