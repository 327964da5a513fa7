// Package web holds Subsecond's HTML pages as templ components and the
// front-end assets (built by esbuild from web/src into web/static, committed)
// embedded into the binary, so `go build` never needs Node.
//
// Components are pure functions of the view models below. Data meant for the
// page's JavaScript travels only through templ.JSONScript as the "view-data"
// element; symbol and command names reach the markup only through templ's
// escaping:
//
//	page := web.ProfilePage{Layout: layout, Profile: *p, Hotspots: spots}
//	err := web.Profile(page).Render(ctx, w)
package web

import (
	"io/fs"

	"github.com/subsecond/subsecond"
)

// Static returns the built front-end assets (app.js, app.css, …): those of
// web/static, or with the browsertest build tag those of web/teststatic,
// the browser tests' build with its test hooks. app.js links no source map;
// app.js.map is served to whoever asks for it (a browser's developer tools,
// given its URL).
func Static() fs.FS {
	sub, err := fs.Sub(static, staticDir)
	if err != nil {
		// fs.Sub fails only for an invalid path; staticDir is valid.
		panic(err)
	}
	return sub
}

// ProfileSummary is the part of a profile the page's JavaScript needs. Times
// are integer nanoseconds; T0 is the whole second holding the first sample.
type ProfileSummary struct {
	ID          string                 `json:"id"`
	Name        string                 `json:"name"`
	T0          int64                  `json:"t0_ns"`
	Start       int64                  `json:"start_ns"`
	End         int64                  `json:"end_ns"`
	Samples     int64                  `json:"samples"`
	CPUs        int                    `json:"cpus"`
	FrequencyHz float64                `json:"frequency_hz"`
	Events      []subsecond.EventCount `json:"events"`
	// Host is the capture's host, whose series its page draws under the
	// cores map; absent when unknown (subsecond.UnknownHost).
	Host string `json:"host,omitempty"`
	// Wall is the profile's wall-clock anchor; absent when unknown.
	Wall *subsecond.WallClock `json:"wall,omitempty"`
}

// Summarize returns p's summary.
func Summarize(p *subsecond.Profile) *ProfileSummary {
	ev := p.Events
	if ev == nil {
		ev = []subsecond.EventCount{}
	}
	s := &ProfileSummary{
		ID: p.ID, Name: p.Name, T0: p.T0(), Start: p.Start, End: p.End,
		Samples: p.Samples, CPUs: p.CPUs, FrequencyHz: p.FrequencyHz, Events: ev,
	}
	if p.Host != subsecond.UnknownHost {
		s.Host = p.Host
	}
	if p.Wall.Known() {
		w := p.Wall
		s.Wall = &w
	}
	return s
}

// ViewData is the JSON every page carries in its "view-data" script element:
// which page it is, the profile shown, the view state parsed from the URL
// query (every parameter as a string) and where the profile's JSON API lives.
type ViewData struct {
	Page          string            `json:"page"`
	Profile       *ProfileSummary   `json:"profile,omitempty"`
	Host          string            `json:"host,omitempty"` // the host of a host page, or of a host range's flame, diff or stack-chart page
	Params        map[string]string `json:"params"`
	API           string            `json:"api,omitempty"`
	ReadOnly      bool              `json:"readOnly"`
	TokenRequired bool              `json:"tokenRequired"`
	// Canonical holds the parameters the server changed from what the URL
	// asked for, a range's bounds clamped to its capture, as they should
	// read: the script writes them into the page's URL (history.replaceState)
	// so that the URL, and a copied link, say what the view shows.
	Canonical map[string]string `json:"canonical,omitempty"`
}

// Layout is what every page shares: its title, the view data and the URLs of
// the stylesheet and script (which carry a content hash for caching).
type Layout struct {
	Title     string
	Data      ViewData
	CSSURL    string
	ScriptURL string
	// Clock shows the Times toggle (UTC or the browser's zone) of a page
	// that shows times of day, and Offsets its third choice, seconds from
	// the capture's start; TZ is what the URL asks for, "utc", "local" or
	// "offset".
	Clock, Offsets bool
	TZ             string
	// Preload lists the JSON URLs the page's script fetches first; the head
	// asks for them before the script loads, and the script's fetch of each
	// takes the answer. Each must equal, byte for byte, the URL the script
	// builds (web/src/state.ts's apiURL), or the browser fetches it twice.
	Preload []string
}

// IndexPage lists the stored profiles and offers the upload form.
type IndexPage struct {
	Layout
	Profiles []subsecond.Profile
	// Next is the URL of the list's next page, "" on the last; First
	// says that this page is not the first, which links to it.
	Next          string
	First         bool
	ReadOnly      bool
	TokenRequired bool
	UploadURL     string // where curl posts captures, e.g. http://host:8080/api/profiles
}

