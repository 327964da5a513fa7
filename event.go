package subsecond

import "strings"

// IsTracepoint reports whether event names a tracepoint or probe, such as
// "sched:sched_switch" or "probe_libc:malloc": a subsystem and an event
// joined by a colon. Such events fire on what the code does, not at a
// sampling rate, so their samples do not measure where time goes. Sampling
// events (cycles, cpu-clock, cpu/cycles/) have no colon once their
// modifiers are stripped, as Sample.Event is.
func IsTracepoint(event string) bool { return strings.Contains(event, ":") }

// DefaultEvent returns the index in events of the event the views show when
// none is chosen: the first sampling event (see IsTracepoint), such as
// cpu-clock or cycles, else the first event. It returns 0 for no events.
func DefaultEvent(events []EventCount) int {
	for i, e := range events {
		if !IsTracepoint(e.Name) {
			return i
		}
	}
	return 0
}

// DefaultEvent returns the index in p.Events of the event the views show
// when none is chosen (see DefaultEvent).
func (p *Profile) DefaultEvent() int { return DefaultEvent(p.Events) }

// TopEvent returns the event of events with most samples, the first of
// them on a tie: the one a list of profiles names. It returns the zero
// EventCount for no events.
func TopEvent(events []EventCount) EventCount {
	var top EventCount
	for i, e := range events {
		if i == 0 || e.Samples > top.Samples {
			top = e
		}
	}
	return top
}
