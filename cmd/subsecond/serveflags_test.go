package main

import (
	"flag"
	"io"
	"testing"
)

// TestServeMetricsFlags checks how --metrics and --metrics-token decide
// whether /metrics is served and to whom.
func TestServeMetricsFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		on        bool
		token     string
		wantError bool
	}{
		{nil, false, "", false},
		{[]string{"--metrics", "on"}, true, "", false},
		{[]string{"--metrics", "off"}, false, "", false},
		{[]string{"--metrics-token", "t"}, true, "t", false},
		{[]string{"--metrics", "on", "--metrics-token", "t"}, true, "t", false},
		{[]string{"--metrics", "off", "--metrics-token", "t"}, false, "", false},
		{[]string{"--metrics", "yes"}, false, "", true},
	} {
		t.Setenv("SUBSECOND_METRICS", "")
		t.Setenv("SUBSECOND_METRICS_TOKEN", "")
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var m serveMetrics
		m.flags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		on, token, err := m.config(fs)
		if (err != nil) != tc.wantError || on != tc.on || token != tc.token {
			t.Errorf("config(%q) = %v, %q, %v; want %v, %q, error %v", tc.args, on, token, err, tc.on, tc.token, tc.wantError)
		}
	}
}

// TestBudgetsOf: the caches' budgets follow from the memory limit and
// leave at least half of it to the views and imports at work; before,
// they were fixed (a 512 MiB capture cache, 96 MiB of rollups, 256 MiB
// of host ranges: 864 MiB under a 1,280 MiB limit) and the server's
// resident memory reached 1,326 MiB in bench/soak.
func TestBudgetsOf(t *testing.T) {
	for _, limit := range []int64{defaultMemoryLimit, 512 << 20, 4 << 30, 64 << 30} {
		b := budgetsOf(limit)
		if caches := b.cache + b.answers + b.rollups + b.ranges; caches > limit/2 {
			t.Errorf("budgetsOf(%d): caches %d, more than half the limit", limit, caches)
		}
		if b.cache+256<<20 > limit && limit >= 1<<30 {
			t.Errorf("budgetsOf(%d): cache %d leaves less than 256 MiB under the limit", limit, b.cache)
		}
		if b.imports < 1 || int64(b.imports) > max(1, limit>>30) {
			t.Errorf("budgetsOf(%d): %d imports at once; want 1 to one per GiB", limit, b.imports)
		}
	}
	if b := budgetsOf(defaultMemoryLimit); b.cache != 280<<20 || b.answers != 56<<20 || b.imports != 1 {
		t.Errorf("budgetsOf(default %d) = %+v; want a 280 MiB capture cache, 56 MiB of answers and one import at once", defaultMemoryLimit, b)
	}
	if b := budgetsOf(0); b.cache != 512<<20 {
		t.Errorf("budgetsOf(no limit) = %+v; want the 512 MiB cache of before", b)
	}
}

// TestCheckDebugAddr: the profiler is served on loopback addresses alone.
func TestCheckDebugAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"": true, "127.0.0.1:6060": true, "[::1]:6060": true, "localhost:6060": true,
		":6060": false, "0.0.0.0:6060": false, "192.0.2.1:6060": false, "6060": false, "example.com:6060": false} {
		if err := checkDebugAddr(addr); (err == nil) != ok {
			t.Errorf("checkDebugAddr(%q) = %v; want ok %v", addr, err, ok)
		}
	}
}
