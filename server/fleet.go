package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// Fleet is what the fleet's views and the hosts' labels read and write:
// the store's fleet index, labels and markers (fleet.Source) and
// SetHostLabels, which checks each label and bounds a host's labels.
type Fleet interface {
	fleet.Source
	SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string) error
	// HostLabelsOf is HostLabels for the given hosts alone.
	HostLabelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, error)
}

// maxLabelBody bounds a POST of labels, in bytes.
const maxLabelBody = 64 << 10

// errNoFleet answers the fleet's routes on a server that keeps no index.
var errNoFleet = errorf(subsecond.ErrNotFound, "this server keeps no fleet index")

// labelsOf returns the labels of hosts, none when the server keeps none.
func (s *Server) labelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, error) {
	if s.fleet == nil {
		return nil, nil
	}
	return s.fleet.HostLabelsOf(ctx, hosts)
}

// setHostLabels handles POST /api/hosts/{host}/labels: a JSON body
// {"set": ["key=value", …], "remove": ["key", …]} sets and removes labels
// of the host in one transaction, each checked as the label parameter is
// (400 naming set[i] or remove[i]). Answers {"host", "labels"}: the
// host's labels after, set and derived. Needs the token like uploads.
func (s *Server) setHostLabels(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.error(w, r, err)
		return
	}
	if s.fleet == nil {
		s.error(w, r, errNoFleet)
		return
	}
	host, err := hostParam(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var in struct {
		Set    []string `json:"set"`
		Remove []string `json:"remove"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLabelBody)).Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			err = fmt.Errorf(`body: not the JSON {"set": ["key=value"], "remove": ["key"]}: %w`, subsecond.ErrInvalid)
		}
		s.error(w, r, err)
		return
	}
	set, err := query.ParseLabels("set", in.Set)
	if err != nil {
		s.error(w, r, err)
		return
	}
	for i, k := range in.Remove {
		if why := subsecond.LabelProblem(subsecond.Label{Key: k, Value: "-"}); why != "" {
			s.error(w, r, query.Invalidf(fmt.Sprintf("remove[%d]", i), "%s", why))
			return
		}
	}
	if err := s.fleet.SetHostLabels(r.Context(), host, set, in.Remove); err != nil {
		s.error(w, r, err)
		return
	}
	all, err := s.fleet.HostLabels(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	ls := all[host]
	if ls == nil {
		ls = []subsecond.Label{}
	}
	s.json(w, http.StatusOK, map[string]any{"host": host, "labels": ls})
}

// fleetScope is what every fleet view starts from: its query, the hosts
// with captures and their labels, and the options for package fleet.
type fleetScope struct {
	q      *Query
	hosts  []timeline.Host
	labels map[string][]subsecond.Label
	opt    fleet.Options
}

// fleetScope reads the fleet views' parameters (the query table's) and
// the hosts, defaults the range to the last 24 hours of the hosts' data
// (fleet.Range) and bounds the grid before any index is read: hosts ×
// buckets within the server's cell limit.
func (s *Server) fleetScope(r *http.Request) (*fleetScope, error) {
	if s.fleet == nil {
		return nil, errNoFleet
	}
	q, err := query.Parse(r.URL.Query())
	if err != nil {
		return nil, err
	}
	hosts, err := timeline.AllHosts(r.Context(), s.store)
	if err != nil {
		return nil, err
	}
	labels, err := s.fleet.HostLabels(r.Context())
	if err != nil {
		return nil, err
	}
	sc := &fleetScope{q: q, hosts: hosts, labels: labels}
	if sc.opt, err = fleet.OptionsOf(q, sc.hosts); err != nil {
		return nil, err
	}
	n := 0
	for _, h := range sc.hosts {
		if hasLabels(labels[h.Host], q.Labels) {
			n++
		}
	}
	if cells := int64(n) * int64(q.Buckets); cells > s.maxCells {
		return nil, query.Invalidf("buckets", "%d hosts × %d buckets = %d cells, more than this server's limit of %d; use buckets ≤ %d, or fewer hosts (label)",
			n, q.Buckets, cells, s.maxCells, max(1, s.maxCells/int64(max(n, 1))))
	}
	return sc, nil
}

// hasLabels reports whether have holds every label of want.
func hasLabels(have, want []subsecond.Label) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// tooLarge adds to a fleet view's ErrTooLarge how to narrow it.
func tooLarge(err error) error {
	if errors.Is(err, subsecond.ErrTooLarge) {
		return fmt.Errorf("%s; narrow the range (from, to) or the hosts (label): %w", query.Message(err), subsecond.ErrTooLarge)
	}
	return err
}

// fleetMap handles GET /api/fleet?from=&to=&label=&group=&buckets=&function=|comm=|comm_regex=|stack=:
// the hosts × time grid (web.FleetMap): each cell the busiest core's
// system share, or with a search the matched samples' share.
func (s *Server) fleetMap(w http.ResponseWriter, r *http.Request) {
	if s.cachedFleet(w, r) {
		return
	}
	sc, err := s.fleetScope(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.fleetJSON(w, r, func(ctx context.Context) (any, error) {
		g, err := fleet.Map(ctx, s.fleet, sc.opt)
		if err != nil {
			return nil, tooLarge(err)
		}
		return web.NewFleetMap(g, sc.q.Group, web.LabelKeys(sc.labels)), nil
	})
}

// fleetSearch handles GET /api/fleet/search?function=|comm=|comm_regex=|stack=&from=&to=&label=&buckets=:
// the hosts ranked by the share of the names searched, each with its
// sparkline (web.FleetSearch). A search is required (400 naming function).
func (s *Server) fleetSearch(w http.ResponseWriter, r *http.Request) {
	if s.cachedFleet(w, r) {
		return
	}
	sc, err := s.fleetScope(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if sc.opt.Match == nil {
		s.error(w, r, query.Invalidf("function", "the search needs one of function, comm, comm_regex and stack"))
		return
	}
	s.fleetJSON(w, r, func(ctx context.Context) (any, error) {
		res, err := fleet.Search(ctx, s.fleet, sc.opt)
		if err != nil {
			return nil, tooLarge(err)
		}
		return web.NewFleetSearch(res), nil
	})
}

// fleetGroups handles GET /api/fleet/groups?group=&from=&to=&label=&permutations=&seed=&limit=:
// the names whose share differs between the groups of label key group
// (web.FleetGroups). The group is required (400 naming it).
func (s *Server) fleetGroups(w http.ResponseWriter, r *http.Request) {
	if s.cachedFleet(w, r) {
		return
	}
	sc, err := s.fleetScope(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if sc.q.Group == "" {
		s.error(w, r, query.Invalidf("group", "the group contrast needs a label key to compare the values of"))
		return
	}
	s.fleetJSON(w, r, func(ctx context.Context) (any, error) {
		rep, err := s.fleetTables.Groups(ctx, s.fleet, sc.opt)
		if err != nil {
			return nil, tooLarge(err)
		}
		return web.NewFleetGroups(rep, r.URL.Query()), nil
	})
}

// fleetUptime handles GET /api/fleet/uptime?from=&to=&label=&permutations=&seed=&limit=:
// the names whose share rises or falls with the hosts' uptime
// (web.FleetUptime).
func (s *Server) fleetUptime(w http.ResponseWriter, r *http.Request) {
	if s.cachedFleet(w, r) {
		return
	}
	sc, err := s.fleetScope(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.fleetJSON(w, r, func(ctx context.Context) (any, error) {
		rep, err := s.fleetTables.Uptime(ctx, s.fleet, sc.opt)
		if err != nil {
			return nil, tooLarge(err)
		}
		return web.NewFleetUptime(rep, r.URL.Query()), nil
	})
}

// fleetPage handles GET /fleet?label=&group=&function=|comm=|comm_regex=|stack=&from=&to=:
// the fleet's map, search and contrasts, drawn by the page's script from
// the fleet API, with the group-by picker and the label chips.
func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	if s.fleet == nil {
		s.error(w, r, errNoFleet)
		return
	}
	v := r.URL.Query()
	q, err := query.Parse(v)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if _, _, err := q.FleetMatch(); err != nil {
		s.error(w, r, err)
		return
	}
	hosts, err := timeline.AllHosts(r.Context(), s.store)
	if err != nil {
		s.error(w, r, err)
		return
	}
	labels, err := s.fleet.HostLabels(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	page := web.FleetPage{Layout: s.layout("Fleet", web.ViewData{Page: "fleet", API: string(link.FleetAPI)}, r),
		Keys: web.LabelKeys(labels), Group: q.Group, Hosts: len(hosts)}
	for _, name := range query.FleetSearchParams {
		if x := v.Get(name); x != "" {
			page.Kind, page.Search = name, x
		}
	}
	// keeping returns the page's link with the labels keep keeps.
	keeping := func(keep func(subsecond.Label) bool) string {
		out := url.Values{}
		for k, vs := range v {
			if k != "label" {
				out[k] = vs
			}
		}
		for _, l := range q.Labels {
			if keep(l) {
				out.Add("label", l.String())
			}
		}
		return link.FleetPage.With(out)
	}
	for _, l := range q.Labels {
		page.Labels = append(page.Labels, web.FleetChip{Label: l, Remove: keeping(func(x subsecond.Label) bool { return x != l })})
	}
	if len(q.Labels) > 0 {
		page.Clear = keeping(func(subsecond.Label) bool { return false })
	}
	s.render(w, r, web.Fleet(page))
}
