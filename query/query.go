package query

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// Query is one view request: which samples (Filter), which time ranges and
// the shape of each view. The CLI's flags and the URL parameters of the API
// and pages are the same parameters, listed in one table (Params), so a
// query reads the same wherever it is written. The zero Query is not valid;
// Parse fills defaults.
type Query struct {
	Filter Filter

	// Bounds of the flame graph's range and of a differential graph's base
	// range, as given: offsets from the profile's T0. Resolve turns them
	// into Range and Range2.
	Start, End   Bound
	Start2, End2 Bound
	// Base names the profile whose range Start2, End2 a differential graph
	// compares with; "" for the same profile. ResolveBase reads Range2
	// against it.
	Base string
	// From and To give the flame graph's range as wall-clock times instead
	// of Start and End; Resolve converts them with the profile's anchor.
	// From2 and To2 give the base range so instead of Start2 and End2,
	// converted with the base profile's anchor by ResolveBase.
	From, To   WallTime
	From2, To2 WallTime

	Rows int   // rows per heatmap column
	Col  int64 // heatmap column width, ns
	// Bucket is the column width of a cores map or a host's timeline, and
	// the resolution of a capture's hot spots, ns; 0 for the view's
	// default (DefaultBucket for a capture, about 1,000 columns of whole
	// seconds for a host).
	Bucket  int64
	Measure string // what shades a cores-map cell and hot spots measure: "busy" or "system"

	Threshold float64 // hot spots: busy fraction that counts as busy, (0, 1]
	Min       int64   // hot spots: shortest episode, ns
	Limit     int     // hot spots: how many episodes to list, best first; 0 for all
	Cells     int     // hot spots: how many of the hottest heatmap cells to list
	Near      int64   // a host's hot spots: those ending within Near ns before a marker rank first

	// Session is the recording session of a host whose span a host view
	// covers where from or to is not given: its number, 1 for the host's
	// first; 0 for the one holding the bound given, else the latest.
	Session int

	MaxSamples int // stack chart: the most samples its range may hold

	// A host's explanation of its markers (package explain): the markers
	// whose text matches Match ("" for all), the window before each
	// (Before, ns), how many control windows are drawn (Controls; 0 for
	// all) and the seed of the draw and of the permutation test.
	Match    string
	Before   int64
	Controls int
	Seed     int

	// Series names a kind of host series (subsecond.SeriesKinds), for a
	// host's series view; SeriesLabel and SeriesCPU one series of the kind
	// (-1: the host's, or the CPUs' together), for what moves with it.
	// Frame names a function whose samples of Filter.Comm the series are
	// ranked against instead.
	Series      string
	SeriesLabel string
	SeriesCPU   int
	Frame       string

	// The fleet's views (package fleet): the hosts carrying every one of
	// Labels, grouped by the label key Group; Stack selects call edges
	// ("caller;callee") as Filter.Function selects functions and
	// Filter.Comm or Filter.CommRegex commands; Buckets is the number of
	// time columns, Permutations the size of the contrasts' permutation
	// tests (seeded by Seed).
	Labels       []subsecond.Label
	Group        string
	Stack        string
	Buckets      int
	Permutations int

	// PerPage is how many entries a page of the profile or host list
	// holds; Cursor the last entry of the page before (a profile ID, a
	// host name), "" for the first page.
	PerPage int
	Cursor  string

	// Page is view state that only the pages keep in their URL: it
	// changes no data.
	Page Page

	// Range and Range2 are absolute, half-open ranges in nanoseconds, set by
	// Resolve: [T0+Start, T0+End), a missing bound being the profile's
	// first sample or the instant after its last.
	Range, Range2 subsecond.Range
}

// Page is the view state that only the pages keep in their URL (the
// table's GroupPage rows): how a view is drawn, never which data it shows.
// The server validates it like any parameter, so that a link names only
// states a page can show; no computation reads it.
type Page struct {
	Scale  string // the heatmaps' colour scale, "linear" or "log"
	Search string // the flame graph's search
	Zoom   string // the flame graph's zoomed frame
	View   string // "flame" or "icicle"
	Shape  string // a differential graph drawn with the "target" or the "base" widths
	Lanes  string // the stack chart's lanes, "cpu" or "thread"
	TZ     string // times of day in "utc" or the browser's zone, "local"; or "offset", seconds from a capture's start
	// State lists the kinds of host series (subsecond.SeriesKinds) the
	// host page draws as lanes under its cores map, comma-separated.
	State string
	// Sandwich is the function whose sandwich the flame graph's
	// top-functions table shows; Sort the profile list's order, a column
	// and, with "-desc", descending ("samples-desc").
	Sandwich string
	Sort     string

	MatchCase bool // the search tells upper from lower case (it ignores case by default)

	// The host page's Compare panel: the target range and its CPUs, how
	// its baseline is chosen ("previous", "earlier" or "pick"), how much
	// earlier, and the picked baseline range.
	CompareFrom, CompareTo   WallTime
	CompareCPUs              []int32
	CompareWith              string
	CompareEarlier           int64
	CompareFrom2, CompareTo2 WallTime
}

// sortChoices returns the orders of a list by its columns: each column
// ascending, then descending ("name", "name-desc", …).
func sortChoices(columns ...string) []string {
	out := make([]string, 0, 2*len(columns))
	for _, c := range columns {
		out = append(out, c, c+"-desc")
	}
	return out
}

// Bound is an optional offset in nanoseconds from a profile's T0.
type Bound struct {
	NS  int64
	Set bool
}

// WallTime is an optional wall-clock time in Unix nanoseconds.
type WallTime struct {
	NS  int64
	Set bool
}

// ParamType says how a parameter's value is written.
type ParamType string

// Parameter types. Durations and offsets are written in seconds ("2",
// "0.25") or as a Go duration ("2s", "1500ms", "1m30s"), everywhere.
const (
	TypeIDList   ParamType = "idlist"   // ids and ranges: 0,3-5,39
	TypeString   ParamType = "string"   // any text
	TypeRegexp   ParamType = "regexp"   // a Go regular expression
	TypeChoice   ParamType = "choice"   // one of Choices
	TypeBool     ParamType = "bool"     // 1 or 0 (true, false)
	TypeInt      ParamType = "int"      // a whole number from Min to Max
	TypeFraction ParamType = "fraction" // a number in (0, 1]
	TypeDuration ParamType = "duration" // a duration from Min to Max ns
	TypeOffset   ParamType = "offset"   // seconds from the profile's T0, may be negative
	TypeWallTime ParamType = "walltime" // RFC 3339 (2026-11-30T03:12:05Z) or Unix seconds
	TypeLabels   ParamType = "labels"   // key=value, repeated for more, at most Max
)

// Group names the part of a query a parameter belongs to.
type Group string

