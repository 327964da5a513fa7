package subsecond

// noTimeText says why a capture without timestamps has no time views and
// how to record one that has.
const noTimeText = "the capture has no timestamps (perf script printed no time field), so it has no heatmap, " +
	"cores map, hot spots or time range; its flame graph holds every sample. To get them, run perf script " +
	"without -F, or with time and cpu in the -F list (-F comm,pid,tid,cpu,time,period,event,ip,sym,dso)"

// ErrNoTime is the error of a view that needs timestamps (a heatmap, the
// cores map, hot spots, a time range) asked of a capture whose samples
// have none. It wraps ErrInvalid; its text, a sentence for the user, tells
// how to record them.
var ErrNoTime error = noTimeError{}

type noTimeError struct{}

func (noTimeError) Error() string { return noTimeText }
func (noTimeError) Unwrap() error { return ErrInvalid }

// UntimedRange is the range of every sample of a capture without
// timestamps: they are all at NoTime.
var UntimedRange = Range{Start: NoTime, End: NoTime + 1}

// Timed reports whether p's samples carry timestamps. perf script prints
// none when its -F list leaves out time; Stats.Fill then sets Start and End
// to 0, which a timed capture reaches only if every sample is at 0 ns.
func (p *Profile) Timed() bool { return p.Start != 0 || p.End != 0 }
