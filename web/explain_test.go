package web

import (
	"math"
	"testing"
)

func TestFormatQAndRatio(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want string
	}{{0.0001, "< 0.001"}, {0.001, "0.001"}, {0.0123, "0.012"}, {0.5, "0.5"}, {1, "1"}, {math.NaN(), "–"}} {
		if got := FormatQ(c.q); got != c.want {
			t.Errorf("FormatQ(%v) = %q; want %q", c.q, got, c.want)
		}
	}
	for _, c := range []struct {
		r    float64
		want string
	}{{8.125, "8.1×"}, {12.4, "12×"}, {100, "> 100×"}, {math.Inf(1), "> 100×"}, {0, "–"}, {0.5, "0.5×"}} {
		if got := FormatRatio(c.r); got != c.want {
			t.Errorf("FormatRatio(%v) = %q; want %q", c.r, got, c.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{0.065, "share", "6.50%"}, {97.54, "%", "97.5%"}, {1204, "/s", "1204/s"}, {2.25, "/s", "2.2/s"}, {512 << 20, "bytes", "512 MiB"}, {68680, "count", "68680"}, {0.5, "count", "0.5"}, {64911.789, "count", "64911.8"}} {
		if got := FormatValue(c.v, c.unit); got != c.want {
			t.Errorf("FormatValue(%v, %q) = %q; want %q", c.v, c.unit, got, c.want)
		}
	}
}
