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
