package subsecond_test

import (
	"testing"

	"github.com/subsecond/subsecond"
)

func TestDefaultEvent(t *testing.T) {
	ev := func(names ...string) []subsecond.EventCount {
		out := make([]subsecond.EventCount, len(names))
		for i, n := range names {
			out[i] = subsecond.EventCount{Name: n, Samples: 1}
		}
		return out
	}
	tests := []struct {
		events []subsecond.EventCount
		want   int
	}{
		{nil, 0},
		{ev("cycles"), 0},
		{ev("instructions", "cycles"), 0},
		{ev("sched:sched_switch", "cpu-clock"), 1},
		{ev("sched:sched_switch", "probe_libc:malloc", "cpu/cycles/", "cpu-clock"), 2},
		{ev("sched:sched_switch", "sched:sched_wakeup"), 0},
		{ev(""), 0}, // perf script -F without the event
	}
	for _, tt := range tests {
		if got := subsecond.DefaultEvent(tt.events); got != tt.want {
			t.Errorf("DefaultEvent(%v) = %d; want %d", tt.events, got, tt.want)
		}
	}
}
