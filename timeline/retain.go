package timeline

import (
	"time"

	"github.com/subsecond/subsecond"
)

// Expired returns the profiles of ps that ended before cutoff: those whose
// last sample was taken before it, by the wall clock (see Anchor), and
// those with no known wall-clock time imported before it.
func Expired(ps []subsecond.Profile, cutoff time.Time) []subsecond.Profile {
	walls := Anchor(ps)
	var out []subsecond.Profile
	for i, p := range ps {
		end := p.Uploaded
		if walls[i].Known() {
			end = time.Unix(0, walls[i].Wall(p.End))
		}
		if end.Before(cutoff) {
			out = append(out, p)
		}
	}
	return out
}
