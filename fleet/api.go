package fleet

import (
	"regexp"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Options select the hosts and the time of a fleet view. From and To are
// required; zero fields take the defaults.
type Options struct {
	From, To int64 // Unix ns, [From, To)
	// Labels keeps the hosts that carry every one of them.
	Labels []subsecond.Label
	// Group is a label key: rows are grouped by its value (hosts
	// without it in group ""); Groups contrasts its values.
	Group string
	// Kind and Match select names of the index (functions, commands or
	// call edges matching a regular expression). In Map they make the
	// measure the matched samples' share of each bucket's samples; Search
	// needs them.
	Kind  subsecond.NameKind
	Match *regexp.Regexp
	// Buckets is the number of time columns of Map and of Search's
	// sparklines; default DefaultBuckets, at most MaxBuckets.
	Buckets int
	// Permutations (MinPermutations to MaxPermutations, default
	// DefaultPermutations) and Seed drive the contrasts' permutation
	// tests: the same seed gives the same report.
	Permutations int
	Seed         uint64
	// Limit is how many findings a contrast lists; default DefaultLimit.
	Limit int
	// Candidates is how many names a contrast tests at most (default
	// DefaultCandidates, at most MaxCandidates): those with at least
	// MinCandidateSamples samples over the selected hosts together, the
	// most frequent first, a rule blind to the groups and the uptimes. A
	// Kind, or a Kind and a Match, narrow them.
	Candidates int
}

// Defaults and bounds of Options.
const (
	DefaultBuckets      = query.DefaultFleetBuckets // the query table's parameters' bounds
	MaxBuckets          = query.MaxFleetBuckets
	MinPermutations     = query.MinPermutations
	DefaultPermutations = query.DefaultPermutations
	MaxPermutations     = query.MaxPermutations
	DefaultLimit        = 20
	DefaultCandidates   = 100
	MaxCandidates       = 2000
	MinCandidateSamples = 20
)

// Grid is the /fleet page's picture: a row per host, a column per bucket.
type Grid struct {
	From, To, Bucket int64 // Unix ns; Bucket is a column's width
	// Measure names what a cell shows: "peak_core" (the busiest core's
	// system share, subsecond.SlotTotals.PeakCore, highest in the bucket)
	// or, with a Match, the matched samples' share ("function=REGEX").
	Measure string
	Rows    []Row // by group, then host
}

// Row is one host of a Grid.
type Row struct {
	Host   string            `json:"host"`
	Labels []subsecond.Label `json:"labels"`
	Group  string            `json:"group"`
	// Values holds the measure per bucket, NaN where the host has no
	// samples (JSON null).
	Values  []float64 `json:"values"`
	Markers []int64   `json:"markers"` // Unix ns, in [From, To)
	// Samples counts the host's samples in [From, To); Share is the
	// measure over all of them (with a Match, matched/samples; else the
	// mean of the busy share); Peak is the highest bucket value and
	// PeakAt its bucket's start.
	Samples int64   `json:"samples"`
	Share   float64 `json:"share"`
	Peak    float64 `json:"peak"`
	PeakAt  int64   `json:"peak_at_ns"`
}

// Hit is one host of a search.
type Hit struct {
	Host    string            `json:"host"`
	Labels  []subsecond.Label `json:"labels"`
	Samples int64             `json:"samples"` // the host's samples in range
	Matched int64             `json:"matched"` // of them, those the search matched
	Share   float64           `json:"share"`   // Matched / Samples
	Peak    float64           `json:"peak"`    // highest bucket share
	PeakAt  int64             `json:"peak_at_ns"`
	Spark   []float64         `json:"spark"` // share per bucket, NaN without samples
}

// SearchResult ranks hosts by the share of the matched names.
type SearchResult struct {
	From, To, Bucket int64
	Kind             subsecond.NameKind
	Match            string
	Names            []string // the names matched, most samples first (at most subsecond.MaxIndexNames)
	Hosts            []Hit    // by Share, then Peak, descending; hosts without a match left out
	ByPeak           []int    // indexes of Hosts by Peak, descending
}

// Difference is a name whose share differs between one group of a label
// and the other hosts.
type Difference struct {
	Kind       subsecond.NameKind `json:"kind"`
	Name       string             `json:"name"`
	Group      string             `json:"group"`       // the label's value
	GroupShare float64            `json:"group_share"` // mean over the group's hosts of the name's share
	RestShare  float64            `json:"rest_share"`  // the same over the other hosts
	Ratio      float64            `json:"ratio"`       // GroupShare / RestShare (+Inf when RestShare is 0)
	P          float64            `json:"p"`           // permutation p-value over hosts, two-sided
	Q          float64            `json:"q"`           // Benjamini–Hochberg across every tested (name, group)
}

// GroupReport is the group contrast of a label.
type GroupReport struct {
	Key          string
	Groups       []GroupSize
	Tested       int
	Permutations int
	Seed         uint64
	// Unlabelled counts the hosts selected without the label, left out.
	Unlabelled int
	Findings   []Difference // by Q, then effect size
}

// GroupSize is one value of a label and how many hosts carry it.
type GroupSize struct {
	Value string `json:"value"`
	Hosts int    `json:"hosts"`
}

// Rise is a name whose share rises (or falls) with uptime.
type Rise struct {
	Kind subsecond.NameKind `json:"kind"`
	Name string             `json:"name"`
	Rho  float64            `json:"rho"` // Spearman rank correlation of share and uptime over the units
	P    float64            `json:"p"`   // permutation p-value, uptimes shuffled within each host
	Q    float64            `json:"q"`   // Benjamini–Hochberg across the tested names
	// LowShare and HighShare are the name's mean share in the units of
	// the lowest and highest third of uptimes.
	LowShare  float64 `json:"low_share"`
	HighShare float64 `json:"high_share"`
}

// UptimeReport is the uptime contrast.
type UptimeReport struct {
	Units        int // sessions (a host's back-to-back captures of one boot) with a known uptime
	Hosts        int
	NoBoot       int // hosts left out since their boot time is unknown
	Tested       int
	Permutations int
	Seed         uint64
	Findings     []Rise // by Q, then |Rho|
}
