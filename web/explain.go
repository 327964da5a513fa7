package web

import (
	"math"
	"strconv"
)

// ExplainPage is what precedes a host's markers (package explain): the
// question asked (the form), the windows contrasted, and the findings
// ranked, each a sentence with its numbers and links.
type ExplainPage struct {
	Layout
	Host string
	// Form holds the question as asked: the markers' expression, the
	// window before each in seconds, the control windows and the seed.
	Match, Before, Controls, Seed, Session string
	// Summary says what was contrasted: "9 windows of 10 s before the
	// markers matching NETDEV, against 200 control windows (of 1,432) of
	// the same sessions".
	Summary string
	// Method says how to read the table: the test, the threshold, the
	// smallest p.
	Method string
	// Error is the reason there is no report (no matching marker), said
	// in the page rather than as an error page, so that the form stays.
	Error    string
	Findings []ExplainRow
	Windows  []ExplainWindow
	// DiffHref opens the differential flame graph of the before-windows
	// against the control windows; NightHref the host's night.
	DiffHref, NightHref string
}

// ExplainRow is one finding.
type ExplainRow struct {
	Rank int
	// What reads like "kubelet in mem_cgroup_nr_lru_pages", Kind says
	// what sort of feature it is ("command + function").
	What, Kind string
	// Sentence: "6.5% of the host in the 10 s before 9 of 9 markers,
	// 0.8% elsewhere".
	Sentence           string
	Before, Control    string
	Ratio, StoodOut, Q string
	Significant        bool
	DiffHref           string
	Strip              []StripMark
	Also               []string
}

// StripMark is one before-window in a finding's strip: whether the
// finding stood out in it, and its marker's time and text for its title.
type StripMark struct {
	StoodOut bool
	Title    string
	Href     string
}

// ExplainWindow is one before-window: its range, its markers and the link
// to its flame graph.
type ExplainWindow struct {
	From, To int64
	Markers  []string
	Samples  int64
	Href     string
	// NightHref opens the host's night zoomed to the minute around the
	// window.
	NightHref string
}

// FormatQ writes a q- or p-value for people: "< 0.001" below a
// thousandth, else three significant digits.
func FormatQ(q float64) string {
	switch {
	case math.IsNaN(q):
		return "–"
	case q < 0.001:
		return "< 0.001"
	case q >= 1:
		return "1"
	}
	return strconv.FormatFloat(q, 'g', 2, 64)
}

// FormatRatio writes a ratio of shares: "8.1×", "> 100×", "–" when there
// is none.
func FormatRatio(r float64) string {
	switch {
	case math.IsNaN(r) || r <= 0:
		return "–"
	case math.IsInf(r, 1) || r >= 100:
		return "> 100×"
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 0, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "×"
}

// FormatValue writes a value in its unit for people: a share of the
// host's samples ("share") as a percentage (Percent), a series' value in
// its kind's unit (subsecond.SeriesKinds): "97.5%", "1204/s", "512 MiB",
// "68680".
func FormatValue(v float64, unit string) string {
	switch unit {
	case "share":
		return Percent(v)
	case "%":
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	case "/s":
		if v >= 100 {
			return strconv.FormatFloat(v, 'f', 0, 64) + "/s"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	case "bytes":
		return strconv.FormatFloat(v/(1<<20), 'f', 0, 64) + " MiB"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
