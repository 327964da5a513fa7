package web

import (
	"math/big"
	"strconv"
	"time"

	"github.com/subsecond/subsecond/query"
)

// Duration formats d nanoseconds for people, to the millisecond: "2m3.5s",
// "850ms".
func Duration(d int64) string {
	return time.Duration(d).Round(time.Millisecond).String()
}

// Bytes formats a size in bytes for people, in powers of 1000 as disks
// and networks count: "950 B", "3.9 MB", "12 GB".
func Bytes(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 999.5 || u == "TB" {
			if f < 9.95 {
				return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
			}
			return strconv.FormatFloat(f, 'f', 0, 64) + " " + u
		}
	}
	return ""
}

// Percent formats a fraction 0..1 as the page's script does (fmtPct in
// web/src/dom.ts), so that a value reads the same whether the server or the
// script rendered it: "0%", "<0.01%", two decimals below 10%, else one:
// "4.25%", "99.8%", "100.0%".
func Percent(f float64) string {
	p := f * 100
	switch {
	case p == 0:
		return "0%"
	case p < 0.01:
		return "<0.01%"
	case p < 10:
		return toFixed(p, 2) + "%"
	}
	return toFixed(p, 1) + "%"
}

// toFixed formats x ≥ 0 with d decimals as JavaScript's Number.toFixed does:
// from x's exact binary value, a tie rounds up (strconv rounds it to even).
func toFixed(x float64, d int) string {
	r := new(big.Rat).SetFloat64(x)
	r.Add(r, big.NewRat(5, pow10(d+1)))
	scale := big.NewInt(pow10(d))
	n := new(big.Int).Quo(new(big.Int).Mul(r.Num(), scale), r.Denom())
	return new(big.Rat).SetFrac(n, scale).FloatString(d)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// Filters describes the filters of f that are not at their defaults, for
// headings and titles: "CPU 5", "CPUs 0-3,7", "pid 300", "comm gc",
// "comm ~ web.*", "event cycles", "function mark", "user frames only",
// "idle included". It is empty when every filter is at its default.
func Filters(f query.Filter) []string { return f.Describe() }

// HotspotsWhat describes the episodes hot spots look for: "≥ 70% busy for
// 1 s or more", "≥ 70% in the kernel (system time) for 1 s or more", for
// measure ("busy" or "system"), threshold and min (ns).
func HotspotsWhat(measure string, threshold float64, min int64) string {
	what := "busy"
	if measure == "system" {
		what = "in the kernel (system time)"
	}
	return "≥ " + strconv.FormatFloat(100*threshold, 'f', -1, 64) + "% " + what + " for " + query.DisplaySeconds(min) + " s or more"
}

// HotspotsWhere describes the range a hot-spot search covered, start and
// end in ns with origin t0: " in [5, 10) s", or "" for the whole capture
// (start and end 0, as HotspotReport gives it).
func HotspotsWhere(t0, start, end int64) string {
	if start == 0 && end == 0 {
		return ""
	}
	return " in " + query.DisplayRange(start-t0, end-t0)
}
