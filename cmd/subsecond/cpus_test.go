package main

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestCPUsMeasureSystem checks --measure system on a capture whose CPU 4
// runs the memcg walk (a kernel leaf) from 3 s to 7 s: the text map shades
// by system fraction, csv and json carry it, and a bad measure is refused.
func TestCPUsMeasureSystem(t *testing.T) {
	file := viewCapture(t)
	out, _, err := runView(t, "cpus", "--measure", "system", "--bucket", "1", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "shading: system fraction") || !strings.Contains(out, "system up to 25%") {
		t.Errorf("cpus --measure system does not say what it shades:\n%s", out)
	}
	full := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if row := strings.TrimSpace(line); strings.HasPrefix(row, "cpu ") {
			full[strings.Fields(row)[1]] = strings.Count(line, "█")
		}
	}
	if len(full) != 6 || full["4"] != 4 {
		t.Errorf("system map: █ per CPU %v; want 6 CPUs and 4 on CPU 4 (seconds 3-6):\n%s", full, out)
	}
	for cpu, n := range full {
		if cpu != "4" && n > 0 {
			t.Errorf("system map: CPU %s has %d █; want none (30%% busy, mostly user):\n%s", cpu, n, out)
		}
	}
	// The default measure shades by busy and adds the mean system column.
	out, _, err = runView(t, "cpus", "--bucket", "1", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "shading: busy fraction") || !strings.Contains(out, " sys\n") {
		t.Errorf("cpus default lacks the busy shading or the sys column:\n%s", out)
	}

	out, _, err = runView(t, "cpus", "--format", "csv", "--bucket", "1", file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "cpu,bucket,start_s,samples,busy,system" || len(recs) != 1+6*13 {
		t.Fatalf("cpus csv: header %v, %d records; want the system column and 78 rows", recs[0], len(recs)-1)
	}
	for _, r := range recs[1:] {
		busy, _ := strconv.ParseFloat(r[4], 64)
		sys, err := strconv.ParseFloat(r[5], 64)
		if err != nil || sys > busy {
			t.Errorf("cpus csv row %v: system %v exceeds busy %v (%v)", r, sys, busy, err)
		}
		if r[0] == "4" && r[1] >= "4" && r[1] <= "6" && len(r[1]) == 1 && sys < 0.95 {
			t.Errorf("cpus csv: CPU 4 second %s (wholly pegged) system %v; want ≥ 0.95", r[1], sys)
		}
	}

	out, _, err = runView(t, "cpus", "--format", "json", "--bucket", "1", "--cpu", "4", file)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		System [][]float64 `json:"system"`
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatal(err)
	}
	if len(k.System) != 1 || len(k.System[0]) != 13 || k.System[0][5] < 0.95 {
		t.Errorf("cpus json system = %v; want one CPU, 13 buckets, second 5 ≥ 0.95", k.System)
	}

	if _, _, err := runView(t, "cpus", "--measure", "sys", file); err == nil || !strings.Contains(err.Error(), "--measure: \"sys\"") {
		t.Errorf("cpus --measure sys: error %v; want one naming --measure", err)
	}
}
