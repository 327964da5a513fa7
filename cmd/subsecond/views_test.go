package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// perfText renders generated samples as perf script text, the way
// `perf script` prints them (microsecond timestamps).
func perfText(ss []synth.Labeled) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s %d/%d [%03d] %d.%06d: %d %s:\n", s.Comm, s.PID, s.TID, s.CPU, s.Time/1e9, s.Time%1e9/1e3, s.Period, s.Event)
		for i, f := range s.Frames {
			fmt.Fprintf(&b, "\t%x %s+0x%x (%s)\n", 0x400000+i*16, f.Symbol, i, f.DSO)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// viewCapture writes a 6-CPU × 12 s capture with CPU 4 pegged from 3 s to
// 7 s, and returns its path.
func viewCapture(t *testing.T) string {
	t.Helper()
	ss := synth.Generate(synth.Options{Seed: 5, CPUs: 6, Seconds: 12, Hz: 49, Start: 300_100_000_000, Busy: 0.3,
		Pegged: 4, PegStart: 3e9, PegEnd: 7e9})
	var clean []synth.Labeled
	for _, s := range ss {
		// perf script cannot print these comm characters unambiguously; keep the capture plain.
		if !strings.ContainsAny(s.Comm, " ") {
			clean = append(clean, s)
		}
	}
	p := filepath.Join(t.TempDir(), "capture.perf.txt")
	if err := os.WriteFile(p, []byte(perfText(clean)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runView(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runCmd(t, nil, args...)
}

func TestHeatmapCommand(t *testing.T) {
	file := viewCapture(t)
	out, _, err := runView(t, "heatmap", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "  0 ms │") || !strings.Contains(out, "980 ms │") || !strings.ContainsAny(out, "░▒▓█") {
		t.Errorf("heatmap text lacks the ms axis or shading:\n%s", out)
	}
	if n := strings.Count(out, "ms │"); n != 50 {
		t.Errorf("heatmap text has %d rows; want 50", n)
	}
	out, _, err = runView(t, "heatmap", "--format", "json", "--rows", "10", "--col", "0.5", "--cpu", "4", file)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Rows, Cols int
		Counts     [][]int64
		Total      int64
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	// CPU 4 is pegged for 4 s at 49 Hz and 30% busy otherwise.
	if g.Rows != 10 || g.Cols != 25 || g.Total < 196 || g.Total > 196+8*49 {
		t.Errorf("heatmap json: rows %d cols %d total %d", g.Rows, g.Cols, g.Total)
	}
	out, _, err = runView(t, "heatmap", "--format", "csv", "--rows", "2", file)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); lines[0] != "col,row,start_s,end_s,samples" || len(lines) != 1+13*2 || !strings.HasPrefix(lines[2], "0,1,0.5,1,") {
		t.Errorf("heatmap csv:\n%s", out)
	}
}

func TestCPUsCommandShowsPeggedCore(t *testing.T) {
	file := viewCapture(t)
	out, _, err := runView(t, "cpus", file)
	if err != nil {
		t.Fatal(err)
	}
	best, bestRow := -1, ""
	for _, line := range strings.Split(out, "\n") {
		if n := strings.Count(line, "█"); strings.HasPrefix(strings.TrimSpace(line), "cpu ") && n > best {
			best, bestRow = n, line
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(bestRow), "cpu 4 ") || best < 18 {
		t.Errorf("the row with most █ is %q (%d); want cpu 4 with about 20:\n%s", bestRow, best, out)
	}
	if !strings.HasSuffix(bestRow, " ◀1") || strings.Count(out, "◀1") != 2 || !strings.Contains(out, "◀1 cpu 4 3.1–7.1 s (4 s): node-agent (100%) in mem_cgroup_nr_lru_pages") {
		t.Errorf("cpus does not point at the pegged core's episode:\n%s", out)
	}
	out, _, err = runView(t, "cpus", "--format", "json", "--bucket", "1", "--cpu", "4-5", file)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		CPUs []int32
		Busy [][]float64
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(k.CPUs) != "[4 5]" || k.Busy[0][4] < 0.95 {
		t.Errorf("cpus json: cpus %v busy %v", k.CPUs, k.Busy)
	}
}

func TestFlamegraphCommand(t *testing.T) {
	file := viewCapture(t)
	// The folded export of the whole capture, idle included, is collapse's output.
	want, _, err := runView(t, "collapse", file)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runView(t, "flamegraph", "--idle", "--format", "folded", file)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || got == "" {
		t.Errorf("flamegraph --idle --format folded differs from collapse (%d vs %d bytes)", len(got), len(want))
	}
	out := filepath.Join(t.TempDir(), "g.pb.gz")
	if _, _, err := runView(t, "flamegraph", "--start", "3.2", "--end", "4.7", "--cpu", "4", "--format", "pprof", "-o", out, file); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
		if s.Label["cpu"][0] != "4" || s.Label["comm"][0] != "node-agent" {
			t.Errorf("pprof sample labels %v; want cpu 4, node-agent", s.Label)
		}
	}
	if n < 70 || n > 75 || p.DurationNanos != 1_500_000_000 {
		t.Errorf("pprof: %d samples over %d ns; want about 73 over 1.5 s", n, p.DurationNanos)
	}
	svg, _, err := runView(t, "flamegraph", "--start", "3", "--end", "4", "--function", "mem_cgroup", file)
	if err != nil || !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "mem_cgroup_nr_lru_pages") || strings.Contains(svg, "python3") {
		t.Errorf("flamegraph svg with --function: err %v, %d bytes", err, len(svg))
	}
	js, _, err := runView(t, "flamegraph", "--format", "json", "--start", "1", "--end", "3", "--start2", "3", "--end2", "5", file)
	if err != nil || !strings.Contains(js, `"base_n"`) {
		t.Errorf("differential json: err %v, %.200s", err, js)
	}
	// Differential exports: difffolded lines "stack base target"; a base
	// taken from another capture; the function table with both counts.
	folded, _, err := runView(t, "flamegraph", "--format", "folded", "--start", "3", "--end", "7", "--start2", "0", "--end2", "3", file)
	if err != nil {
		t.Fatal(err)
	}
	var grown bool
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("differential folded line %q lacks two counts", line)
		}
		b, errB := strconv.ParseInt(f[len(f)-2], 10, 64)
		g, errG := strconv.ParseInt(f[len(f)-1], 10, 64)
		if errB != nil || errG != nil {
			t.Fatalf("differential folded line %q: counts are not numbers", line)
		}
		if strings.HasSuffix(f[len(f)-3], ";mem_cgroup_nr_lru_pages") && g > b {
			grown = true
		}
	}
	if !grown {
		t.Errorf("differential folded export shows no growth of the pegged CPU's memcg walk:\n%.500s", folded)
	}
	other := filepath.Join(t.TempDir(), "other.perf.txt")
	ss := synth.Generate(synth.Options{Seed: 9, CPUs: 2, Seconds: 3, Hz: 49, Start: 900_100_000_000, Pegged: -1})
	if err := os.WriteFile(other, []byte(perfText(ss)), 0o644); err != nil {
		t.Fatal(err)
	}
	fns, _, err := runView(t, "flamegraph", "--format", "functions", "--base", other, "--start", "3", "--end", "7", file)
	var table struct {
		Total     int64 `json:"total"`
		BaseTotal int64 `json:"base_total"`
		Functions []struct {
			Name        string `json:"name"`
			BaseTotal   int64  `json:"base_total"`
			Significant bool   `json:"significant"`
		} `json:"functions"`
	}
	if err != nil || json.Unmarshal([]byte(fns), &table) != nil || table.BaseTotal == 0 || table.Total == 0 || len(table.Functions) == 0 {
		t.Fatalf("flamegraph --base --format functions: err %v, %.300s", err, fns)
	}
	for _, f := range table.Functions {
		if f.Name == "mem_cgroup_nr_lru_pages" && !f.Significant {
			t.Errorf("the memcg walk of the pegged CPU, absent from the base capture, is not a significant change")
		}
	}
	if _, _, err := runView(t, "flamegraph", "--base", "nosuch.txt", file); err == nil || !strings.Contains(err.Error(), "--base") {
		t.Errorf("flamegraph --base of a missing file: error %v; want it to name --base", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--start", "50", "--end", "60"}, "past the end"},
		{[]string{"--start", "5", "--end", "4"}, "empty"},
		{[]string{"--start", "x"}, "start:"},
		{[]string{"--start", "9223372036"}, "out of range"},
		{[]string{"--start", "-9999999999"}, "out of range"},
		{[]string{"--format", "png"}, "--format"},
		{[]string{"--only", "both"}, "--only"},
		{[]string{"--comm_regex", "("}, "--comm_regex"},
	} {
		_, _, err := runView(t, append(append([]string{"flamegraph"}, tc.args...), file)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("flamegraph %v: error %v; want it to mention %q", tc.args, err, tc.want)
		}
	}
}

func TestHotspotsCommand(t *testing.T) {
	file := viewCapture(t)
	out, _, err := runView(t, "hotspots", "--format", "json", file)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		T0    int64 `json:"t0_ns"`
		Spots []struct {
			CPU      int32  `json:"cpu"`
			Start    int64  `json:"start_ns"`
			End      int64  `json:"end_ns"`
			Function string `json:"top_function"`
		} `json:"hotspots"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Spots) != 1 || rep.Spots[0].CPU != 4 || rep.Spots[0].Function != "mem_cgroup_nr_lru_pages" {
		t.Fatalf("hotspots = %+v; want CPU 4 in mem_cgroup_nr_lru_pages", rep.Spots)
	}
	if s := rep.Spots[0]; abs64(s.Start-rep.T0-3_100_000_000) > 1e8 || abs64(s.End-rep.T0-7_100_000_000) > 1e8 {
		t.Errorf("episode [%d, %d) ns from T0; want [3.1 s, 7.1 s) within a bucket", s.Start-rep.T0, s.End-rep.T0)
	}
	text, _, err := runView(t, "hotspots", "--min", "1500ms", file)
	if err != nil || !strings.Contains(text, "node-agent") || !strings.Contains(text, "Hottest heatmap cells") {
		t.Errorf("hotspots text: %v\n%s", err, text)
	}
	if _, _, err := runView(t, "hotspots", "--threshold", "2", file); err == nil {
		t.Error("hotspots --threshold 2: no error")
	}
}

// TestStoredProfile runs the views on a profile stored in the database by ID.
func TestStoredProfile(t *testing.T) {
	file := viewCapture(t)
	db := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.OpenStore(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(file)
	p, _, err := s.Import(context.Background(), f, store.ImportOptions{FileName: "capture.perf.txt"})
	f.Close()
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	fromFile, _, err := runView(t, "heatmap", "--format", "csv", file)
	if err != nil {
		t.Fatal(err)
	}
	fromDB, _, err := runView(t, "heatmap", "--db", db, "--format", "csv", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fromDB != fromFile {
		t.Error("heatmap of the stored profile differs from the file's")
	}
	if _, _, err := runView(t, "cpus", "--db", db, "nosuchid"); err == nil {
		t.Error("cpus of an unknown ID: no error")
	}
}

func abs64(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// TestCPUsListAllCommand checks the line under the cores map's few
// episodes that names the command listing them all: it carries the map's
// filters and bucket, and run, it lists exactly as many episodes as the
// map says there are.
func TestCPUsListAllCommand(t *testing.T) {
	ss := synth.Generate(synth.Options{Seed: 7, CPUs: 6, Seconds: 12, Hz: 49, Start: 300_100_000_000, Busy: 0.85, Pegged: -1})
	file := filepath.Join(t.TempDir(), "busy capture.perf.txt")
	if err := os.WriteFile(file, []byte(perfText(ss)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runView(t, "cpus", "--comm_regex", "^[a-z]", "--bucket", "0.2", file)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var cmd string
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(line, "All %d:", &n); err == nil {
			_, cmd, _ = strings.Cut(line, ": ")
		}
	}
	want := "subsecond hotspots --comm_regex '^[a-z]' --bucket 0.2 --limit 0 '" + file + "'"
	if cmd != want || n <= 3 || !strings.Contains(out, fmt.Sprintf("Standing out (of %d episodes", n)) {
		t.Fatalf("cpus names the command %q for all %d episodes; want %q for more than 3:\n%s", cmd, n, want, out)
	}
	words, err := shellWords(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = runView(t, words[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, fmt.Sprintf("%d episodes ≥ 70%% busy for 1 s or more, the %d most unusual first", n, n)) {
		t.Errorf("%s prints\n%s\nwant all %d episodes", cmd, out, n)
	}
}
