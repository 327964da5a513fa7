package web

import (
	"strconv"
	"time"
)

// Seconds formats t nanoseconds as decimal seconds without rounding:
// 1500000000 → "1.5".
func Seconds(t int64) string {
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(t/int64(time.Second), 10)
	if frac := t % int64(time.Second); frac != 0 {
		f := strconv.FormatInt(frac+int64(time.Second), 10)[1:] // nine digits
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Duration formats d nanoseconds for people: "2m 3.5s", "850ms".
func Duration(d int64) string {
	return time.Duration(d).Round(time.Millisecond).String()
}
