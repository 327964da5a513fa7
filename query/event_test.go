package query_test

import (
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// TestDefaultEventFilter checks that a capture whose first sample is a
// tracepoint is shown, by default, by its sampling event, and that the
// sampling rate and CPUs come from that event.
func TestDefaultEventFilter(t *testing.T) {
	b := subsecond.NewBuilder()
	b.Add(&subsecond.Sample{Comm: "a", PID: 5, TID: 5, CPU: 3, Time: 1e9, Event: "sched:sched_switch"})
	for i := range 100 {
		b.Add(&subsecond.Sample{Comm: "a", PID: 5, TID: 5, CPU: int32(i % 2), Time: 1e9 + int64(i/2)*10e6, Event: "cpu-clock"})
	}
	b.Add(&subsecond.Sample{Comm: "a", PID: 5, TID: 5, CPU: 3, Time: 1e9 + 5e6, Event: "sched:sched_switch"})
	c := b.Capture(subsecond.Profile{})
	p := &c.Profile
	if p.DefaultEvent() != 1 || p.Events[1].Name != "cpu-clock" {
		t.Fatalf("events %+v, default %d; want cpu-clock, index 1", p.Events, p.DefaultEvent())
	}
	if p.FrequencyHz != 100 || p.CPUs != 3 {
		t.Errorf("FrequencyHz %v, CPUs %d; want 100 Hz (cpu-clock every 10 ms per CPU) and 3 CPUs", p.FrequencyHz, p.CPUs)
	}
	m, err := query.Filter{}.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]int{}
	for i := range c.Samples.Len() {
		if m.Keep(i) {
			kept[p.Events[c.Samples.Event[i]].Name]++
		}
	}
	if kept["cpu-clock"] != 100 || len(kept) != 1 {
		t.Errorf("the default filter keeps %v; want the 100 cpu-clock samples", kept)
	}
	m, err = query.Filter{Event: "sched:sched_switch"}.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range c.Samples.Len() {
		if m.Keep(i) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("event=sched:sched_switch keeps %d samples; want 2", n)
	}
}