// Parameter groups, in the order Params lists them.
const (
	GroupFilter   Group = "filter"   // which samples count, in every view
	GroupRange    Group = "range"    // the time ranges of flame and differential graphs
	GroupHeatmap  Group = "heatmap"  // the offset heatmap's shape
	GroupCores    Group = "cores"    // the cores map's shape
	GroupHotspots Group = "hotspots" // how hot spots are found and listed
	GroupExplain  Group = "explain"  // which markers a host's explanation contrasts, and how
	GroupSeries   Group = "series"   // a host's series: which one
	GroupFleet    Group = "fleet"    // the fleet's hosts, names and contrasts
	GroupList     Group = "list"     // which page of the profile or host list
	GroupPage     Group = "page"     // view state pages keep in their URL; no effect on data
)

// View is a set of the views that read a parameter.
type View uint16

// Views. ViewData is every view of one capture computed from samples;
// ViewHost every view of a host's night.
const (
	ViewHeatmap View = 1 << iota
	ViewCores
	ViewHotspots
	ViewFlame
	ViewDiff
	ViewPage
	ViewStacks       // the stack chart's samples
	ViewTimeline     // a host's cores × time map across its captures
	ViewHostHotspots // a host's hot spots across its captures
	ViewComms        // a host's CPU share by command
	ViewMarkers      // a host's event markers
	ViewExplain      // what precedes a host's markers, against the rest of its recording
	ViewSeries       // a host's series (per-CPU time, cgroups, interrupts) over time
	ViewFleet        // the fleet's hosts × time, search and contrasts
	ViewList         // the profile list, newest first, the host list, by name, and a host's captures, in time order, a page at a time

	ViewData = ViewHeatmap | ViewCores | ViewHotspots | ViewFlame | ViewDiff | ViewStacks
	ViewHost = ViewTimeline | ViewHostHotspots | ViewComms | ViewMarkers | ViewExplain | ViewSeries
)

// viewNames names each view, in bit order.
var viewNames = []string{"heatmap", "cores", "hotspots", "flame", "diff", "page", "stacks",
	"timeline", "host_hotspots", "comms", "markers", "explain", "series", "fleet", "list"}

