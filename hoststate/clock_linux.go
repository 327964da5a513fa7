package hoststate

import (
	"syscall"
	"time"
	"unsafe"
)

// realtimeOffset returns CLOCK_REALTIME − CLOCK_MONOTONIC in nanoseconds:
// what turns a monotonic time, such as a /dev/kmsg record's, into Unix
// time.
func realtimeOffset() (int64, error) {
	const clockMonotonic = 1
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, e
	}
	return time.Now().UnixNano() - ts.Nano(), nil
}
