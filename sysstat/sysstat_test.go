package sysstat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func at(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

// midnightZone is the zone mpstat-midnight.txt was recorded in (MANIFEST).
var midnightZone = time.FixedZone("LOC", 18*60+44)

func parseFile(t *testing.T, name string, opt Options) []subsecond.Series {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	series, err := Parse(f, opt)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return series
}

func find(series []subsecond.Series, name string, cpu int32, label string) *subsecond.Series {
	for i := range series {
		if s := &series[i]; s.Name == name && s.CPU == cpu && s.Label == label {
			return s
		}
	}
	return nil
}

// row is a CPU row of a recorded report as the test reads it, apart from
// the parser: its CPU column and its last column, %idle in every header.
type row struct {
	cpu  string
	idle string
}

// rows returns the CPU rows of a report file: the lines that are not
// blank, "Linux" or "Average:" lines, headers or LINUX RESTART lines.
func rows(t *testing.T, name string) []row {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "Linux" || f[0] == "Average:" || strings.Contains(line, "CPU") {
			continue
		}
		if f[1] == "AM" || f[1] == "PM" {
			f = f[1:]
		}
		out = append(out, row{cpu: f[1], idle: f[len(f)-1]})
	}
	return out
}

func TestRecordedReports(t *testing.T) {
	tests := []struct {
		file   string
		loc    *time.Location
		format Format
		kinds  []string // the series kinds the file's columns give
		cpus   int      // CPUs, not counting "all"
		first  string   // the first row's time
	}{
		{"mpstat.txt", nil, Mpstat, cpuKinds, 2, "2026-12-01T23:40:27Z"},
		{"mpstat-c.txt", nil, Mpstat, cpuKinds, 2, "2026-12-01T23:40:32Z"},
		{"mpstat-iso.txt", nil, Mpstat, cpuKinds, 2, "2026-12-01T23:40:35Z"},
		{"mpstat-en_US.txt", nil, Mpstat, cpuKinds, 2, "2026-12-01T23:41:10Z"},
		{"mpstat-midnight.txt", midnightZone, Mpstat, cpuKinds, 2, "2026-12-01T23:41:13Z"},
		{"sar.txt", nil, Sar, sarKinds, 2, "2026-12-01T23:40:38Z"},
		{"sar-all.txt", nil, Sar, cpuKinds, 2, "2026-12-01T23:40:41Z"},
		{"sar-f.txt", nil, Sar, sarKinds, 2, "2026-12-01T23:40:56Z"},
		{"sar-f-all.txt", nil, Sar, cpuKinds, 2, "2026-12-01T23:40:56Z"},
		{"mpstat-96cpu-synthetic.txt", nil, Mpstat, cpuKinds, 96, "2026-11-30T10:15:01Z"},
		{"mpstat-ampm-midnight-synthetic.txt", nil, Mpstat, cpuKinds, 2, "2026-11-30T23:59:59Z"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got, err := Detect(bufio.NewReader(f)); got != tt.format || err != nil {
				t.Errorf("Detect = %v, %v; want %v", got, err, tt.format)
			}
			series := parseFile(t, tt.file, Options{Location: tt.loc})
			rs := rows(t, tt.file)
			intervals := len(rs) / (tt.cpus + 1)
			if len(rs) != intervals*(tt.cpus+1) {
				t.Fatalf("%d rows in the file, not a multiple of %d CPUs and all", len(rs), tt.cpus+1)
			}
			if got, want := len(series), len(tt.kinds)*(tt.cpus+1); got != want {
				t.Errorf("%d series; want %d (%d kinds × %d CPUs and all)", got, want, len(tt.kinds), tt.cpus)
			}
			points := 0
			for i, s := range series {
				points += len(s.Points)
				if want := tt.kinds[i/(tt.cpus+1)]; s.Name != want || s.CPU != int32(i%(tt.cpus+1))-1 {
					t.Errorf("series %d = %s CPU %d; want %s CPU %d", i, s.Name, s.CPU, want, int32(i%(tt.cpus+1))-1)
				}
				if len(s.Points) != intervals {
					t.Errorf("%s CPU %d: %d points; want %d", s.Name, s.CPU, len(s.Points), intervals)
					continue
				}
				if s.Points[0].Time != at(tt.first) {
					t.Errorf("%s CPU %d: first point at %v; want %s", s.Name, s.CPU, time.Unix(0, s.Points[0].Time).UTC(), tt.first)
				}
				for j := 1; j < len(s.Points); j++ {
					if d := s.Points[j].Time - s.Points[j-1].Time; d != int64(time.Second) {
						t.Errorf("%s CPU %d: point %d is %v after point %d; want 1s", s.Name, s.CPU, j, time.Duration(d), j-1)
					}
				}
			}
			if want := len(rs) * len(tt.kinds); points != want {
				t.Errorf("%d points; want %d (%d rows × %d columns)", points, want, len(rs), len(tt.kinds))
			}
			// Every row's %idle, read apart from the parser, is its point.
			next := map[int32]int{}
			for _, r := range rs {
				cpu := subsecond.Unknown
				if r.cpu != "all" {
					c, _ := strconv.Atoi(r.cpu)
					cpu = int32(c)
				}
				want, _ := strconv.ParseFloat(r.idle, 64)
				s := find(series, "cpu.idle", cpu, "")
				if s == nil || next[cpu] >= len(s.Points) {
					t.Fatalf("no cpu.idle point %d of CPU %s", next[cpu], r.cpu)
				}
				if got := s.Points[next[cpu]].Value; got != want {
					t.Errorf("cpu.idle of CPU %s, interval %d = %v; want %v", r.cpu, next[cpu], got, want)
				}
				next[cpu]++
			}
		})
	}
}

