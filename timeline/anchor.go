// Package timeline puts a host's captures on one wall-clock timeline: it
// anchors captures that share a boot clock together, and (with the store's
// per-chunk summaries) answers the host views: the cores × time map over the
// night, comm shares and hot spots across captures.
//
// A host's captures fall into recording sessions: a capture that starts
// more than SessionGap (30 minutes) after the host's earlier captures have
// all ended opens a new one. The recorder rotates captures back to back and
// comes back within minutes of a restart, so a longer pause is another
// recording (another night, or a sample imported months before), and the
// host views cover one session, the latest, unless given a range or a
// session: a map over both would give each a few columns of hours.
//
//	walls := timeline.Anchor(profiles) // one WallClock per profile
//	start := walls[i].Wall(profiles[i].Start)
//
// Times are integer Unix nanoseconds; ranges are half-open [start, end).
package timeline

import (
	"cmp"
	"slices"
	"time"

	"github.com/subsecond/subsecond"
)

// sameBoot is how far apart two captures' own wall-clock estimates may lie
// and still be taken for one boot of their host. An estimate from "# captured
// on" is good to about a second; two boots of one host are at least as far
// apart as the first one's uptime.
const sameBoot = 2 * time.Minute

// Anchor returns the wall-clock anchor of each profile, in the order given.
// A profile's own anchor (subsecond.Profile.Wall) is kept unless it is
// approximate. Captures of one host on one clock whose own anchors put
// them in the same boot share one offset, so they are ordered and spaced
// exactly by their common clock: the exact offset of an anchored capture
// among them (source subsecond.WallBoot), or else the estimate that agrees
// with every capture's "# captured on" (still approximate).
func Anchor(ps []subsecond.Profile) []subsecond.WallClock {
	out := make([]subsecond.WallClock, len(ps))
	type key struct{ host, clock string }
	groups := map[key][]int{}
	for i, p := range ps {
		out[i] = p.Wall
		if p.Wall.Known() && p.Wall.Source != subsecond.WallRealtime {
			k := key{p.Host, p.Meta.Clock}
			groups[k] = append(groups[k], i)
		}
	}
	for _, idx := range groups {
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ps[a].Wall.Offset, ps[b].Wall.Offset) })
		for len(idx) > 0 {
			n := 1
			for n < len(idx) && ps[idx[n]].Wall.Offset-ps[idx[n-1]].Wall.Offset <= int64(sameBoot) {
				n++
			}
			shareBoot(ps, idx[:n], out)
			idx = idx[n:]
		}
	}
	return out
}

// shareBoot gives the captures idx, of one boot, one offset.
func shareBoot(ps []subsecond.Profile, idx []int, out []subsecond.WallClock) {
	var exact []int64
	lo, hi := int64(-1<<63), int64(1<<63-1)
	var approx []int64
	for _, i := range idx {
		w := ps[i].Wall
		if !w.Approximate {
			exact = append(exact, w.Offset)
			continue
		}
		// Anchor puts the end of the capture in the middle of the second
		// "# captured on" names: the true offset is within half a second
		// below and (as perf writes the file after the last sample) a little
		// more than half a second above.
		lo, hi = max(lo, w.Offset-int64(time.Second)/2), min(hi, w.Offset+int64(time.Second)/2)
		approx = append(approx, w.Offset)
	}
	var shared subsecond.WallClock
	switch {
	case len(approx) == 0:
		return
	case len(exact) > 0:
		slices.Sort(exact)
		shared = subsecond.WallClock{Offset: exact[len(exact)/2], Source: subsecond.WallBoot}
	case len(approx) == 1:
		return
	case lo <= hi:
		shared = subsecond.WallClock{Offset: lo + (hi-lo)/2, Source: subsecond.WallBoot, Approximate: true}
	default:
		slices.Sort(approx)
		shared = subsecond.WallClock{Offset: approx[len(approx)/2], Source: subsecond.WallBoot, Approximate: true}
	}
	for _, i := range idx {
		if ps[i].Wall.Approximate {
			out[i] = shared
		}
	}
}
