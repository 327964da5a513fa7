package web

import (
	"math"
	"net/url"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/link"
)

// FleetMap is the answer of GET /api/fleet and of `subsecond fleet --json`
// without a search: the hosts × time grid of fleet.Map over wall-clock Unix
// nanoseconds [from_ns, to_ns) in columns of bucket_ns, with the label keys
// the page's group-by picker offers.
type FleetMap struct {
	From    int64      `json:"from_ns"`
	To      int64      `json:"to_ns"`
	Bucket  int64      `json:"bucket_ns"`
	Measure string     `json:"measure"` // "peak_core", or the search ("function=REGEX")
	Group   string     `json:"group"`   // the label key the rows are grouped by; "" for none
	Keys    []string   `json:"keys"`    // the label keys the hosts carry, sorted
	Rows    []FleetRow `json:"rows"`    // by group, then host
}

// FleetRow is one host of a FleetMap.
type FleetRow struct {
	Host   string            `json:"host"`
	Labels []subsecond.Label `json:"labels"`
	Group  string            `json:"group"`
	// Values holds the measure per column, null where the host has no
	// samples.
	Values  []*float64 `json:"values"`
	Markers []int64    `json:"markers"` // Unix ns
	Samples int64      `json:"samples"`
	Share   *float64   `json:"share"` // the measure over the whole range; null without samples
	Peak    *float64   `json:"peak"`  // the highest column's value; null without samples
	PeakAt  int64      `json:"peak_at_ns"`
	Href    string     `json:"href"` // the host's night page over the range
}

// FleetSearch is the answer of GET /api/fleet/search: the hosts ranked by
// the share of the names a search selects (fleet.Search), each with its
// sparkline of bucket_ns columns.
type FleetSearch struct {
	From   int64      `json:"from_ns"`
	To     int64      `json:"to_ns"`
	Bucket int64      `json:"bucket_ns"`
	Kind   string     `json:"kind"`  // function, comm or stack
	Match  string     `json:"match"` // the regular expression searched
	Names  []string   `json:"names"` // the names matched, most samples first
	Hosts  []FleetHit `json:"hosts"` // by share, then peak, descending
	ByPeak []int      `json:"by_peak"`
}

// FleetHit is one host of a FleetSearch.
type FleetHit struct {
	Host    string            `json:"host"`
	Labels  []subsecond.Label `json:"labels"`
	Samples int64             `json:"samples"`
	Matched int64             `json:"matched"`
	Share   *float64          `json:"share"`
	Peak    *float64          `json:"peak"`
	PeakAt  int64             `json:"peak_at_ns"`
	Spark   []*float64        `json:"spark"` // share per column, null without samples
	Href    string            `json:"href"`  // the host's night page around its peak
}

// FleetGroups is the answer of GET /api/fleet/groups: the names whose
// share differs between the groups of a label (fleet.Groups).
type FleetGroups struct {
	Key          string            `json:"key"`
	Groups       []fleet.GroupSize `json:"groups"`
	Tested       int               `json:"tested"`
	Permutations int               `json:"permutations"`
	Seed         uint64            `json:"seed"`
	Unlabelled   int               `json:"unlabelled"` // hosts selected without the label, left out
	Findings     []FleetDifference `json:"findings"`
}

// FleetDifference is one finding of FleetGroups.
type FleetDifference struct {
	Kind       string  `json:"kind"`
	Name       string  `json:"name"`
	Group      string  `json:"group"`
	GroupShare float64 `json:"group_share"`
	RestShare  float64 `json:"rest_share"`
	// Ratio is GroupShare / RestShare, null when RestShare is 0.
	Ratio  *float64 `json:"ratio"`
	P      float64  `json:"p"`
	Q      float64  `json:"q"`
	Search string   `json:"search"` // the fleet page searching for the name
}

// FleetUptime is the answer of GET /api/fleet/uptime: the names whose
// share follows the hosts' uptime (fleet.Uptime).
type FleetUptime struct {
	Units        int         `json:"units"`
	Hosts        int         `json:"hosts"`
	NoBoot       int         `json:"no_boot"`
	Tested       int         `json:"tested"`
	Permutations int         `json:"permutations"`
	Seed         uint64      `json:"seed"`
	Findings     []FleetRise `json:"findings"`
}

// FleetRise is one finding of FleetUptime.
type FleetRise struct {
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Rho       float64 `json:"rho"`
	P         float64 `json:"p"`
	Q         float64 `json:"q"`
	LowShare  float64 `json:"low_share"`
	HighShare float64 `json:"high_share"`
	Search    string  `json:"search"`
}

// number returns x, or nil when it is NaN or infinite (JSON null).
func number(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// numbers returns xs with NaN as nil.
func numbers(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = number(x)
	}
	return out
}

