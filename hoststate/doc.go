// Package hoststate samples a Linux host's state beside perf: per-CPU time
// as mpstat shows it, cgroup counts, interrupt and softirq rates, network
// counters, available memory and load, as subsecond.Series points on the
// wall clock perf record -k CLOCK_REALTIME stamps its samples with; and it
// follows the kernel log (/dev/kmsg) for lines worth a subsecond.Marker.
//
//	s, err := hoststate.New(hoststate.Options{Interval: time.Second})
//	if err != nil { … }
//	err = s.Run(ctx, func(series []subsecond.Series) error {
//		return store.Append(series) // copies: series are reused
//	})
//
//	go hoststate.FollowKmsg(ctx, "/dev/kmsg", hoststate.DefaultMarkers(), func(m subsecond.Marker) error {
//		return store.AddMarker(m)
//	})
//
// The parsers (ParseStat, ParseCgroups, ParseCgroupStat, CounterTable for
// /proc/interrupts and /proc/softirqs, ParseMemAvailable, ParseLoadavg,
// ParseCounter, ParseKmsg) are pure functions of a file's bytes; their
// errors name the file and line and wrap subsecond.ErrInvalid.
package hoststate
