package timeline

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/capturefile"
)

// readProfile parses a capture of ../testdata/wallclock into its profile.
func readProfile(t *testing.T, name string) subsecond.Profile {
	t.Helper()
	c, err := capturefile.Read(filepath.Join("..", "testdata", "wallclock", name))
	if err != nil {
		t.Fatal(err)
	}
	return c.Profile
}

// bootOffset is the Unix time of the test machine's boot on perf's clock,
// from the reference time perf printed for the tod capture (see
// ../testdata/wallclock/README.md).
const bootOffset = 1796058675_129022000 - 316_170246221

func TestAnchorSharesBootClock(t *testing.T) {
	a := readProfile(t, "boot-a-2cpu-1s.perf.txt.gz")
	b := readProfile(t, "boot-b-2cpu-1s.perf.txt.gz")
	rt := readProfile(t, "realtime-2cpu-1s.perf.txt.gz")
	tod := readProfile(t, "tod-monotonic-2cpu-1s.perf.txt.gz")
	if !a.Wall.Approximate || !b.Wall.Approximate || a.Wall.Offset == b.Wall.Offset {
		t.Fatalf("own anchors %+v, %+v; want two different estimates from # captured on", a.Wall, b.Wall)
	}

	// Two estimates only: one offset for both, within the half second each
	// allows, still approximate.
	w := Anchor([]subsecond.Profile{a, b, rt})
	if w[0] != w[1] || w[0].Source != subsecond.WallBoot || !w[0].Approximate {
		t.Errorf("boot-a and boot-b anchored %+v, %+v; want one approximate boot offset", w[0], w[1])
	}
	if d := time.Duration(w[0].Offset - bootOffset).Abs(); d > time.Second/2 {
		t.Errorf("shared estimate %v from the boot; want within 0.5 s", d)
	}
	if w[2] != rt.Wall {
		t.Errorf("realtime capture anchored %+v; want its own %+v", w[2], rt.Wall)
	}
	// The spacing of the two captures is now that of their clock, exactly.
	if got, want := w[1].Wall(b.Start)-w[0].Wall(a.Start), b.Start-a.Start; got != want {
		t.Errorf("boot-b starts %d ns after boot-a on the wall clock; want %d, as on their clock", got, want)
	}

	// With the tod capture on the same host, its exact offset anchors both.
	tod.Host = "vm"
	w = Anchor([]subsecond.Profile{a, tod, b})
	if w[1] != tod.Wall || tod.Wall.Source != subsecond.WallTOD {
		t.Errorf("tod capture anchored %+v; want its own %+v", w[1], tod.Wall)
	}
	if d := time.Duration(tod.Wall.Offset - bootOffset).Abs(); d > time.Millisecond {
		t.Errorf("tod offset %v from the reference time; want within 1 ms", d)
	}
	for _, i := range []int{0, 2} {
		if w[i] != (subsecond.WallClock{Offset: tod.Wall.Offset, Source: subsecond.WallBoot}) {
			t.Errorf("capture %d anchored %+v; want the tod capture's exact offset", i, w[i])
		}
	}

	// Another host, or another boot of the same host, keeps its own estimate.
	other := a
	other.Host = "db-1"
	reboot := b
	reboot.Wall.Offset += int64(3 * time.Hour)
	w = Anchor([]subsecond.Profile{a, other, reboot})
	if w[0] != a.Wall || w[1] != a.Wall || w[2] != reboot.Wall {
		t.Errorf("anchors %+v; want each capture's own", w)
	}
}
