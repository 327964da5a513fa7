package main

import (
	"strings"
	"testing"
)

// TestErrorsReadAsSentences runs the binary with bad flags and checks that
// each error is one line naming the flag as a flag (--event, where the API
// says event), without a trailing sentinel word such as ": invalid".
func TestErrorsReadAsSentences(t *testing.T) {
	const file = "../../sample-data/real-mixed-2cpu-5s.perf.txt.gz"
	for _, tc := range []struct {
		args string
		want string
	}{
		{"heatmap --rows 0 " + file, "subsecond: heatmap: --rows: 0 is outside 1 to 1000\n"},
		{"hotspots --min soon " + file, `subsecond: hotspots: --min: "soon" is not a duration such as 2, 2s or 1500ms` + "\n"},
		{"cpus " + file + " --bucket 0", "subsecond: cpus: --bucket: 0 s is outside 0.001 s to 86400 s\n"},
		{"flamegraph --format nope " + file, `subsecond: flamegraph: --format: "nope" is not one of `},
		{"flamegraph --start 4 --end 3 " + file, "subsecond: flamegraph: --end: the range [4, 3) s is empty; end must be after start\n"},
		{"flamegraph --start 100 " + file, "subsecond: flamegraph: --start: 100 s is past the end of the capture"},
		{"flamegraph --from 2030-01-01T00:00:00Z " + file, "subsecond: flamegraph: --from: 2030-01-01T00:00:00Z is after the capture, which ran from ≈2026-11-29T08:33:43.485987Z to ≈2026-11-29T08:33:48.5Z\n"},
		{"heatmap --event nope " + file, `subsecond: heatmap: --event: the capture has no event "nope" (it has cpu-clock)` + "\n"},
		{"timeline --host a/b", `subsecond: timeline: --host: "a/b" holds a space, a control character or '/'` + "\n"},
		{"import --host a/b " + file, `subsecond: import: --host: "a/b" holds a space, a control character or '/'` + "\n"},
		{"markers list --host a/b", `subsecond: markers: --host: "a/b" holds a space, a control character or '/'` + "\n"},
		{"cpus --cpu 96 " + file, "subsecond: cpus: --cpu: the capture has no CPU 96; its CPUs are 0-1\n"},
		{"list --format xml", `subsecond: list: --format: "xml" is not one of text, json` + "\n"},
		{"info --format xml ID", `subsecond: info: --format: "xml" is not one of text, json` + "\n"},
		{"hosts --format xml", `subsecond: hosts: --format: "xml" is not one of text, json` + "\n"},
	} {
		_, stderr, code := runMain(t, strings.Fields(tc.args)...)
		if code == 0 || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, ": invalid") {
			t.Errorf("subsecond %s: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