// Names returns the names of the views in v, in bit order: "heatmap",
// "cores", "hotspots", "flame", "diff", "page", "stacks", "timeline",
// "host_hotspots", "comms", "markers", "explain", "series", "fleet", "list".
func (v View) Names() []string {
	var out []string
	for i, name := range viewNames {
		if v&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// Param describes one query parameter: its name as a URL parameter and CLI
// flag, its type and unit, its range (Min and Max, for TypeInt and
// TypeDuration in nanoseconds), its default as written in a URL, its
// choices (TypeChoice), a line of help, its group and the views that read
// it. A TypeBool parameter's help says what setting it does ("include idle
// samples"), so that it reads right for the CLI's switch (--idle), a
// checkbox, and, after "1 to" (URLHelp), the URL's idle=1.
type Param struct {
	Name    string
	Type    ParamType
	Unit    string
	Min     int64
	Max     int64
	Default string
	Choices []string
	Help    string
	Group   Group
	Views   View
	// ViewHelp, when set, splits Help by view for the CLI: a command
	// showing a view in an entry's Views describes its flag with that
	// entry's Help alone (see UsageFor), not with the text of the others.
	ViewHelp []ViewHelp

	field func(q *Query) any        // a pointer to the Query field it sets
	show  func(value string) string // how Describe writes a value; nil: "name value"
	check func(value string) error  // a check beyond the type's, on a value given; nil: none
}

// ViewHelp is the help of a parameter for the views in Views.
type ViewHelp struct {
	Views View
	Help  string
}

// params is the table of query parameters: the one place that names them.
// The CLI's flags, the URL parameters, their validation and error texts,
// the pages' form hints, the front end's list (web/src/params.ts) and the
// table in docs/contracts.md all come from it; the last two are generated
// by `go test ./query -run 'TestParams(TS|Doc)' -update`.
//
// To add a parameter: add its field to Query (or Filter), add its row here
// with a field function returning a pointer to that field (and, for a
// filter, a show function when "name value" does not read well in a
// heading), and regenerate those two files; a new filter's meaning then
// goes into Filter.Compile. The field's Go type must match the row's Type: []int32
// for TypeIDList; string for TypeString, TypeRegexp and TypeChoice; bool,
// int, float64 (TypeFraction), int64 (TypeDuration; 0 when a row without a
// default is not given, for the view to choose), Bound (TypeOffset) or
// WallTime (TypeWallTime); []subsecond.Label for TypeLabels (repeated, at most Max).
// TestParams checks every row. The commands that read the new parameter
// get its flag from their views; the code that uses it reads the field.
var params = []Param{
	{Name: "cpu", Type: TypeIDList, Help: "CPU list, e.g. 0,3-5,39 (empty: all)", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.CPUs },
		show: func(v string) string {
			if strings.ContainsAny(v, ",-") {
				return "CPUs " + v
			}
			return "CPU " + v
		},
	},
	{Name: "pid", Type: TypeIDList, Help: "process id list, e.g. 1234,2000-2010", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.PIDs }},
	{Name: "tid", Type: TypeIDList, Help: "thread id list", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.TIDs }},
	{Name: "comm", Type: TypeString, Help: "exact command name (in a host's comm shares: the command whose share is drawn, by default the one that jumps furthest; in the fleet: the command searched)", Group: GroupFilter, Views: ViewData | ViewComms | ViewFleet,
		ViewHelp: []ViewHelp{{ViewData, "exact command name"}, {ViewComms, "the command whose share is drawn (default: the one that jumps furthest)"}, {ViewFleet, "search the hosts for this command, the exact name"}},
		field:    func(q *Query) any { return &q.Filter.Comm }},
	{Name: "comm_regex", Type: TypeRegexp, Help: "command name regular expression", Group: GroupFilter, Views: ViewData | ViewFleet,
		ViewHelp: []ViewHelp{{ViewFleet, "search the hosts for the commands matching this regular expression"}},
		field:    func(q *Query) any { return &q.Filter.CommRegex },
		show:     func(v string) string { return "comm ~ " + v },
	},
	{Name: "cgroup", Type: TypeRegexp, Help: "cgroup path regular expression, e.g. kubepods.*pod1234 (recorded by perf record --all-cgroups, printed by perf script -F +cgroup)", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.Cgroup },
		show:  func(v string) string { return "cgroup ~ " + v },
	},
	{Name: "event", Type: TypeString, Help: "event name (default: the capture's first sampling event, such as cpu-clock, else its first event)", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.Event }},
	{Name: "function", Type: TypeRegexp, Help: "regular expression: keep samples whose stack has a matching frame (in the fleet: search the hosts for such samples)", Group: GroupFilter, Views: ViewData | ViewFleet,
		ViewHelp: []ViewHelp{{ViewData, "regular expression: keep samples whose stack has a matching frame"}, {ViewFleet, "search the hosts for the samples whose stack has a function matching this regular expression"}},
		field:    func(q *Query) any { return &q.Filter.Function }},
	{Name: "only", Type: TypeChoice, Choices: []string{"kernel", "user"}, Help: "kernel or user: keep only those frames of each stack", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.Only },
		show:  func(v string) string { return v + " frames only" },
	},
	{Name: "idle", Type: TypeBool, Default: "0", Help: "include idle samples (excluded by default)", Group: GroupFilter, Views: ViewData,
		field: func(q *Query) any { return &q.Filter.Idle },
		show:  func(string) string { return "idle included" },
	},

	{Name: "start", Type: TypeOffset, Unit: "s", Help: "range start, seconds from T0 (default: the first sample)", Group: GroupRange, Views: ViewFlame | ViewDiff | ViewStacks | ViewHotspots,
		field: func(q *Query) any { return &q.Start }},
	{Name: "end", Type: TypeOffset, Unit: "s", Help: "range end, seconds from T0, exclusive (default: after the last sample)", Group: GroupRange, Views: ViewFlame | ViewDiff | ViewStacks | ViewHotspots,
		field: func(q *Query) any { return &q.End }},
	{Name: "start2", Type: TypeOffset, Unit: "s", Help: "differential graph: base range start, seconds from T0", Group: GroupRange, Views: ViewDiff,
		field: func(q *Query) any { return &q.Start2 }},
	{Name: "end2", Type: TypeOffset, Unit: "s", Help: "differential graph: base range end, seconds from T0, exclusive", Group: GroupRange, Views: ViewDiff,
		field: func(q *Query) any { return &q.End2 }},

	{Name: "from", Type: TypeWallTime, Help: "range start as wall-clock time, RFC 3339 (2026-11-30T03:12:05Z) or Unix seconds: in a capture's views instead of start; a host's views start by default where their session does (see session); the fleet's 24 hours before to", Group: GroupRange, Views: ViewFlame | ViewDiff | ViewStacks | ViewHotspots | ViewTimeline | ViewComms | ViewMarkers | ViewExplain | ViewSeries | ViewFleet,
		ViewHelp: []ViewHelp{{ViewData, "range start as wall-clock time, RFC 3339 (2026-11-30T03:12:05Z) or Unix seconds, instead of start"}, {ViewHost, "range start as wall-clock time, RFC 3339 (2026-11-30T03:12:05Z) or Unix seconds (default: where the session starts, see session)"}, {ViewFleet, "range start as wall-clock time, RFC 3339 (2026-11-30T03:12:05Z) or Unix seconds (default: 24 hours before to, or where the indexed data starts)"}},
		field:    func(q *Query) any { return &q.From }},
	{Name: "to", Type: TypeWallTime, Help: "range end as wall-clock time, exclusive: in a capture's views instead of end; a host's views end by default where their session does; the fleet's where its indexed data does", Group: GroupRange, Views: ViewFlame | ViewDiff | ViewStacks | ViewHotspots | ViewTimeline | ViewComms | ViewMarkers | ViewExplain | ViewSeries | ViewFleet,
		ViewHelp: []ViewHelp{{ViewData, "range end as wall-clock time, exclusive, instead of end"}, {ViewHost, "range end as wall-clock time, exclusive (default: where the session ends)"}, {ViewFleet, "range end as wall-clock time, exclusive (default: where the indexed data ends)"}},
		field:    func(q *Query) any { return &q.To }},
	{Name: "session", Type: TypeInt, Min: 0, Max: 1000000, Default: "0", Help: "a host's views: the recording session (its captures with no pause longer than 30 minutes) whose span is the range where from or to is not given, 1 for the host's first; 0: the session holding the bound given, else the latest; a host's hot spots are those of the session (default the latest)", Group: GroupRange, Views: ViewTimeline | ViewComms | ViewHostHotspots | ViewExplain | ViewSeries,
		field: func(q *Query) any { return &q.Session }},
	{Name: "from2", Type: TypeWallTime, Help: "differential graph: base range start as wall-clock time, instead of start2; read on the base profile's clock", Group: GroupRange, Views: ViewDiff,
		field: func(q *Query) any { return &q.From2 }},
	{Name: "to2", Type: TypeWallTime, Help: "differential graph: base range end as wall-clock time, exclusive, instead of end2", Group: GroupRange, Views: ViewDiff,
		field: func(q *Query) any { return &q.To2 }},
	{Name: "base", Type: TypeString, Help: "differential graph: the profile (in the CLI, a FILE or ID) whose start2, end2 is the base (default: the same profile)", Group: GroupRange, Views: ViewDiff,
		field: func(q *Query) any { return &q.Base }},

	{Name: "rows", Type: TypeInt, Min: 1, Max: MaxRows, Default: strconv.Itoa(DefaultRows), Help: "rows per heatmap column", Group: GroupHeatmap, Views: ViewHeatmap,
		field: func(q *Query) any { return &q.Rows }},
	{Name: "col", Type: TypeDuration, Unit: "s", Min: MinCol, Max: MaxCol, Default: FormatSeconds(DefaultCol), Help: "heatmap column width", Group: GroupHeatmap, Views: ViewHeatmap,
		field: func(q *Query) any { return &q.Col }},

	{Name: "bucket", Type: TypeDuration, Unit: "s", Min: MinBucket, Max: MaxBucket, Help: "column width: of a capture's cores map, also the resolution of its hot spots (default 0.1 s); of a host's timeline and comm shares, at least 1 s (default: whole seconds that make at most 1,000 columns)", Group: GroupCores, Views: ViewCores | ViewHotspots | ViewTimeline | ViewComms | ViewSeries,
		ViewHelp: []ViewHelp{{ViewCores | ViewHotspots, "column width of the cores map, also the resolution of hot spots (default 0.1 s)"}, {ViewTimeline | ViewComms, "column width, at least 1 s (default: whole seconds that make at most 1,000 columns)"}},
		field:    func(q *Query) any { return &q.Bucket }},
	{Name: "measure", Type: TypeChoice, Choices: []string{"busy", "system"}, Default: "busy", Help: "what is measured: busy (busy fraction; the cores map hues it by system share) or system (system fraction: busy samples whose leaf frame is in the kernel); it shades the cores map and is what hot spots must keep above the threshold; across a host's night, busy measures system time on a core that is busy most of the night", Group: GroupCores, Views: ViewCores | ViewHotspots | ViewHostHotspots,
		field: func(q *Query) any { return &q.Measure }},

	{Name: "threshold", Type: TypeFraction, Default: strconv.FormatFloat(DefaultThreshold, 'f', -1, 64), Help: "hot spots: the busy or system fraction (see measure) that counts as hot", Group: GroupHotspots, Views: ViewHotspots | ViewHostHotspots,
		field: func(q *Query) any { return &q.Threshold }},
	{Name: "min", Type: TypeDuration, Unit: "s", Min: int64(time.Millisecond), Max: int64(24 * time.Hour), Default: FormatSeconds(DefaultMin), Help: "shortest episode (at least 1 s across a host's night, whose resolution is a second)", Group: GroupHotspots, Views: ViewHotspots | ViewHostHotspots,
		field: func(q *Query) any { return &q.Min }},
	{Name: "limit", Type: TypeInt, Min: 0, Max: 100000, Default: "50", Help: "how many to list, best first: hot spots, in a host's comm shares the commands that jump furthest, in the fleet's contrasts the findings; 0 for all", Group: GroupHotspots, Views: ViewHotspots | ViewHostHotspots | ViewComms | ViewFleet,
		ViewHelp: []ViewHelp{{ViewHotspots | ViewHostHotspots, "how many hot spots to list, best first; 0 for all"}, {ViewComms, "how many commands to list, those whose share jumps furthest first; 0 for all"}, {ViewFleet, "how many findings a contrast lists, the most significant first; 0 for all"}},
		field:    func(q *Query) any { return &q.Limit }},
	{Name: "cells", Type: TypeInt, Min: 1, Max: 1000, Default: "10", Help: "how many of the hottest heatmap cells to list", Group: GroupHotspots, Views: ViewHotspots,
		field: func(q *Query) any { return &q.Cells }},
	{Name: "near", Type: TypeDuration, Unit: "s", Min: int64(time.Second), Max: int64(24 * time.Hour), Default: FormatSeconds(DefaultNear), Help: "a host's hot spots: one ending within this long before a marker is marked with it and ranks first", Group: GroupHotspots, Views: ViewHostHotspots,
		field: func(q *Query) any { return &q.Near }},

	{Name: "max_samples", Type: TypeInt, Min: 1, Max: MaxMaxSamples, Default: strconv.Itoa(DefaultMaxSamples), Help: "stack chart: the most samples of the filters its range may hold", Group: GroupRange, Views: ViewStacks,
		field: func(q *Query) any { return &q.MaxSamples }},

	{Name: "match", Type: TypeRegexp, Help: "regular expression over the markers' text: the markers explained (empty: all)", Group: GroupExplain, Views: ViewExplain,
		field: func(q *Query) any { return &q.Match }},
	{Name: "before", Type: TypeDuration, Unit: "s", Min: int64(time.Second), Max: MaxBefore, Default: FormatSeconds(DefaultBefore), Help: "the window before each marker whose samples are contrasted with the rest of the recording", Group: GroupExplain, Views: ViewExplain,
		field: func(q *Query) any { return &q.Before }},
	{Name: "controls", Type: TypeInt, Min: 0, Max: MaxControls, Default: strconv.Itoa(DefaultControls), Help: "how many control windows (recorded time near no marker) to draw at random; 0 for all of them, up to the most", Group: GroupExplain, Views: ViewExplain,
		field: func(q *Query) any { return &q.Controls }},
	{Name: "seed", Type: TypeInt, Min: 0, Max: 1 << 30, Default: "1", Help: "the seed of the control windows' draw and of the permutation tests (a host's explanation, the fleet's contrasts), so that a result can be reproduced", Group: GroupExplain, Views: ViewExplain | ViewFleet,
		field: func(q *Query) any { return &q.Seed }},
	{Name: "name", Type: TypeChoice, Choices: seriesNames(), Default: "cpu.sys", Help: "the kind of host series: per-CPU time as mpstat shows it (cpu.sys, cpu.usr, …), cgroup counts, interrupt and network rates", Group: GroupSeries, Views: ViewSeries,
		field: func(q *Query) any { return &q.Series }},
	{Name: "series_label", Type: TypeString, Help: "a host series' label: the cgroup controller, the IRQ line, the network device (what moves with a series)", Group: GroupSeries, Views: ViewSeries,
		field: func(q *Query) any { return &q.SeriesLabel }},
	{Name: "series_cpu", Type: TypeInt, Min: -1, Max: 1 << 20, Default: "-1", Help: "a per-CPU series' CPU (what moves with a series); -1: the host's, or every CPU's together", Group: GroupSeries, Views: ViewSeries,
		field: func(q *Query) any { return &q.SeriesCPU }},
	{Name: "frame", Type: TypeString, Help: "a function: with comm, the host series are ranked by how they move with that command's samples in it", Group: GroupSeries, Views: ViewSeries,
		field: func(q *Query) any { return &q.Frame }},
	{Name: "label", Type: TypeLabels, Max: subsecond.MaxLabels, Help: "a host label, key=value (zone=us-east-1a): the fleet's hosts that carry it; repeated, those that carry every one", Group: GroupFleet, Views: ViewFleet,
		field: func(q *Query) any { return &q.Labels }},
	{Name: "group", Type: TypeString, Help: "a host label key: the fleet's rows are grouped by its values, and the group contrast compares them", Group: GroupFleet, Views: ViewFleet,
		field: func(q *Query) any { return &q.Group },
		check: checkLabelKey},
	{Name: "stack", Type: TypeRegexp, Help: "search the hosts for the samples whose stack holds a call edge caller;callee matching this regular expression (e.g. ^tcp_sendmsg;tcp_push$)", Group: GroupFleet, Views: ViewFleet,
		field: func(q *Query) any { return &q.Stack }},
	{Name: "buckets", Type: TypeInt, Min: 1, Max: MaxFleetBuckets, Default: strconv.Itoa(DefaultFleetBuckets), Help: "the fleet's time columns: of its map and of the search's sparklines", Group: GroupFleet, Views: ViewFleet,
		field: func(q *Query) any { return &q.Buckets }},
	{Name: "permutations", Type: TypeInt, Min: MinPermutations, Max: MaxPermutations, Default: strconv.Itoa(DefaultPermutations), Help: "the fleet's contrasts: the shuffles of each permutation test (more: finer p-values, slower)", Group: GroupFleet, Views: ViewFleet,
		field: func(q *Query) any { return &q.Permutations }},
	{Name: "per_page", Type: TypeInt, Min: 1, Max: MaxPerPage, Default: strconv.Itoa(DefaultPerPage), Help: "how many entries a page of a list holds: of the profile list (newest first), the host list (by name) or a host's captures (in time order)", Group: GroupList, Views: ViewList,
		field: func(q *Query) any { return &q.PerPage }},
	{Name: "cursor", Type: TypeString, Help: "the list's page after this entry, the next_cursor of the page before: a profile ID in the profile list or a host's captures, a host name in the host list; absent for the first page", Group: GroupList, Views: ViewList,
		field: func(q *Query) any { return &q.Cursor }},
	{Name: "scale", Type: TypeChoice, Choices: []string{"linear", "log"}, Default: "linear", Help: "the heatmaps' colour scale: linear or log (enhanced)", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Scale }},
	{Name: "search", Type: TypeString, Help: "the flame graph's search: a regular expression", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Search }},
	{Name: "match_case", Type: TypeBool, Default: "0", Help: "make the search tell upper from lower case (it ignores case by default)", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.MatchCase }},
	{Name: "zoom", Type: TypeString, Help: "the flame graph's zoomed frame, as a path of frame names", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Zoom }},
	{Name: "view", Type: TypeChoice, Choices: []string{"flame", "icicle"}, Default: "flame", Help: "flame (root at the bottom) or icicle (root at the top), the flame graph and the stack chart above it", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.View }},
	{Name: "sandwich", Type: TypeString, Help: "the flame graph's top-functions table: the function whose sandwich (its callers and callees) is shown", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Sandwich }},
	{Name: "sort", Type: TypeChoice, Choices: sortChoices("name", "host", "duration", "samples", "cpus", "size", "uploaded"), Help: "the profile list's order: by a column, ascending, or with -desc descending (default: uploaded-desc, the newest first)", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Sort }},
	{Name: "shape", Type: TypeChoice, Choices: []string{"target", "base"}, Default: "target", Help: "a differential graph's widths: the target range's (frames gone since the base at their base width) or the base's (flamegraph.pl's --negate)", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Shape }},
	{Name: "lanes", Type: TypeChoice, Choices: []string{"cpu", "thread"}, Default: "cpu", Help: "the stack chart's lanes: one per CPU or one per thread", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.Lanes }},
	{Name: "tz", Type: TypeChoice, Choices: []string{"utc", "local", "offset"}, Default: "utc", Help: "how pages show times: times of day in UTC or in the browser's time zone (local), each beside seconds from the capture's start; or (offset) a capture's views in seconds from its start alone, a host's night in UTC", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.TZ }},
	{Name: "state", Type: TypeString, Default: DefaultState, Help: "the host page's lanes under the cores map: kinds of host series, comma-separated (a per-CPU kind as a CPU × time heat, others as lines); none for none", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.State }},
	{Name: "compare_from", Type: TypeWallTime, Help: "the host page's Compare panel: the target range's start, wall-clock time", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareFrom }},
	{Name: "compare_to", Type: TypeWallTime, Help: "the host page's Compare panel: the target range's end, wall-clock time, exclusive", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareTo }},
	{Name: "compare_cpu", Type: TypeIDList, Help: "the host page's Compare panel: the CPUs of both sides (empty: all)", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareCPUs }},
	{Name: "compare_with", Type: TypeChoice, Choices: []string{"previous", "earlier", "pick"}, Default: "previous", Help: "the host page's Compare panel: the baseline, the same place in the previous capture, the same range compare_earlier before, or the range compare_from2, compare_to2", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareWith }},
	{Name: "compare_earlier", Type: TypeDuration, Unit: "s", Min: int64(time.Second), Max: int64(24 * time.Hour), Default: "600", Help: "the host page's Compare panel: how long before the target its baseline is, with compare_with=earlier", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareEarlier }},
	{Name: "compare_from2", Type: TypeWallTime, Help: "the host page's Compare panel: the picked baseline's start, wall-clock time, with compare_with=pick", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareFrom2 }},
	{Name: "compare_to2", Type: TypeWallTime, Help: "the host page's Compare panel: the picked baseline's end, wall-clock time, exclusive", Group: GroupPage, Views: ViewPage,
		field: func(q *Query) any { return &q.Page.CompareTo2 }},
}