// Hotspot is one entry of a profile page's hot-spots list, ready to show.
type Hotspot struct {
	Href     string     // the flame graph of the episode
	CPU      string     // "" when the entry spans all CPUs
	Range    string     // seconds from T0, as query.DisplayRange writes them
	Wall     *WallRange // the range on the wall clock; nil when unknown
	Busy     string     // e.g. "97%"
	System   string     // the part of it in the kernel, e.g. "82%"
	Comm     string
	Share    string // the dominant command's share, e.g. "99%"
	Function string // the hottest self function
}

// Field is one input of the filter form: its URL parameter name, label and
// current value. Options, when set, make it a select.
type Field struct {
	Name    string
	Label   string
	Value   string
	Hint    string
	Options []Option
}

// Option is one choice of a select field.
type Option struct {
	Value, Label string
}

// ProfilePage shows one profile: metadata, heatmap and cores-map containers,
// the filter form and the hot spots.
type ProfilePage struct {
	Layout
	Profile subsecond.Profile
	// Linked is the range the page's link gives (start, end), which the
	// maps show whole; nil when it gives none.
	Linked       *LinkedRange
	Notice       string // what the server changed from what the URL asked for, as FlamePage's
	Filters      []Field
	Hotspots     []Hotspot
	HotspotsWhat string // what the episodes are: "≥ 70% busy for 1 s or more"
	HotspotsNote string // the cores a filter hides (subsecond.HotspotReport.Note)
	HotspotsErr  string // why the list is empty, when it could not be computed
	// HotspotsPending says the list is still being computed: the list is
	// rendered empty with data-pending="true" for the script to fetch.
	HotspotsPending bool
	HotspotsMore    int    // episodes beyond those listed
	HotspotsAPI     string // the JSON list of every episode
}

// Lanes reports whether the page draws the lanes of its host's series
// under the cores map: the capture has a host and a wall clock, on which
// the series are kept.
func (p ProfilePage) Lanes() bool {
	return p.Profile.Host != subsecond.UnknownHost && p.Profile.Wall.Known() && p.Profile.Timed()
}

// LaneChoices returns the lanes' picker (laneChoices).
func (p ProfilePage) LaneChoices() []LaneChoice { return laneChoices(p.Data.Params) }

// LinkedRange is a range a link to a profile's page gives, with the links
// to its own views.
type LinkedRange struct {
	Range      string // "10 s – 20 s (10s)"
	Filters    string // the active filters, "CPU 5"; "" when none
	Wall       *WallRange
	FlameHref  string
	StacksHref string
}

// FlamePage shows the flame graph of a range (and, for a differential graph,
// of a second range to compare with).
type FlamePage struct {
	Layout
	Profile   subsecond.Profile
	Diff      bool
	Stacks    bool   // the stack chart above the flame graph
	StacksURL string // the stack chart of this view ("" on a differential page)
	FlameURL  string // the flame graph of this view ("" on a differential page)
	Range     string // "12.3–14.5 s (2.2 s)", as query.DisplayRange writes it
	// Wall is Range on the wall clock; nil when unknown.
	Wall *WallRange
	// Base and Target are the two sides of a differential graph, from the
	// baseline to the target.
	Base, Target DiffSide
	Filters      string // the active filters, "CPU 5 · comm gc"; "" when none
	Back         string // the profile page with the same filters
	BackLabel    string // the Back link's text; "" for "← heatmaps"
	// Unrecorded says how much of a host's range no capture recorded
	// ("3.2 s of this range were not recorded"); "" when all of it was.
	Unrecorded string
	// Notice says what the server changed from what the URL asked for
	// ("start -5 s is before the capture; showing from 0 s"); "" for
	// nothing.
	Notice  string
	Hidden  []Option // other view parameters kept when the search form is submitted
	Search  string
	Exports []Export // the graph's exports, as links
}

// DiffSide is one side of a differential graph: which host, capture and
// range it is.
type DiffSide struct {
	Host, HostHref string // the capture's host and its night
	Name, Href     string // the capture and its page
	Range          string // "12.3–14.5 s (2.2 s)", from the capture's T0
	Wall           *WallRange
}

// Export is a link to the flame graph written in one export format
// (flame.Formats); Download links save a file.
type Export struct {
	Name     string // the format: data-testid "export-<Name>"
	Label    string
	Href     string
	Download bool
}

// ErrorPage is an error shown as a page.
type ErrorPage struct {
	Layout
	Status  int
	Message string
}
