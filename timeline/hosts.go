package timeline

import (
	"context"
	"math"

	"github.com/subsecond/subsecond"
)

// HostSource is what the host list reads: a page of hosts' totals, which
// the store computes over its profiles' rows, and the profiles of one
// host, for a host whose captures' places depend on each other.
type HostSource interface {
	// HostTotals returns the totals of at most limit hosts whose names
	// follow after in byte order (from the first when ""), by name.
	HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error)
	// HostProfiles returns host's profiles, in any order.
	HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error)
}

// AllHosts returns every host as Hosts lists them, from src's totals (see
// HostPage): what the fleet views read to default their range.
func AllHosts(ctx context.Context, src HostSource) ([]Host, error) {
	hosts, _, err := HostPage(ctx, src, math.MaxInt32, "")
	return hosts, err
}

// HostPage returns a page of the hosts as Hosts lists them: at most limit
// hosts (at least one) whose names follow after in byte order (from the
// first when ""), and the name of the page's last host when more follow
// it, else "". A host's totals come from src's HostTotals; only a host
// with a capture whose wall clock is an estimate has its profiles read,
// since Anchor may move that capture by what the host's other captures
// say (and so move the host's span, or make it exact).
func HostPage(ctx context.Context, src HostSource, limit int, after string) (hosts []Host, next string, err error) {
	limit = max(limit, 1)
	ts, err := src.HostTotals(ctx, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	if len(ts) > limit {
		ts = ts[:limit]
		next = ts[limit-1].Host
	}
	hosts = make([]Host, 0, len(ts))
	for _, t := range ts {
		if t.Approximate == 0 {
			hosts = append(hosts, hostOf(t))
			continue
		}
		ps, err := src.HostProfiles(ctx, t.Host)
		if err != nil {
			return nil, "", err
		}
		hs := Hosts(ps)
		if len(hs) != 1 {
			// Deleted since its totals were read: list what they say.
			hosts = append(hosts, hostOf(t))
			continue
		}
		hosts = append(hosts, hs[0])
	}
	return hosts, next, nil
}

// hostOf is the Host of totals t of a host none of whose captures has an
// approximate wall clock: Anchor keeps every exact anchor, so the span
// is that of the exactly anchored captures.
func hostOf(t subsecond.HostTotals) Host {
	h := Host{Host: t.Host, Captures: t.Captures, Samples: t.Samples, Unanchored: t.Unanchored}
	if t.Exact > 0 {
		h.Start, h.End = t.Start, max(t.End, 0) // as Hosts' End, which starts at 0
	}
	return h
}

// HostNames returns the names of hs, in order.
func HostNames(hs []Host) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Host
	}
	return out
}