// seriesNames returns the names of subsecond.SeriesKinds, the choices of
// the name parameter.
func seriesNames() []string {
	out := make([]string, len(subsecond.SeriesKinds))
	for i, k := range subsecond.SeriesKinds {
		out[i] = k.Name
	}
	return out
}

// defaults is the Query of an empty parameter list.
var defaults = func() Query {
	var q Query
	for _, p := range params {
		if p.Default == "" {
			continue
		}
		if err := p.set(&q, p.Default); err != nil {
			panic(fmt.Sprintf("query table: default of %s: %v", p.Name, err))
		}
	}
	return q
}()

// Params returns the query parameters in table order (by group: filter,
// range, heatmap, cores, hotspots, page).
func Params() []Param { return slices.Clone(params) }

// ParamsFor returns the parameters that some view of v reads, in table
// order: ParamsFor(ViewCores) is what the cores map's command and URL take.
func ParamsFor(v View) []Param {
	var out []Param
	for _, p := range params {
		if p.Views&v != 0 {
			out = append(out, p)
		}
	}
	return out
}

// ParamsIn returns the parameters of group g, in table order.
func ParamsIn(g Group) []Param {
	var out []Param
	for _, p := range params {
		if p.Group == g {
			out = append(out, p)
		}
	}
	return out
}

