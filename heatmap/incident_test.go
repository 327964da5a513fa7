package heatmap_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// generatedIncident generates an incident capture of cpus CPUs × 40 s with
// CPU 5 pegged, and reads its perf script text with the strict parser.
func generatedIncident(t *testing.T, cpus int) (*subsecond.Capture, sampledata.Truth) {
	t.Helper()
	cfg := sampledata.DefaultConfig()
	cfg.CPUs, cfg.Seconds, cfg.IncidentCPU = cpus, 40, 5
	var text bytes.Buffer
	truth, err := sampledata.Generate(&text, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := parser.NewScanner(&text, parser.Options{Strict: true})
	b := subsecond.NewBuilder()
	for sc.Scan() {
		b.Add(sc.Sample())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.Capture(subsecond.Profile{ID: "incident"}), truth
}

// TestHotspotsOnGeneratedIncident generates a small incident capture
// (8 CPUs × 40 s), parses it as perf script text, and checks that hot spots
// report the pegged CPU and every planted window within one bucket, with
// the memory-cgroup walker as top function.
func TestHotspotsOnGeneratedIncident(t *testing.T) {
	c, truth := generatedIncident(t, 8)
	if len(truth.Incidents) == 0 {
		t.Fatal("the generator planted no incident")
	}
	if c.Profile.T0() != truth.T0NS {
		t.Fatalf("T0 = %d; truth says %d", c.Profile.T0(), truth.T0NS)
	}
	rep, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	bucket := query.DefaultBucket
	planted := map[int]bool{}
	for _, w := range truth.Incidents {
		if w.EndNS-w.StartNS < 1e9 {
			continue // shorter than the minimum episode
		}
		found := false
		for i, s := range rep.Spots {
			if int(s.CPU) != w.CPU || abs(s.Start-w.StartNS) > bucket || abs(s.End-w.EndNS) > bucket {
				continue
			}
			planted[i], found = true, true
			if s.Function != "mem_cgroup_nr_lru_pages" || s.Comm != "kubelet" {
				t.Errorf("window [%.2f, %.2f) s: %s in %q (%.0f%%); want kubelet in mem_cgroup_nr_lru_pages", w.Start, w.End, s.Comm, s.Function, 100*s.FunctionShare)
			}
			if !strings.HasSuffix(s.Stack, ";memcg_stat_show;mem_cgroup_nr_lru_pages") {
				t.Errorf("window [%.2f, %.2f) s: top stack %q", w.Start, w.End, s.Stack)
			}
		}
		if !found {
			t.Errorf("no hot spot for window CPU %d [%.2f, %.2f) s", w.CPU, w.Start, w.End)
		}
	}
	// Nothing else looks like the incident, and the incident ranks first:
	// the kubelet does not usually own that core.
	for i, s := range rep.Spots {
		if !planted[i] && (s.Function == "mem_cgroup_nr_lru_pages" || s.Comm == "kubelet") {
			t.Errorf("unplanted memcg hot spot: CPU %d [%.2f, %.2f) s, %s", s.CPU, float64(s.Start-truth.T0NS)/1e9, float64(s.End-truth.T0NS)/1e9, s.Comm)
		}
		if i < len(planted) && !planted[i] {
			t.Errorf("hot spot %d is CPU %d %s (score %.0f, usual %.2f); want the planted windows first", i, s.CPU, s.Comm, s.Score, s.Usual)
		}
	}
}