var (
	cpuKinds = []string{"cpu.usr", "cpu.nice", "cpu.sys", "cpu.iowait", "cpu.irq", "cpu.soft", "cpu.steal", "cpu.idle"}
	sarKinds = []string{"cpu.usr", "cpu.nice", "cpu.sys", "cpu.iowait", "cpu.steal", "cpu.idle"}
)

func TestKnownValues(t *testing.T) {
	tests := []struct {
		file  string
		loc   *time.Location
		kind  string
		cpu   int32
		label string
		i     int // the point's index in its series
		time  string
		value float64
	}{
		{"mpstat.txt", nil, "cpu.usr", 1, "", 0, "2026-12-01T23:40:27Z", 26.47},
		{"mpstat.txt", nil, "cpu.steal", -1, "", 4, "2026-12-01T23:40:31Z", 1.48},
		{"mpstat-iso.txt", nil, "cpu.usr", -1, "", 1, "2026-12-01T23:40:36Z", 81.59},
		{"mpstat-iso.txt", nil, "cpu.soft", 1, "", 1, "2026-12-01T23:40:36Z", 1.00},
		{"mpstat-en_US.txt", nil, "cpu.sys", 0, "", 0, "2026-12-01T23:41:10Z", 2.00},
		{"mpstat-en_US.txt", nil, "cpu.sys", 1, "", 1, "2026-12-01T23:41:11Z", 2.97},
		{"mpstat-midnight.txt", midnightZone, "cpu.usr", -1, "", 3, "2026-12-01T23:41:16Z", 6.57},
		{"mpstat-midnight.txt", midnightZone, "cpu.sys", 1, "", 5, "2026-12-01T23:41:18Z", 1.00},
		{"sar.txt", nil, "cpu.usr", 0, "", 0, "2026-12-01T23:40:38Z", 86.14},      // %user
		{"sar.txt", nil, "cpu.sys", -1, "", 2, "2026-12-01T23:40:40Z", 10.55},     // %system
		{"sar-all.txt", nil, "cpu.steal", 1, "", 0, "2026-12-01T23:40:41Z", 4.00}, // %steal before %irq
		{"sar-all.txt", nil, "cpu.soft", -1, "", 2, "2026-12-01T23:40:43Z", 1.00},
		{"sar-f.txt", nil, "cpu.usr", -1, "", 2, "2026-12-01T23:40:58Z", 31.90}, // after LINUX RESTART
		{"sar-f-all.txt", nil, "cpu.soft", 1, "", 0, "2026-12-01T23:40:56Z", 4.04},
		{"mpstat-96cpu-synthetic.txt", nil, "cpu.usr", 95, "", 2, "2026-11-30T10:15:03Z", 31.25},
		{"mpstat-96cpu-synthetic.txt", nil, "cpu.steal", 88, "", 1, "2026-11-30T10:15:02Z", 1.00},
		{"mpstat-96cpu-synthetic.txt", nil, "cpu.usr", -1, "", 0, "2026-11-30T10:15:01Z", 29.62},
		{"mpstat-ampm-midnight-synthetic.txt", nil, "cpu.usr", -1, "", 1, "2026-12-01T00:00:00Z", 20.00},
		{"mpstat-ampm-midnight-synthetic.txt", nil, "cpu.usr", 1, "", 2, "2026-12-01T00:00:01Z", 28.00},
		{"cgroups.log", nil, "cgroups", -1, "memory", 0, "2026-12-01T23:40:43.719699627Z", 62},
		{"cgroups.log", nil, "cgroups", -1, "pids", 2, "2026-12-01T23:40:45.742060154Z", 1},
	}
	for _, tt := range tests {
		series := parseFile(t, tt.file, Options{Location: tt.loc})
		s := find(series, tt.kind, tt.cpu, tt.label)
		if s == nil || tt.i >= len(s.Points) {
			t.Errorf("%s: no point %d of %s CPU %d %q", tt.file, tt.i, tt.kind, tt.cpu, tt.label)
			continue
		}
		if got, want := s.Points[tt.i], (subsecond.Point{Time: at(tt.time), Value: tt.value}); got != want {
			t.Errorf("%s: %s CPU %d %q point %d = {%v %v}; want {%s %v}", tt.file, tt.kind, tt.cpu, tt.label, tt.i,
				time.Unix(0, got.Time).UTC().Format(time.RFC3339Nano), got.Value, tt.time, tt.value)
		}
	}
}

