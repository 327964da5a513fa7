package web

import "testing"

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
