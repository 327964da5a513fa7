// Command spin burns CPU in two named functions until it has used a given
// amount of CPU time; it is the workload TestPerfReference records with
// perf. Counting CPU time rather than wall time keeps the number of samples
// steady on a loaded machine.
package main

import (
	"fmt"
	"syscall"
	"time"
)

func main() { fmt.Println(spinOuter(400 * time.Millisecond)) }

//go:noinline
func spinOuter(d time.Duration) uint64 {
	var x uint64
	for cpuTime() < d {
		x += spinInner(x)
	}
	return x
}

//go:noinline
func spinInner(x uint64) uint64 {
	for i := 0; i < 100000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// cpuTime returns the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