func TestCgroupsRecorded(t *testing.T) {
	series := parseFile(t, "cgroups.log", Options{})
	b, err := os.ReadFile("testdata/cgroups.log")
	if err != nil {
		t.Fatal(err)
	}
	var stamps, controllers int
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "2026-"):
			stamps++
		case line != "" && !strings.HasPrefix(line, "#"):
			controllers++
		}
	}
	points := 0
	for _, s := range series {
		points += len(s.Points)
		if s.Name != "cgroups" || s.CPU != subsecond.Unknown || len(s.Points) != stamps {
			t.Errorf("series %s CPU %d %q with %d points; want cgroups CPU -1 with %d", s.Name, s.CPU, s.Label, len(s.Points), stamps)
		}
	}
	if points != controllers || len(series) != controllers/stamps {
		t.Errorf("%d series of %d points; want %d of %d", len(series), points, controllers/stamps, controllers)
	}
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"mpstat.txt", "sar-f.txt", "cgroups.log"} {
		series := parseFile(t, name, Options{})
		var b bytes.Buffer
		for _, s := range series {
			line, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if got := b.String(); got != string(want) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(gl) && i < len(wl); i++ {
				if gl[i] != wl[i] {
					t.Errorf("%s: line %d differs from %s:\ngot  %s\nwant %s", name, i+1, golden, gl[i], wl[i])
					break
				}
			}
			if len(gl) != len(wl) {
				t.Errorf("%s: %d lines; %s has %d", name, len(gl), golden, len(wl))
			}
		}
	}
}

