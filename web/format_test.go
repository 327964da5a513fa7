package web

import (
	"strings"
	"testing"

	"github.com/subsecond/subsecond/query"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0%"},
		{0.00005, "<0.01%"},
		{0.0425, "4.25%"},
		{0.09999, "10.00%"},
		{0.1, "10.0%"},
		{0.998, "99.8%"},
		{0.99999, "100.0%"},
		{1, "100.0%"},
		{0.01125, "1.13%"}, // 1.125 exactly: a tie rounds up, as toFixed does
		{0.5, "50.0%"},
	} {
		if got := Percent(tc.f); got != tc.want {
			t.Errorf("Percent(%v) = %q; want %q", tc.f, got, tc.want)
		}
	}
}

func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		f    query.Filter
		want string
	}{
		{query.Filter{}, ""},
		{query.Filter{CPUs: []int32{57}}, "CPU 57"},
		{query.Filter{CPUs: []int32{0, 1, 2, 7}, PIDs: []int32{300}, TIDs: []int32{301, 302}}, "CPUs 0-2,7 · pid 300 · tid 301-302"},
		{query.Filter{Comm: "gc", CommRegex: "^kube", Event: "cycles", Function: "mark", Only: "kernel", Idle: true},
			"comm gc · comm ~ ^kube · event cycles · function mark · kernel frames only · idle included"},
	} {
		if got := strings.Join(Filters(tc.f), " · "); got != tc.want {
			t.Errorf("Filters(%+v) = %q; want %q", tc.f, got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {3996866, "4.0 MB"}, {10_900_000, "11 MB"},
		{999_400_000, "999 MB"}, {999_600_000, "1.0 GB"}, {12_000_000_000_000_000, "12000 TB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q; want %q", tc.n, got, tc.want)
		}
	}
}
