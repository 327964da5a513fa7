// Command spin burns CPU in two named functions for a given time; it is the
// workload TestPerfReference records with perf.
package main

import (
	"fmt"
	"time"
)

func main() { fmt.Println(spinOuter(400 * time.Millisecond)) }

//go:noinline
func spinOuter(d time.Duration) uint64 {
	var x uint64
	for end := time.Now().Add(d); time.Now().Before(end); {
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