const header = "Linux 6.1.0-18-amd64 (node-1) \t11/30/2026 \t_x86_64_\t(2 CPU)\n\n"

func TestErrors(t *testing.T) {
	const h = "23:40:26     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n"
	tests := []struct {
		name, in string
		want     string // a part of the error
	}{
		{"not sysstat", "hello\n", `line 1: expected mpstat/sar output (a "Linux …" header) or timestamped /proc/cgroups snapshots`},
		{"blank lines, then not sysstat", "\n\n{\"json\": 1}\n", `line 3: expected mpstat/sar output`},
		{"empty", "", "empty input"},
		{"a Linux line without a header", header + "nothing here\n", `no mpstat or sar CPU header`},
		{"missing column", header + h + "23:40:27     all   20.40    0.00   13.43    0.50    0.00    0.00    1.00    0.00   64.68\n",
			"line 4: expected 11 columns after the time (CPU %usr %nice %sys %iowait %irq %soft %steal %guest %gnice %idle, as the header of line 3), found 10"},
		{"bad time", header + h + "23:4O:27     all   20.40    0.00   13.43    0.50    0.00    0.00    1.00    0.00    0.00   64.68\n",
			"line 4: expected a time (HH:MM:SS, or HH:MM:SS AM or PM)"},
		{"hour 25", header + h + "25:40:27     all   20.40    0.00   13.43    0.50    0.00    0.00    1.00    0.00    0.00   64.68\n",
			"line 4: expected a time"},
		{"13 PM", header + "01:40:26 PM  CPU    %usr   %idle\n13:40:27 PM  all   20.40   79.60\n", "line 4: expected a time"},
		{"bad value", header + h + "23:40:27     all   20.40    0.00   13.43    0.50    0.00    0.00    1.00    0.00    0.00   x64.68\n",
			`line 4: expected a number in column %idle, found "x64.68"`},
		{"decimal comma", header + h + "23:40:27     all   20,40    0,00   13,43    0,50    0,00    0,00    1,00    0,00    0,00   64,68\n",
			`line 4: expected a number in column %usr, found "20,40" (a decimal comma: record with LC_ALL=C)`},
		{"bad CPU", header + h + "23:40:27     one   20.40    0.00   13.43    0.50    0.00    0.00    1.00    0.00    0.00   64.68\n",
			`line 4: expected a CPU number or "all" in column CPU, found "one"`},
		{"unknown column", header + "23:40:26     CPU    %usr   %wait   %idle\n", `line 3: unknown column "%wait" in the CPU header`},
		{"two idle columns", header + "23:40:26     CPU    %idle   %idle\n", "line 3: two columns of cpu.idle"},
		{"row before header", header + "23:40:26     CPU    %usr   %idle\n\n" + "Linux 6.1.0 (n) \t11/30/2026 \t_x86_64_\t(2 CPU)\n23:40:27     all   20.40   79.60\n",
			"line 6: expected a CPU header"},
		{"day-first date", "Linux 6.1.0 (n) \t30/11/2026 \t_x86_64_\t(2 CPU)\n\n" + h, "line 1: expected a date (MM/DD/YY, MM/DD/YYYY or YYYY-MM-DD"},
		{"another sar report", header + h + "23:40:27    kbmemfree   kbavail kbmemused  %memused kbbuffers  kbcached  kbcommit   %commit  kbactive   kbinact   kbdirty\n",
			`line 4: expected a CPU number or "all" in column CPU, found "kbmemfree" (only the CPU report, sar -u, is imported)`},
		{"cgroups row before header", "2026-12-01T23:40:43,719699627+00:00\ncpuset\t3\t1\t1\n",
			"line 2: expected the /proc/cgroups header (#subsys_name hierarchy num_cgroups enabled) after the timestamp of line 1"},
		{"cgroups missing column", "1796168443\n#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\n",
			"line 3: expected 4 columns as the /proc/cgroups header has, found 3"},
		{"cgroups bad count", "1796168443\n#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\tmany\t1\n",
			`line 3: expected a count in column num_cgroups, found "many"`},
		{"cgroups bad timestamp", "1796168443\n#subsys_name\thierarchy\tnum_cgroups\tenabled\n2026-13-01T23:40:43+00:00\n",
			`line 3: bad timestamp "2026-13-01T23:40:43+00:00"`},
		{"cgroups unknown zone", "Tue Dec  1 23:41:07 XYZ 2026\n", `line 1: bad timestamp "Tue Dec  1 23:41:07 XYZ 2026": zone XYZ`},
		{"cgroups wrong header", "1796168443\n#name\tcount\n", "line 2: expected the /proc/cgroups header"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in), Options{})
		if err == nil || !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v; want an error wrapping ErrInvalid containing %q", tt.name, err, tt.want)
		}
	}
}