// labelsOrEmpty returns ls, or an empty list for nil.
func labelsOrEmpty(ls []subsecond.Label) []subsecond.Label {
	if ls == nil {
		return []subsecond.Label{}
	}
	return ls
}

// NewFleetMap returns g for the wire, grouped by group, with the label
// keys keys.
func NewFleetMap(g *fleet.Grid, group string, keys []string) FleetMap {
	m := FleetMap{From: g.From, To: g.To, Bucket: g.Bucket, Measure: g.Measure, Group: group, Keys: keys, Rows: []FleetRow{}}
	if m.Keys == nil {
		m.Keys = []string{}
	}
	for _, r := range g.Rows {
		row := FleetRow{Host: r.Host, Labels: labelsOrEmpty(r.Labels), Group: r.Group, Values: numbers(r.Values),
			Markers: r.Markers, Samples: r.Samples, Share: number(r.Share), Peak: number(r.Peak), PeakAt: r.PeakAt,
			Href: link.HostAt(r.Host, g.From, g.To)}
		if row.Markers == nil {
			row.Markers = []int64{}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// NewFleetSearch returns r for the wire.
func NewFleetSearch(r *fleet.SearchResult) FleetSearch {
	out := FleetSearch{From: r.From, To: r.To, Bucket: r.Bucket, Kind: r.Kind.String(), Match: r.Match,
		Names: r.Names, Hosts: []FleetHit{}, ByPeak: r.ByPeak}
	if out.Names == nil {
		out.Names = []string{}
	}
	if out.ByPeak == nil {
		out.ByPeak = []int{}
	}
	for _, h := range r.Hosts {
		out.Hosts = append(out.Hosts, FleetHit{Host: h.Host, Labels: labelsOrEmpty(h.Labels), Samples: h.Samples,
			Matched: h.Matched, Share: number(h.Share), Peak: number(h.Peak), PeakAt: h.PeakAt, Spark: numbers(h.Spark),
			Href: hostAround(h.Host, h.PeakAt, r.Bucket)})
	}
	return out
}

// hostAround returns the host's night page over the column [at, at+width)
// and as long again each side, at least ten minutes.
func hostAround(host string, at, width int64) string {
	pad := max(width, int64(5*60e9))
	return link.HostAt(host, at-pad, at+width+pad)
}

// NewFleetGroups returns r for the wire; v holds the page's labels and
// range, kept in each finding's search link.
func NewFleetGroups(r *fleet.GroupReport, v url.Values) FleetGroups {
	out := FleetGroups{Key: r.Key, Groups: r.Groups, Tested: r.Tested, Permutations: r.Permutations, Seed: r.Seed,
		Unlabelled: r.Unlabelled, Findings: []FleetDifference{}}
	if out.Groups == nil {
		out.Groups = []fleet.GroupSize{}
	}
	for _, d := range r.Findings {
		out.Findings = append(out.Findings, FleetDifference{Kind: d.Kind.String(), Name: d.Name, Group: d.Group,
			GroupShare: d.GroupShare, RestShare: d.RestShare, Ratio: number(d.Ratio), P: d.P, Q: d.Q,
			Search: link.FleetSearch(d.Kind, d.Name, v)})
	}
	return out
}

// NewFleetUptime returns r for the wire, as NewFleetGroups does.
func NewFleetUptime(r *fleet.UptimeReport, v url.Values) FleetUptime {
	out := FleetUptime{Units: r.Units, Hosts: r.Hosts, NoBoot: r.NoBoot, Tested: r.Tested, Permutations: r.Permutations,
		Seed: r.Seed, Findings: []FleetRise{}}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, FleetRise{Kind: f.Kind.String(), Name: f.Name, Rho: f.Rho, P: f.P, Q: f.Q,
			LowShare: f.LowShare, HighShare: f.HighShare, Search: link.FleetSearch(f.Kind, f.Name, v)})
	}
	return out
}

// FleetPage is the /fleet page: the map and panels its script fills from
// the fleet API, with the group-by picker, the label chips and the search
// box filled from the URL.
type FleetPage struct {
	Layout
	Keys   []string    // label keys the hosts carry, for the group-by picker
	Group  string      // the key chosen
	Labels []FleetChip // the label filters, each with the link that drops it
	Kind   string      // the search's parameter: function, comm, comm_regex or stack
	Search string      // its value
	Hosts  int         // hosts with captures
	Clear  string      // the page without its label filters
}

// FleetChip is one label filter of the fleet page.
type FleetChip struct {
	Label  subsecond.Label
	Remove string // the page without it
}

// LabelKeys returns the keys the hosts' labels use, sorted: the group-by
// picker's choices.
func LabelKeys(labels map[string][]subsecond.Label) []string {
	var keys []string
	for _, ls := range labels {
		for _, l := range ls {
			if !slices.Contains(keys, l.Key) {
				keys = append(keys, l.Key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}
