package web

import (
	"math"
	"testing"

	"github.com/subsecond/subsecond/flame"
)

// zScript reads the table of cases on standard input and writes what
// web/src/flame.ts's zScore and diffIntensity give for them.
const zScript = `import { readFileSync } from "node:fs";
import { diffIntensity, zScore } from %q;
const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify({
  z: cases.z.map((c) => zScore(c[0], c[1], c[2], c[3])),
  intensity: cases.intensity.map((z) => diffIntensity(z)),
}));
`

// TestZScoreScript checks that the differential graph's z-score and colour
// intensity in the script (web/src/flame.ts's zScore and diffIntensity) are
// flame.Z's and flame.Intensity's for a table of inputs: it bundles a small
// entry with esbuild and runs it with node, which the front end's build
// installs.
func TestZScoreScript(t *testing.T) {
	// Counts as x1 of n1 (target), x2 of n2 (base): empty sides, equal
	// shares, a frame on every sample, either side alone, changes on both
	// sides of SignificantZ and FullZ, and a whole night's counts.
	zCases := [][4]int64{
		{0, 0, 0, 0}, {5, 10, 0, 0}, {0, 0, 5, 10}, {0, 100, 0, 100},
		{10, 100, 10, 100}, {20, 200, 10, 100}, {100, 100, 50, 50},
		{1, 100, 0, 100}, {0, 100, 1, 100}, {30, 1000, 10, 1000},
		{31, 1000, 10, 1000}, {32, 1000, 10, 1000}, {10, 1000, 30, 1000},
		{500, 1000, 100, 1000}, {100, 1000, 500, 1000}, {280, 280, 0, 6000},
		{0, 280, 6000, 6000}, {123457, 166665, 98765, 166665},
		{3, 564480, 90000, 564480}, {1, 1, 0, 1},
	}
	iCases := []float64{0, 1, -1, 3.28, 3.29, -3.29, 3.3, 5, -5, 11.645, 19.99, 20, -20, 20.01, 40, -1e6}
	var got struct {
		Z         []float64
		Intensity []float64
	}
	runScript(t, zScript, []string{"flame.ts"}, map[string]any{"z": zCases, "intensity": iCases}, &got)
	if len(got.Z) != len(zCases) || len(got.Intensity) != len(iCases) {
		t.Fatalf("node answered %d z-scores and %d intensities; want %d and %d", len(got.Z), len(got.Intensity), len(zCases), len(iCases))
	}
	for i, c := range zCases {
		if want := flame.Z(c[0], c[1], c[2], c[3]); !nearlyEqual(got.Z[i], want) {
			t.Errorf("zScore(%d, %d, %d, %d) = %v; want %v (flame.Z)", c[0], c[1], c[2], c[3], got.Z[i], want)
		}
	}
	for i, z := range iCases {
		if want := flame.Intensity(z); !nearlyEqual(got.Intensity[i], want) {
			t.Errorf("diffIntensity(%v) = %v; want %v (flame.Intensity)", z, got.Intensity[i], want)
		}
	}
}

// nearlyEqual says whether a and b agree to a few units in the last place: Go
// may fuse a multiply and an add where JavaScript rounds twice.
func nearlyEqual(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}