func TestMax(t *testing.T) {
	all := parseFile(t, "mpstat.txt", Options{})
	n := 0
	for _, s := range all {
		n += len(s.Points)
	}
	f, _ := os.ReadFile("testdata/mpstat.txt")
	if _, err := Parse(bytes.NewReader(f), Options{Max: n}); err != nil {
		t.Errorf("Parse with Max = its %d points: %v", n, err)
	}
	_, err := Parse(bytes.NewReader(f), Options{Max: n - 1})
	if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "line 26: more than 119 points") {
		t.Errorf("Parse with Max = %d: %v; want ErrTooLarge at line 26", n-1, err)
	}
}

func TestStamps(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	tests := []struct {
		line string
		loc  *time.Location
		want string
	}{
		{"2026-12-01T23:40:43,719699627+00:00", nil, "2026-12-01T23:40:43.719699627Z"}, // date -Ins
		{"2026-12-01T23:40:43,719699627+01:00", nil, "2026-12-01T22:40:43.719699627Z"},
		{"2026-12-01T23:40:43+00:00", nil, "2026-12-01T23:40:43Z"}, // date -Is
		{"2026-12-01T23:40:43Z", nil, "2026-12-01T23:40:43Z"},
		{"2026-12-01 23:40:43.5+0100", nil, "2026-12-01T22:40:43.5Z"}, // date --rfc-3339=ns
		{"2026-12-01T23:40:43+04", nil, "2026-12-01T19:40:43Z"},
		{"2026-12-01T23:40:43", berlin, "2026-12-01T22:40:43Z"},
		{"1796168443", nil, "2026-12-01T23:40:43Z"},                     // date +%s
		{"1796168443.719699627", nil, "2026-12-01T23:40:43.719699627Z"}, // date +%s.%N
		{"Tue Dec  1 23:41:07 UTC 2026", berlin, "2026-12-01T23:41:07Z"},
		{"Tue Dec  1 23:41:07 CET 2026", berlin, "2026-12-01T22:41:07Z"},
		{"Sat Jul 11 23:41:07 CEST 2026", berlin, "2026-07-11T21:41:07Z"},
		{"Tue Dec  1 23:41:07 +04 2026", nil, "2026-12-01T19:41:07Z"},
		{"Tue Dec 15 23:41:07 UTC 2026", nil, "2026-12-15T23:41:07Z"},
	}
	for _, tt := range tests {
		loc := tt.loc
		if loc == nil {
			loc = time.UTC
		}
		got, ok, err := parseStamp(tt.line, loc)
		if !ok || err != nil || !got.Equal(time.Unix(0, at(tt.want))) {
			t.Errorf("parseStamp(%q) = %v, %v, %v; want %s", tt.line, got.UTC(), ok, err, tt.want)
		}
		in := tt.line + "\n#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t4\t62\t1\n"
		series, err := Parse(strings.NewReader(in), Options{Location: tt.loc})
		if err != nil || len(series) != 1 || series[0].Points[0] != (subsecond.Point{Time: at(tt.want), Value: 62}) {
			t.Errorf("Parse(%q) = %+v, %v; want memory 62 at %s", in, series, err, tt.want)
		}
	}
}

