package web

import (
	"testing"

	"github.com/subsecond/subsecond/query"
)

// displayScript reads the table of cases on standard input and writes what
// web/src/format.ts and web/src/wallclock.ts give for them.
const displayScript = `import { readFileSync } from "node:fs";
import { displayDuration, displayRange, displaySeconds } from %q;
import { fmtClock } from %q;
const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify({
  seconds: cases.seconds.map((ns) => displaySeconds(ns)),
  durations: cases.durations.map((ns) => displayDuration(ns)),
  ranges: cases.ranges.map((r) => displayRange(r[0], r[1])),
  clocks: cases.clocks.map((ns) => [fmtClock(ns, false, "utc"), fmtClock(ns, true, "utc")]),
}));
`

// displayCases are offsets and durations in nanoseconds on both sides of
// every rounding and unit edge: zero, below and at half a millisecond,
// 59.9995 s (a minute once rounded), hours, negative offsets. They stay
// below 2^53, which a JavaScript number holds exactly.
var displayCases = []int64{
	0, 1, 400, 499_999, 500_000, 500_001, 999_999, 1_000_000, 1_499_999, 1_500_000,
	-1, -400, -499_999, -500_000, -1_500_000, -5_000_000_000, -119_998_950_001,
	850_000_000, 999_999_999, 1_000_000_000, 1_000_499_999, 1_000_500_000,
	2_750_000_000, 12_000_500_000, 19_989_969_001, 19_998_000_000, 20_249_000_000,
	30_250_000_001, 59_999_000_000, 59_999_499_999, 59_999_500_000, 60_000_000_000,
	60_000_500_000, 61_250_000_000, 119_998_950_001, 120_000_000_000, 599_999_999_999,
	3_599_999_499_999, 3_599_999_500_000, 3_600_000_000_000, 3_723_500_000_000,
	86_399_999_000_000, 90_000_000_000_000, 1 << 52, 1<<53 - 1,
}

// TestDisplayScript checks that the pages' script writes offsets,
// durations and ranges as query.DisplaySeconds, DisplayDuration and
// DisplayRange do, and times of day as Clock does, for a table of cases:
// it bundles a small entry with esbuild and runs it with node, as
// TestZScoreScript does.
func TestDisplayScript(t *testing.T) {
	var ranges [][2]int64
	for i, a := range displayCases {
		b := displayCases[(i*7+3)%len(displayCases)]
		ranges = append(ranges, [2]int64{min(a, b), max(a, b)})
	}
	ranges = append(ranges, [2]int64{-5_000_000_000, 250_000_000}, [2]int64{400_000, 1_600_000}, [2]int64{0, 119_998_950_001})
	// Times of day: Unix nanoseconds of whole milliseconds and halves
	// between them, which a number holds to within 256 ns, far from
	// a half millisecond's edge; a new day, a new year.
	clocks := []int64{
		1_796_004_019_000_000_000, 1_796_004_019_500_000_000, 1_796_004_019_501_000_000,
		1_796_004_019_999_000_000, 1_796_004_019_999_600_000, 1_796_004_019_250_400_000,
		1_796_083_199_999_700_000, 1_798_761_599_999_800_000, 1_798_761_600_000_000_000,
	}
	var got struct {
		Seconds, Durations, Ranges []string
		Clocks                     [][2]string
	}
	runScript(t, displayScript, []string{"format.ts", "wallclock.ts"},
		map[string]any{"seconds": displayCases, "durations": displayCases, "ranges": ranges, "clocks": clocks}, &got)
	if len(got.Seconds) != len(displayCases) || len(got.Durations) != len(displayCases) || len(got.Ranges) != len(ranges) || len(got.Clocks) != len(clocks) {
		t.Fatalf("node answered %d, %d, %d and %d cases; want %d, %d, %d and %d", len(got.Seconds), len(got.Durations), len(got.Ranges), len(got.Clocks),
			len(displayCases), len(displayCases), len(ranges), len(clocks))
	}
	n := 0
	for i, ns := range displayCases {
		if want := query.DisplaySeconds(ns); got.Seconds[i] != want {
			t.Errorf("displaySeconds(%d) = %q; want %q (query.DisplaySeconds)", ns, got.Seconds[i], want)
		}
		if want := query.DisplayDuration(ns); got.Durations[i] != want {
			t.Errorf("displayDuration(%d) = %q; want %q (query.DisplayDuration)", ns, got.Durations[i], want)
		}
		n += 2
	}
	for i, r := range ranges {
		if want := query.DisplayRange(r[0], r[1]); got.Ranges[i] != want {
			t.Errorf("displayRange(%d, %d) = %q; want %q (query.DisplayRange)", r[0], r[1], got.Ranges[i], want)
		}
		n++
	}
	for i, ns := range clocks {
		if want := Clock(ns, false); got.Clocks[i][0] != want {
			t.Errorf("fmtClock(%d) = %q; want %q (Clock)", ns, got.Clocks[i][0], want)
		}
		if want := Clock(ns, true); got.Clocks[i][1] != want {
			t.Errorf("fmtClock(%d, true) = %q; want %q (Clock)", ns, got.Clocks[i][1], want)
		}
		n += 2
	}
	t.Logf("%d cases agree", n)
}

// TestWallRangeDates checks that a wall-clock range written with dates
// dates its end too when the end falls on another day (the fleet page's
// default day read "2026-11-05 20:50:22–20:50:22 UTC"), and only its start
// within one day.
func TestWallRangeDates(t *testing.T) {
	const script = `import { readFileSync } from "node:fs";
import { fmtWallRange } from %q;
const cases = JSON.parse(readFileSync(0, "utf8"));
globalThis.location = { search: "?tz=utc" }; // the pages' zone parameter
console.log(JSON.stringify(cases.map((r) => fmtWallRange(r[0], r[1], false, true))));
`
	day := int64(86_400e9)
	from := int64(1_793_911_822e9) // 2026-11-05 20:50:22 UTC
	var got []string
	runScript(t, script, []string{"wallclock.ts"}, [][2]int64{{from, from + day}, {from, from + 3_600e9}}, &got)
	want := []string{"2026-11-05 20:50:22–2026-11-06 20:50:22 UTC", "2026-11-05 20:50:22–21:50:22 UTC"}
	if len(got) != len(want) {
		t.Fatalf("got %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fmtWallRange case %d = %q; want %q", i, got[i], want[i])
		}
	}
}