// Describe returns the filter as short phrases for people, one per
// parameter set, in table order: "CPU 39", "comm java", "kernel frames
// only", "idle included".
func (f Filter) Describe() []string {
	q := Default()
	q.Filter = f
	var out []string
	for _, p := range params {
		if p.Group != GroupFilter {
			continue
		}
		if v := p.Get(&q); v != "" && v != p.Default {
			out = append(out, p.Describe(v))
		}
	}
	return out
}

// Describe writes one value of p for people: "comm java", "CPU 39".
func (p Param) Describe(value string) string {
	if p.show != nil {
		return p.show(value)
	}
	return p.Name + " " + value
}

// FilterParams returns the filter's parameters, ParamsIn(GroupFilter).
func FilterParams() []Param { return ParamsIn(GroupFilter) }

// LookupParam returns the parameter named name.
func LookupParam(name string) (Param, bool) {
	for _, p := range params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Default returns the query of no parameters: every default.
func Default() Query {
	q := defaults
	return q
}

// Parse reads the parameters of the table from v; absent or empty ones
// take their defaults, unknown names are ignored (pages carry their own).
// The error names the first bad parameter, as a *ParamError wrapping
// ErrInvalid.
func Parse(v url.Values) (*Query, error) {
	q := Default()
	for _, p := range params {
		if p.Type == TypeLabels {
			for _, s := range v[p.Name] {
				if s == "" {
					continue
				}
				if err := p.set(&q, s); err != nil {
					return nil, err
				}
			}
			continue
		}
		if s := v.Get(p.Name); s != "" {
			if err := p.set(&q, s); err != nil {
				return nil, err
			}
		}
	}
	if _, err := q.Page.StateKinds(); err != nil {
		return nil, err
	}
	return &q, nil
}

// StateKinds returns the kinds of host series p.State names, in its
// order, without repeats; "none" names none. An unknown kind is a
// *ParamError listing the known ones.
func (p Page) StateKinds() ([]string, error) {
	if p.State == "none" || p.State == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(p.State, ",") {
		name = strings.TrimSpace(name)
		if _, ok := subsecond.Kind(name); !ok {
			return nil, Invalidf("state", "%q is not a kind of host series; choose from %s, or none", name, strings.Join(seriesNames(), ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// ParseFilter reads the filter parameters from v; see Parse.
func ParseFilter(v url.Values) (Filter, error) {
	q, err := Parse(pickGroup(v, GroupFilter))
	if err != nil {
		return Filter{}, err
	}
	return q.Filter, nil
}

func pickGroup(v url.Values, g Group) url.Values {
	out := url.Values{}
	for _, p := range params {
		if p.Group == g && v.Get(p.Name) != "" {
			out.Set(p.Name, v.Get(p.Name))
		}
	}
	return out
}

// Values returns the query's parameters that differ from their defaults,
// so that Parse(q.Values()) equals q (but for Range and Range2, which
// Resolve sets).
func (q *Query) Values() url.Values {
	v := url.Values{}
	for _, p := range params {
		if p.Type == TypeLabels {
			for _, s := range p.GetAll(q) {
				v.Add(p.Name, s)
			}
		} else if s := p.Get(q); s != p.Default && s != "" {
			v.Set(p.Name, s)
		}
	}
	return v
}

// ValuesFor returns the query's non-default parameters that some view of
// views reads: the key of a computed view, or the parameters of a link.
func (q *Query) ValuesFor(views View) url.Values {
	v := q.Values()
	for _, p := range params {
		if p.Views&views == 0 {
			v.Del(p.Name)
		}
	}
	return v
}

// Values returns the filter as query parameters, omitting defaults, so that
// ParseFilter(f.Values()) equals f.
func (f Filter) Values() url.Values {
	q := Default()
	q.Filter = f
	return pickGroup(q.Values(), GroupFilter)
}

// HasBase reports whether the query names a base (start2, end2, from2, to2
// or base): it asks for a differential graph.
func (q *Query) HasBase() bool {
	return q.Start2.Set || q.End2.Set || q.From2.Set || q.To2.Set || q.Base != ""
}

// Resolve sets Range and Range2 for profile p from the bounds given; a
// missing bound is the profile's: T0, or the instant after its last sample.
// A range reaching past the profile is clamped to it. An empty range, or one
// wholly outside the profile, is an error naming the bound at fault. A
// profile without timestamps has the one range UntimedRange, and any bound
// is an error saying so. When
// Base names another profile, Range2 is left for ResolveBase; a Base naming
// p itself is cleared.
func (q *Query) Resolve(p *subsecond.Profile) error {
	if err := resolveWall(p, q.From, q.To, &q.Start, &q.End, ""); err != nil {
		return err
	}
	var err error
	if q.Range, err = resolve(WholeOf(p), q.Start, q.End, "start", "end"); err != nil {
		return err
	}
	if q.Base == p.ID {
		q.Base = ""
	}
	if q.Base != "" {
		return nil
	}
	return q.ResolveBase(p)
}

// Clamp is a bound of a range that reached past its capture and that
// Resolve moved to the capture's edge: its parameter ("start", "end",
// "start2", "end2"), the offset from T0 it asked for and the one the view
// shows, in nanoseconds.
type Clamp struct {
	Name       string
	Asked, Got int64
}

// Clamps returns the bounds of q's resolved ranges that Resolve clamped to
// their captures, start before end, the range's before the base range's;
// t0 is the T0 of the query's profile and t02 that of the base range's.
// A page that shows the clamped range writes these into its URL, so that
// the link says what the view shows.
func (q *Query) Clamps(t0, t02 int64) []Clamp {
	var cs []Clamp
	for _, b := range []struct {
		name  string
		bound Bound
		got   int64
		timed bool
	}{
		{"start", q.Start, q.Range.Start - t0, q.Range != subsecond.UntimedRange},
		{"end", q.End, q.Range.End - t0, q.Range != subsecond.UntimedRange},
		{"start2", q.Start2, q.Range2.Start - t02, q.Range2 != subsecond.UntimedRange && !q.Range2.Empty()},
		{"end2", q.End2, q.Range2.End - t02, q.Range2 != subsecond.UntimedRange && !q.Range2.Empty()},
	} {
		if b.bound.Set && b.timed && b.bound.NS != b.got {
			cs = append(cs, Clamp{Name: b.name, Asked: b.bound.NS, Got: b.got})
		}
	}
	return cs
}

// Notice says for people what c changed: "start -5 s is before the
// capture; showing from 0 s", "end 999 s is past the end of the capture;
// showing to 19.99 s".
func (c Clamp) Notice() string {
	what := "the capture"
	if strings.HasSuffix(c.Name, "2") {
		what = "the base capture"
	}
	if c.Got > c.Asked {
		return fmt.Sprintf("%s %s s is before %s; showing from %s s", c.Name, DisplaySeconds(c.Asked), what, DisplaySeconds(c.Got))
	}
	return fmt.Sprintf("%s %s s is past the end of %s; showing to %s s", c.Name, DisplaySeconds(c.Asked), what, DisplaySeconds(c.Got))
}

// resolveWall turns from and to into start and end with p's wall-clock
// anchor (Profile.Wall): the range's bounds, or with suffix "2" the base
// range's, whose parameters the errors name (from2, start2, …).
func resolveWall(p *subsecond.Profile, from, to WallTime, start, end *Bound, suffix string) error {
	if !from.Set && !to.Set {
		return nil
	}
	fromName, toName := "from"+suffix, "to"+suffix
	name := fromName
	if !from.Set {
		name = toName
	}
	if start.Set || end.Set {
		return Invalidf(name, "give the range as %s and %s, or as start%s and end%s, not both", fromName, toName, suffix, suffix)
	}
	if !p.Wall.Known() {
		return Invalidf(name, "this capture has no wall-clock time (record with perf record -k CLOCK_REALTIME, or keep perf script's --header); give start%s and end%s, seconds from T0", suffix, suffix)
	}
	// The range is checked here, on the wall clock, so that an error names
	// from or to and reads in the times they were given in. A range that
	// ends by the first sample or starts after the last holds nothing.
	first, last := p.Wall.Wall(p.Start), p.Wall.Wall(p.End)
	ran := func() string {
		a := ""
		if p.Wall.Approximate {
			a = "≈"
		}
		return fmt.Sprintf("the capture, which ran from %s%s to %s%s", a, FormatWallTime(first), a, FormatWallTime(last))
	}
	switch {
	case from.Set && from.NS > last:
		return Invalidf(fromName, "%s is after %s", FormatWallTime(from.NS), ran())
	case to.Set && to.NS <= first:
		return Invalidf(toName, "%s is before %s", FormatWallTime(to.NS), ran())
	case from.Set && to.Set && to.NS <= from.NS:
		return Invalidf(toName, "the range [%s, %s) is empty; %s must be after %s", FormatWallTime(from.NS), FormatWallTime(to.NS), toName, fromName)
	}
	// Times far outside the capture are clamped to it here, as resolve
	// would, before they become offsets that could overflow.
	for _, w := range []struct {
		t   WallTime
		dst *Bound
	}{{from, start}, {to, end}} {
		if w.t.Set {
			off := min(max(w.t.NS, p.Wall.Wall(p.T0())), last+1) - p.Wall.Offset - p.T0()
			*w.dst = Bound{NS: off, Set: true}
		}
	}
	return nil
}

// ParseWallTime parses the wall-clock time parameter name: RFC 3339
// ("2026-11-30T03:12:05Z", fractions allowed) or Unix seconds
// ("1796008320.5"). It returns Unix nanoseconds, or a *ParamError.
func ParseWallTime(name, s string) (int64, error) {
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); err == nil {
		// Unix nanoseconds in an int64 reach from 1677 to 2262.
		if y := t.UTC().Year(); y < 1678 || y > 2261 {
			return 0, Invalidf(name, "%q is outside the years 1678 to 2261", s)
		}
		return t.UnixNano(), nil
	}
	if t := strings.TrimSpace(s); t != "" && strings.Trim(t, "0123456789.") == "" {
		if ns, err := ParseSeconds(name, t); err == nil && ns >= 0 {
			return ns, nil
		}
	}
	return 0, Invalidf(name, "%q is neither an RFC 3339 time (2026-11-30T03:12:05Z) nor Unix seconds", s)
}

// ResolveBase sets Range2 from Start2 and End2 against base, the profile
// Base names, as Resolve does for the query's own profile.
func (q *Query) ResolveBase(base *subsecond.Profile) error {
	if err := resolveWall(base, q.From2, q.To2, &q.Start2, &q.End2, "2"); err != nil {
		return err
	}
	var err error
	q.Range2, err = resolve(WholeOf(base), q.Start2, q.End2, "start2", "end2")
	return err
}

// WholeOf returns the range of all of p's samples, from T0 (UntimedRange
// when p has no timestamps): the range a query gives when it names none.
func WholeOf(p *subsecond.Profile) subsecond.Range {
	if !p.Timed() {
		return subsecond.UntimedRange
	}
	return subsecond.Range{Start: p.T0(), End: p.End + 1}
}

func resolve(whole subsecond.Range, start, end Bound, startName, endName string) (subsecond.Range, error) {
	if whole == subsecond.UntimedRange {
		switch {
		case start.Set:
			return whole, &ParamError{Name: startName, Msg: subsecond.ErrNoTime.Error()}
		case end.Set:
			return whole, &ParamError{Name: endName, Msg: subsecond.ErrNoTime.Error()}
		}
		return whole, nil
	}
	t0 := whole.Start
	r := whole
	var err error
	if start.Set {
		if r.Start, err = addOffset(startName, t0, start.NS); err != nil {
			return r, err
		}
	}
	if end.Set {
		if r.End, err = addOffset(endName, t0, end.NS); err != nil {
			return r, err
		}
	}
	// A range reaching past the capture is clamped to it (start=-5 means
	// from the first sample); one wholly outside it is refused.
	switch {
	case r.Start >= whole.End:
		return r, Invalidf(startName, "%s s is past the end of the capture (%s s)", FormatSeconds(r.Start-t0), DisplaySeconds(whole.End-t0))
	case r.End <= whole.Start:
		return r, Invalidf(endName, "%s s is before the capture starts (%s s)", FormatSeconds(r.End-t0), DisplaySeconds(whole.Start-t0))
	case r.End <= r.Start:
		return r, Invalidf(endName, "the range [%s, %s) s is empty; %s must be after %s", FormatSeconds(r.Start-t0), FormatSeconds(r.End-t0), endName, startName)
	}
	r.Start = max(r.Start, whole.Start)
	r.End = min(r.End, whole.End)
	return r, nil
}

// addOffset returns t0+off, refusing a sum past the int64 range.
func addOffset(name string, t0, off int64) (int64, error) {
	if off > 0 && t0 > math.MaxInt64-off || off < 0 && t0 < math.MinInt64-off {
		return 0, Invalidf(name, "%s s from the profile's start is out of range", FormatSeconds(off))
	}
	return t0 + off, nil
}

// ParamError is a bad query parameter: its name and what is wrong, as a
// sentence for the user ("rows: "0" is not a whole number from 1 to
// 1000"). It wraps ErrInvalid.
type ParamError struct {
	Name string
	Msg  string
}

func (e *ParamError) Error() string { return e.Name + ": " + e.Msg }

// Unwrap returns ErrInvalid.
func (e *ParamError) Unwrap() error { return subsecond.ErrInvalid }

// Invalidf returns a *ParamError for parameter name with the formatted
// message.
func Invalidf(name, format string, args ...any) error {
	return &ParamError{Name: name, Msg: fmt.Sprintf(format, args...)}
}

// Message returns err's text for a person. An error wrapping ErrInvalid
// names what is wrong at its start, and one wrapping ErrTooLarge names the
// limit it passed (and the flag that sets it, where one does), so the
// ": invalid" or ": too large" that wrapping with %w appends says nothing
// more: it is dropped. The CLI prints errors and the server writes its
// 400 and 413 answers through it, so they read the same.
func Message(err error) string {
	msg := err.Error()
	for _, sentinel := range []error{subsecond.ErrInvalid, subsecond.ErrTooLarge} {
		if errors.Is(err, sentinel) {
			msg = strings.TrimSuffix(msg, ": "+sentinel.Error())
		}
	}
	return msg
}

// Get returns the value of p in q as a URL writes it ("" for an unset
// bound, an empty list or empty text).
func (p Param) Get(q *Query) string {
	switch f := p.field(q).(type) {
	case *[]int32:
		return FormatIDList(*f)
	case *string:
		return *f
	case *bool:
		if *f {
			return "1"
		}
		return "0"
	case *int:
		return strconv.Itoa(*f)
	case *float64:
		return strconv.FormatFloat(*f, 'f', -1, 64)
	case *int64:
		if *f == 0 && p.Default == "" {
			return "" // unset: the view's default
		}
		return FormatSeconds(*f)
	case *Bound:
		if !f.Set {
			return ""
		}
		return FormatSeconds(f.NS)
	case *WallTime:
		if !f.Set {
			return ""
		}
		return FormatWallTime(f.NS)
	case *[]subsecond.Label:
		return strings.Join(p.GetAll(q), " ")
	}
	panic("query table: " + p.Name + ": unsupported field type")
}

// GetAll returns the values of p in q as a URL writes them: one per
// label of a TypeLabels parameter (the parameter repeated), else Get's one
// value, or none when that is "".
func (p Param) GetAll(q *Query) []string {
	if f, ok := p.field(q).(*[]subsecond.Label); ok {
		out := make([]string, len(*f))
		for i, l := range *f {
			out[i] = l.String()
		}
		return out
	}
	if s := p.Get(q); s != "" {
		return []string{s}
	}
	return nil
}

// set parses s into p's field of q.
func (p Param) set(q *Query, s string) error {
	switch f := p.field(q).(type) {
	case *[]int32:
		ids, err := ParseIDList(p.Name, s)
		if err != nil {
			return err
		}
		*f = ids
	case *string:
		switch p.Type {
		case TypeRegexp:
			if len(s) > MaxRegexp {
				return Invalidf(p.Name, "a regular expression of %d bytes is longer than the %d one may be", len(s), MaxRegexp)
			}
			if _, err := regexp.Compile(s); err != nil {
				return Invalidf(p.Name, "%q is not a regular expression: %v", s, unwrapRegexp(err))
			}
		case TypeChoice:
			if !slices.Contains(p.Choices, s) {
				return Invalidf(p.Name, "%q is not %s", s, orList(p.Choices))
			}
		}
		*f = s
	case *bool:
		switch s {
		case "1", "true":
			*f = true
		case "0", "false":
			*f = false
		default:
			return Invalidf(p.Name, "%q is not 1 or 0", s)
		}
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return Invalidf(p.Name, "%q is not a whole number from %d to %d", s, p.Min, p.Max)
		}
		if err := CheckParam(p.Name, int64(n)); err != nil {
			return err
		}
		*f = n
	case *float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(x > 0 && x <= 1) {
			return Invalidf(p.Name, "%q is not a fraction in (0, 1], such as 0.9", s)
		}
		*f = x
	case *int64:
		ns, err := ParseDuration(p.Name, s)
		if err != nil {
			return err
		}
		if err := CheckParam(p.Name, ns); err != nil {
			return err
		}
		*f = ns
	case *Bound:
		ns, err := ParseDuration(p.Name, s)
		if err != nil {
			return err
		}
		*f = Bound{NS: ns, Set: true}
	case *WallTime:
		ns, err := ParseWallTime(p.Name, s)
		if err != nil {
			return err
		}
		*f = WallTime{NS: ns, Set: true}
	case *[]subsecond.Label:
		l, err := ParseLabel(p.Name, s)
		if err != nil {
			return err
		}
		for _, have := range *f {
			if have.Key == l.Key {
				return Invalidf(p.Name, "%s is given twice; a host has one value of a key", l.Key)
			}
		}
		if int64(len(*f)) >= p.Max {
			return Invalidf(p.Name, "more than %d labels", p.Max)
		}
		*f = append(*f, l)
	default:
		panic("query table: " + p.Name + ": unsupported field type")
	}
	if p.check != nil {
		return p.check(s)
	}
	return nil
}

// ParseLabel parses a host label written key=value for the parameter or
// flag name, checked with subsecond.LabelProblem; the error names name.
func ParseLabel(name, s string) (subsecond.Label, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return subsecond.Label{}, Invalidf(name, "%q is not a label key=value", s)
	}
	l := subsecond.Label{Key: strings.TrimSpace(k), Value: v}
	if why := subsecond.LabelProblem(l); why != "" {
		return subsecond.Label{}, Invalidf(name, "%q: %s", s, why)
	}
	return l, nil
}

// ParseLabels parses the labels of the parameter or flag name as the
// query table does label: each key=value, no key twice, at most
// subsecond.MaxLabels.
func ParseLabels(name string, ss []string) ([]subsecond.Label, error) {
	p, _ := LookupParam("label")
	p.Name = name
	var q Query
	for _, s := range ss {
		if err := p.set(&q, s); err != nil {
			return nil, err
		}
	}
	return q.Labels, nil
}

// checkLabelKey checks a host label key (the group parameter's).
func checkLabelKey(key string) error {
	if why := subsecond.LabelProblem(subsecond.Label{Key: key, Value: "-"}); why != "" {
		return Invalidf("group", "%s", why)
	}
	return nil
}

// Check checks v, a Go caller's value of the parameter name (a string for
// a choice, a string or regular expression, a float64 for a fraction, an
// int or int64 for a whole number or a duration in ns), against the
// table, with the error Parse gives for the same value in a URL. Options
// that packages take from Go callers (the hot-spot finders') are checked
// with it, so the table is the one place that says what is valid.
func Check(name string, v any) error {
	p, ok := LookupParam(name)
	if !ok {
		panic("Check: no parameter " + name)
	}
	switch x := v.(type) {
	case int:
		return CheckParam(name, int64(x))
	case int64:
		return CheckParam(name, x)
	case string:
		return p.set(&Query{}, x)
	case float64:
		return p.set(&Query{}, strconv.FormatFloat(x, 'f', -1, 64))
	}
	panic(fmt.Sprintf("Check: %s: unsupported value type %T", name, v))
}

// CheckEach checks name, value pairs (name1, v1, name2, v2, …) in order as
// Check does and returns the first error.
func CheckEach(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := Check(pairs[i].(string), pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// CheckParam checks n, a value of the TypeInt or TypeDuration parameter
// name given other than through Parse (a Go caller's options), against
// the table's range, with the same error Parse gives.
func CheckParam(name string, n int64) error {
	p, ok := LookupParam(name)
	if !ok || p.Type != TypeInt && p.Type != TypeDuration {
		panic("CheckParam: " + name + " is not a whole-number or duration parameter")
	}
	if n >= p.Min && n <= p.Max {
		return nil
	}
	s := strconv.FormatInt(n, 10)
	if p.Type == TypeDuration {
		s = FormatSeconds(n) + " s"
	}
	return Invalidf(name, "%s is outside %s", s, p.Range())
}

// Range describes the values p accepts, for help and errors: "1 to 1000",
// "0.1 s to 10 s", "kernel or user".
func (p Param) Range() string {
	switch p.Type {
	case TypeInt:
		return fmt.Sprintf("%d to %d", p.Min, p.Max)
	case TypeDuration:
		return fmt.Sprintf("%s s to %s s", DisplaySeconds(p.Min), DisplaySeconds(p.Max))
	case TypeFraction:
		return "(0, 1]"
	case TypeChoice:
		return orList(p.Choices)
	}
	return ""
}

// URLHelp returns p's help for its URL parameter: a TypeBool parameter's
// is prefixed "1 to" ("1 to include idle samples"), the value that sets it.
func (p Param) URLHelp() string {
	if p.Type == TypeBool {
		return "1 to " + p.Help
	}
	return p.Help
}

// Usage returns p's help with its range and default, as the CLI prints it
// and the pages' forms show it (a TypeBool parameter being a switch or a
// checkbox there).
func (p Param) Usage() string {
	u := p.Help
	if r := p.Range(); r != "" && p.Type != TypeChoice {
		u += ", " + r
	}
	switch p.Type {
	case TypeDuration, TypeOffset:
		u += " (seconds, or a duration such as 1500ms)"
	}
	if p.Default != "" && p.Type != TypeBool {
		d := p.Default
		if p.Unit != "" {
			d += " " + p.Unit
		}
		u += " (default " + d + ")"
	}
	return u
}

// UsageFor returns Usage with the help for view v: that of the first
// ViewHelp entry whose views meet v, else Help.
func (p Param) UsageFor(v View) string {
	for _, h := range p.ViewHelp {
		if h.Views&v != 0 {
			p.Help = h.Help
			break
		}
	}
	return p.Usage()
}

// ParseDuration parses a duration or an offset written in seconds ("2",
// "0.25", "-1.5") or as a Go duration ("2s", "1500ms", "1m30s") into
// integer nanoseconds, exactly. The error names the parameter.
func ParseDuration(name, s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t != "" && strings.IndexFunc(t, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == 'µ' }) >= 0 {
		d, err := time.ParseDuration(t)
		if err != nil {
			return 0, Invalidf(name, "%q is not a duration such as 2, 2s or 1500ms", s)
		}
		return int64(d), nil
	}
	return ParseSeconds(name, s)
}

// orList joins choices as "a, b or c".
func orList(choices []string) string {
	switch len(choices) {
	case 0:
		return ""
	case 1:
		return choices[0]
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// unwrapRegexp returns what is wrong with a regular expression, without the
// regexp package's "error parsing regexp: " prefix and its quote of the
// expression.
func unwrapRegexp(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return err.Error()
}
