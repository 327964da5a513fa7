package web

import "time"

// Duration formats d nanoseconds for people, to the millisecond: "2m3.5s",
// "850ms".
func Duration(d int64) string {
	return time.Duration(d).Round(time.Millisecond).String()
}