// TestClocksGoBack checks that an hour repeated when daylight saving time
// ends is not taken for a new day.
func TestClocksGoBack(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	// On 2026-10-25 Berlin's clocks go from 03:00 CEST back to 02:00 CET.
	in := "Linux 6.1.0 (n) \t2026-10-25 \t_x86_64_\t(2 CPU)\n\n" +
		"02:59:58     CPU    %usr   %idle\n" +
		"02:59:59     all   20.00   80.00\n\n" +
		"02:59:59     CPU    %usr   %idle\n" +
		"02:00:00     all   30.00   70.00\n\n" +
		"02:00:00     CPU    %usr   %idle\n" +
		"02:00:01     all   40.00   60.00\n"
	series, err := Parse(strings.NewReader(in), Options{Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	want := []subsecond.Point{{Time: at("2026-10-25T00:59:59Z"), Value: 20}, {Time: at("2026-10-25T01:00:00Z"), Value: 30}, {Time: at("2026-10-25T01:00:01Z"), Value: 40}}
	s := find(series, "cpu.usr", -1, "")
	if s == nil || len(s.Points) != len(want) {
		t.Fatalf("cpu.usr = %+v; want %v", s, want)
	}
	for i := range want {
		if s.Points[i] != want[i] {
			t.Errorf("point %d = %v; want %v", i, time.Unix(0, s.Points[i].Time).UTC(), time.Unix(0, want[i].Time).UTC())
		}
	}
}

func TestDetectDoesNotConsume(t *testing.T) {
	f, err := os.ReadFile("testdata/sar.txt")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(bytes.NewReader(f))
	if got, err := Detect(br); got != Sar || err != nil {
		t.Fatalf("Detect = %v, %v; want sar", got, err)
	}
	series, err := Parse(br, Options{})
	if err != nil || len(series) != len(sarKinds)*3 {
		t.Errorf("Parse after Detect = %d series, %v; want %d", len(series), err, len(sarKinds)*3)
	}
}

func TestFormatString(t *testing.T) {
	for f, want := range map[Format]string{Mpstat: "mpstat", Sar: "sar", Cgroups: "cgroups", 0: "Format(0)"} {
		if got := f.String(); got != want {
			t.Errorf("Format(%d).String() = %q; want %q", uint8(f), got, want)
		}
	}
}

func TestLongFirstLine(t *testing.T) {
	_, err := Parse(strings.NewReader(strings.Repeat("x", 100<<10)), Options{})
	if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), "line 1: longer than 65536 bytes") {
		t.Errorf("Parse(100 KiB line) = %v; want line 1 too long", err)
	}
}

// BenchmarkParse96CPU parses an hour of mpstat -P ALL 1 on a 96-CPU host
// (about 2.8 million points) in the synthetic file's layout.
func BenchmarkParse96CPU(b *testing.B) {
	var in bytes.Buffer
	in.WriteString("Linux 6.1.0-18-amd64 (big-host) \t11/30/2026 \t_x86_64_\t(96 CPU)\n")
	clock := func(s int) string { return fmt.Sprintf("%02d:%02d:%02d", 10+s/3600, s/60%60, s%60) }
	for s := 0; s < 3600; s++ {
		fmt.Fprintf(&in, "\n%-11s  CPU    %%usr   %%nice    %%sys %%iowait    %%irq   %%soft  %%steal  %%guest  %%gnice   %%idle\n", clock(s))
		for c := -1; c < 96; c++ {
			cpu := "all"
			if c >= 0 {
				cpu = strconv.Itoa(c)
			}
			u := float64((c*7+s*13+700)%6000) / 100
			fmt.Fprintf(&in, "%-11s %4s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", clock(s+1), cpu, u, 0.0, 1.5, 0.25, 0.0, 0.75, 0.0, 0.0, 0.0, 97.5-u)
		}
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(in.Bytes()), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
