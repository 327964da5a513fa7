package web

// HostRow is one host of the hosts page, ready to show.
type HostRow struct {
	Host     string
	Href     string
	Captures int
	Samples  int64
	Wall     *WallRange // the wall-clock span of its captures; nil when none has one
	Without  int        // captures without wall clock
}

// HostsPage lists the hosts of the stored captures.
type HostsPage struct {
	Layout
	Hosts []HostRow
}

// HostPage shows one host's night: the containers its script fills from
// the host API (ViewData.API), and the span and capture count as text.
type HostPage struct {
	Layout
	Host     string
	Captures int
	Wall     *WallRange // the wall-clock span of its captures; nil when none has one
	Without  int
}
