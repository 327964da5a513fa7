package parser

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// scanFile scans a capture in ../testdata/wallclock to the end.
func scanFile(t *testing.T, name string) (*Scanner, []subsecond.Sample) {
	t.Helper()
	sc := strictScanner(t, filepath.Join("..", "testdata", "wallclock", name))
	var out []subsecond.Sample
	for sc.Scan() {
		out = append(out, *sc.Sample())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sc, out
}

// TestWallClockHeaders reads the clock fields of real captures: perf
// record -k CLOCK_REALTIME, perf's default clock, and perf script -F +tod.
func TestWallClockHeaders(t *testing.T) {
	sc, samples := scanFile(t, "realtime-2cpu-1s.perf.txt.gz")
	m := sc.Metadata()
	if m.Clock != "realtime" || m.Hostname != "vm" || m.CapturedOn != "Mon Nov 30 17:11:06 2026" {
		t.Errorf("clock %q, host %q, captured on %q; want realtime, vm, Mon Nov 30 17:11:06 2026", m.Clock, m.Hostname, m.CapturedOn)
	}
	// # reference time: 2026-11-30 17:11:04.974377 = 1796058664.974377 (TOD) = 1796058664.974380046 (realtime)
	if m.RefTODNS != 1796058664974377000 || m.RefClockNS != 1796058664974380046 {
		t.Errorf("reference time %d = %d; want 1796058664974377000 = 1796058664974380046", m.RefTODNS, m.RefClockNS)
	}
	if s := samples[0]; s.Time < 1796058664e9 || s.Time > 1796058667e9 {
		t.Errorf("first sample at %d; want Unix nanoseconds of 2026-11-30 17:11:05", s.Time)
	}

	sc, _ = scanFile(t, "boot-a-2cpu-1s.perf.txt.gz")
	if m := sc.Metadata(); m.Clock != "" || m.RefTODNS != 0 || m.TODOffsetNS != 0 || m.CapturedOn != "Mon Nov 30 17:11:08 2026" {
		t.Errorf("default clock capture: clock %q, reference %d, tod %d, captured on %q; want none but captured on Mon Nov 30 17:11:08 2026",
			m.Clock, m.RefTODNS, m.TODOffsetNS, m.CapturedOn)
	}

	sc, samples = scanFile(t, "tod-monotonic-2cpu-1s.perf.txt.gz")
	// swapper     0 [000] 2026-11-30 17:11:15.184852   316.226076:   20408163 cpu-clock:pppH:
	first := samples[0]
	if first.Comm != "swapper" || first.TID != 0 || first.CPU != 0 || first.Time != 316226076000 || first.Event != "cpu-clock" {
		t.Errorf("first tod sample = %+v; want swapper, tid 0, CPU 0, 316.226076, cpu-clock", first)
	}
	if got, want := sc.Metadata().TODOffsetNS, int64(1796058675184852000-316226076000); got != want {
		t.Errorf("tod offset %d; want %d", got, want)
	}
	for _, s := range samples {
		if strings.Contains(s.Comm, "2026") {
			t.Fatalf("line %d: comm %q holds the date", s.Line, s.Comm)
		}
	}
}

func TestParseTOD(t *testing.T) {
	tests := []struct {
		date, clock string
		want        int64
		ok          bool
	}{
		{"2026-11-30", "17:11:15.184852", 1796058675184852000, true},
		{"1970-01-01", "00:00:01", 1e9, true},
		{"2026-11-30", "17:11:15.123456789", 1796058675123456789, true},
		{"2026-13-30", "17:11:15.1", 0, false},
		{"2026-11-30", "25:11:15.1", 0, false},
		{"2026/11/30", "17:11:15.1", 0, false},
		{"2026-11-30", "17:11", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseTOD([]byte(tt.date), []byte(tt.clock))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseTOD(%q, %q) = %d, %v; want %d, %v", tt.date, tt.clock, got, ok, tt.want, tt.ok)
		}
	}
}

// TestConcatenated refuses captures concatenated into one input when they
// come from different hosts or sample at different rates, and reads on
// when they match.
func TestConcatenated(t *testing.T) {
	capture := func(host string, freq int) string {
		return "# ========\n# captured on    : Mon Nov 30 17:11:08 2026\n# hostname : " + host + "\n" +
			"# event : name = cpu-clock:pppH, , id = { 1 }, type = 1, size = 128, { sample_period, sample_freq } = " +
			strings.Repeat("9", freq) + ", sample_type = IP|TID|TIME|CPU|PERIOD, freq = 1, precise_ip = 3\n# ========\n#\n" +
			"cc1 11361 [000]   464.971906:    2004008 cpu-clock:ppp: \n\tffffffff8110 do_idle ([kernel.kallsyms])\n\n"
	}
	tests := []struct {
		name, text string
		wantErr    string
	}{
		{"same host and rate", capture("a", 2) + capture("a", 2), ""},
		{"hosts differ", capture("a", 2) + capture("b", 2), `line 12: a second capture starts here, from host "b" after one from host "a"`},
		{"rates differ", capture("a", 2) + capture("a", 3), "line 13: a second capture starts here, sampling at 999 Hz after one sampling at 99 Hz"},
	}
	for _, tt := range tests {
		for _, strict := range []bool{false, true} {
			samples, sc := scanAll(t, tt.text, Options{Strict: strict})
			err := sc.Err()
			if tt.wantErr == "" {
				if err != nil || len(samples) != 2 {
					t.Errorf("%s: %d samples, error %v; want 2 and none", tt.name, len(samples), err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, subsecond.ErrInvalid) {
				t.Errorf("%s (strict %v): error %v; want one wrapping ErrInvalid saying %q", tt.name, strict, err, tt.wantErr)
			}
		}
	}
}

// TestConcatenatedInPieces scans concatenated captures in two pieces, cut
// at the record boundary between them, the second Scanner continuing the
// first's State: a second capture's header is checked as one Scanner
// reading all of it would check it.
func TestConcatenatedInPieces(t *testing.T) {
	capture := func(host string) string {
		return "# ========\n# captured on    : Mon Nov 30 17:11:08 2026\n# hostname : " + host + "\n# ========\n#\n" +
			"cc1 11361 [000]   464.971906:    2004008 cpu-clock:ppp: \n\tffffffff8110 do_idle ([kernel.kallsyms])\n\n"
	}
	first := capture("a")
	sc := NewScanner(strings.NewReader(first), Options{})
	for sc.Scan() {
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	st := sc.State()
	for _, tt := range []struct {
		host  string
		after *State
		want  string
	}{
		{"a", &st, ""},
		{"b", &st, `a second capture starts here, from host "b" after one from host "a"`},
		{"b", nil, ""}, // alone, the piece is a capture of its own
	} {
		_, sc := scanAll(t, capture(tt.host), Options{After: tt.after})
		err := sc.Err()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("second piece from host %s (after: %v): error %v; want %q", tt.host, tt.after != nil, err, tt.want)
		}
		if tt.after != nil && sc.Metadata().Hostname != "a" {
			t.Errorf("second piece's hostname = %q; want the first capture's, a", sc.Metadata().Hostname)
		}
	}
}
