package markers

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

func at(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name, line string
		want       subsecond.Marker
	}{
		// dmesg -T, as this machine printed it.
		{"dmesg -T", "[Mon Nov 30 17:05:59 2026] NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out",
			subsecond.Marker{Time: at("2026-11-30T17:05:59Z"), Text: "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out"}},
		{"dmesg -T, padded day", "[Sun Nov  1 03:00:01 2026] mlx5_core 0000:3b:00.0: reset",
			subsecond.Marker{Time: at("2026-11-01T03:00:01Z"), Text: "mlx5_core 0000:3b:00.0: reset"}},
		{"journalctl -k -o short-iso", "2026-11-30T03:12:05+0100 node-1 kernel: NETDEV WATCHDOG: eth0 timed out",
			subsecond.Marker{Time: at("2026-11-30T02:12:05Z"), Text: "node-1 kernel: NETDEV WATCHDOG: eth0 timed out"}},
		{"journalctl -o short-iso-precise", "2026-11-30T03:12:05.123456+00:00 node-1 kernel: reset",
			subsecond.Marker{Time: at("2026-11-30T03:12:05.123456Z"), Text: "node-1 kernel: reset"}},
		{"ISO with Z", "2026-11-30T03:12:05Z reset", subsecond.Marker{Time: at("2026-11-30T03:12:05Z"), Text: "reset"}},
		{"ISO with a space and a comma", "2026-11-30 03:12:05,250 app: reset", subsecond.Marker{Time: at("2026-11-30T03:12:05.25Z"), Text: "app: reset"}},
		{"syslog", "Nov 30 03:12:05 node-1 kernel: [12345.678] reset", subsecond.Marker{Time: at("2026-11-30T03:12:05Z"), Text: "node-1 kernel: [12345.678] reset"}},
		{"syslog, padded day", "Nov  3 03:12:05 node-1 kernel: reset", subsecond.Marker{Time: at("2026-11-03T03:12:05Z"), Text: "node-1 kernel: reset"}},
	}
	for _, tt := range tests {
		got, err := Parse(strings.NewReader(tt.line+"\n"), Options{Year: 2026})
		if err != nil || len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: Parse(%q) = %+v, %v; want %+v", tt.name, tt.line, got, err, tt.want)
		}
	}
}

func TestParseMatchAndErrors(t *testing.T) {
	log := "[Mon Nov 30 03:00:00 2026] eth0: link up\n" +
		"[Mon Nov 30 03:12:05 2026] NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out\n" +
		"\n" +
		"[Mon Nov 30 03:12:06 2026] mlx5_core 0000:3b:00.0: mlx5e_tx_timeout: reset\n"
	got, err := Parse(strings.NewReader(log), Options{Match: regexp.MustCompile(`NETDEV WATCHDOG|reset`)})
	if err != nil || len(got) != 2 || got[0].Time != at("2026-11-30T03:12:05Z") || got[1].Time != at("2026-11-30T03:12:06Z") {
		t.Errorf("Parse with --match = %+v, %v; want the watchdog and the reset", got, err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if berlin != nil {
		got, err := Parse(strings.NewReader("[Mon Nov 30 04:12:05 2026] reset\n"), Options{Location: berlin})
		if err != nil || got[0].Time != at("2026-11-30T03:12:05Z") {
			t.Errorf("dmesg -T in Berlin time = %+v, %v; want 03:12:05 UTC", got, err)
		}
	}
	_, err = Parse(strings.NewReader(log+"reset without a time\n"), Options{Match: regexp.MustCompile(`reset`)})
	if err == nil || !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), "line 5: expected a timestamp") {
		t.Errorf("a matching line without a time: %v; want an error naming line 5", err)
	}
	_, err = Parse(strings.NewReader(log), Options{Max: 1})
	if err == nil || !strings.Contains(err.Error(), "more than 1 markers") {
		t.Errorf("over Max: %v", err)
	}
}
