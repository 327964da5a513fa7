package fleet_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/fleet/fleetgen"
)

var _ fleet.Source = (*fleetgen.Source)(nil)

// span returns the range of f's captures: the start of the first to the
// end of the last, whole seconds.
func span(t *testing.T, src *fleetgen.Source) (from, to int64) {
	t.Helper()
	caps, err := src.IndexedCaptures(context.Background(), math.MinInt64, math.MaxInt64)
	if err != nil || len(caps) == 0 {
		t.Fatalf("IndexedCaptures: %d, %v", len(caps), err)
	}
	from, to = math.MaxInt64, math.MinInt64
	for _, c := range caps {
		from = min(from, c.Start)
		to = max(to, c.Start+int64(len(c.Slots))*subsecond.IndexSlot)
	}
	return from, to
}

// planted is the fleet of the tests: 20 hosts, the leak on the 10 of zone a.
func planted(seed uint64) fleetgen.Fleet { return fleetgen.Fleet{Hosts: 20, Leak: 4, Seed: seed} }

var plantedRE = regexp.MustCompile("^" + fleetgen.Planted + "$")

func TestSearchPlanted(t *testing.T) {
	for seed := range uint64(3) {
		f := planted(seed)
		src := f.Source()
		from, to := span(t, src)
		res, err := fleet.Search(context.Background(), src, fleet.Options{From: from, To: to, Kind: subsecond.NameFunction, Match: plantedRE})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hosts) != 20 || !slices.Equal(res.Names, []string{fleetgen.Planted}) {
			t.Fatalf("seed %d: %d hosts, names %v; want 20, [%s]", seed, len(res.Hosts), res.Names, fleetgen.Planted)
		}
		for i, h := range res.Hosts {
			zone := "b"
			if i < 10 {
				zone = "a"
			}
			if !slices.Contains(h.Labels, subsecond.Label{Key: "zone", Value: zone}) {
				t.Errorf("seed %d: host %d of the search is %s %v with share %.4f; want zone %s", seed, i, h.Host, h.Labels, h.Share, zone)
			}
			if i > 0 && (h.Share > res.Hosts[i-1].Share) {
				t.Errorf("seed %d: host %d's share %v above the one before it", seed, i, h.Share)
			}
		}
		for i := 1; i < len(res.ByPeak); i++ {
			if res.Hosts[res.ByPeak[i]].Peak > res.Hosts[res.ByPeak[i-1]].Peak {
				t.Errorf("seed %d: ByPeak out of order at %d", seed, i)
			}
		}
	}
}

func TestGroupsPlanted(t *testing.T) {
	f := planted(1)
	src := f.Source()
	from, to := span(t, src)
	rep, err := fleet.Groups(context.Background(), src, fleet.Options{From: from, To: to, Group: "zone", Seed: 5, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if want := []fleet.GroupSize{{Value: "a", Hosts: 10}, {Value: "b", Hosts: 10}}; !slices.Equal(rep.Groups, want) {
		t.Errorf("Groups = %v; want %v", rep.Groups, want)
	}
	if rep.Tested != len(rep.Findings) || rep.Tested < 30 {
		t.Errorf("%d tested, %d findings; want the same, at least 30", rep.Tested, len(rep.Findings))
	}
	i := slices.IndexFunc(rep.Findings, func(d fleet.Difference) bool {
		return d.Kind == subsecond.NameFunction && d.Name == fleetgen.Planted
	})
	if i < 0 {
		t.Fatalf("%s not tested", fleetgen.Planted)
	}
	d := rep.Findings[i]
	t.Logf("%s: group %s %.4f against %.4f, ratio %.1f, p %.5f, q %.5f", d.Name, d.Group, d.GroupShare, d.RestShare, d.Ratio, d.P, d.Q)
	if d.Group != "a" || d.Q >= 0.01 || d.GroupShare <= d.RestShare || math.Abs(d.Ratio-d.GroupShare/d.RestShare) > 1e-12 {
		t.Errorf("%+v; want group a, higher, q < 0.01", d)
	}
	if rep.Findings[0].Q > d.Q {
		t.Errorf("first finding %+v has q above the planted one's", rep.Findings[0])
	}
}

// rise returns the planted function's finding in rep, failing when it
// does not rank first (names counting exactly its samples may tie).
func rise(t *testing.T, rep *fleet.UptimeReport) fleet.Rise {
	t.Helper()
	i := slices.IndexFunc(rep.Findings, func(r fleet.Rise) bool {
		return r.Kind == subsecond.NameFunction && r.Name == fleetgen.Planted
	})
	if i < 0 {
		t.Fatalf("%s not among the findings", fleetgen.Planted)
	}
	r := rep.Findings[i]
	for _, o := range rep.Findings[:i] {
		if o.Q != r.Q || o.P != r.P || o.Rho != r.Rho {
			t.Errorf("%s %s (q %v, rho %v) ranks above the planted function (q %v, rho %v)", o.Kind, o.Name, o.Q, o.Rho, r.Q, r.Rho)
		}
	}
	return r
}

// TestUptimePlanted runs the uptime contrast on every host, where the zone-b
// hosts (no leak) dilute the correlation, and on zone a alone
// (opt.Labels), where the rise is the whole story.
func TestUptimePlanted(t *testing.T) {
	f := planted(2)
	src := f.Source()
	from, to := span(t, src)
	opt := fleet.Options{From: from, To: to, Seed: 9, Limit: 1000}
	all, err := fleet.Uptime(context.Background(), src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if all.Hosts != 20 || all.Units != 20*3*3 || all.NoBoot != 0 {
		t.Errorf("%d hosts, %d units, %d without boot; want 20, 180, 0", all.Hosts, all.Units, all.NoBoot)
	}
	r := rise(t, all)
	t.Logf("all hosts: rho %.3f, p %.5f, q %.5f, share %.4f → %.4f", r.Rho, r.P, r.Q, r.LowShare, r.HighShare)
	if r.Q >= 0.01 || r.Rho <= 0 || r.HighShare <= r.LowShare {
		t.Errorf("all hosts: %+v; want q < 0.01, rho > 0, rising", r)
	}
	opt.Labels = []subsecond.Label{{Key: "zone", Value: "a"}}
	za, err := fleet.Uptime(context.Background(), src, opt)
	if err != nil {
		t.Fatal(err)
	}
	r = rise(t, za)
	t.Logf("zone a: rho %.3f, p %.5f, q %.5f, share %.4f → %.4f", r.Rho, r.P, r.Q, r.LowShare, r.HighShare)
	if za.Hosts != 10 || r.Q >= 0.01 || r.Rho <= 0.8 {
		t.Errorf("zone a: %d hosts, %+v; want 10, q < 0.01, rho > 0.8", za.Hosts, r)
	}
}

func TestOptionsInvalid(t *testing.T) {
	src := fleetgen.Fleet{Hosts: 2, Seed: 1}.Source()
	ctx := context.Background()
	ok := fleet.Options{From: 1, To: 2, Group: "zone", Match: plantedRE}
	for _, c := range []struct {
		name string
		edit func(*fleet.Options)
	}{
		{"from = to", func(o *fleet.Options) { o.To = o.From }},
		{"from > to", func(o *fleet.Options) { o.From = 3 }},
		{"buckets", func(o *fleet.Options) { o.Buckets = fleet.MaxBuckets + 1 }},
		{"negative buckets", func(o *fleet.Options) { o.Buckets = -1 }},
		{"few permutations", func(o *fleet.Options) { o.Permutations = fleet.MinPermutations - 1 }},
		{"many permutations", func(o *fleet.Options) { o.Permutations = fleet.MaxPermutations + 1 }},
		{"candidates", func(o *fleet.Options) { o.Candidates = fleet.MaxCandidates + 1 }},
		{"kind", func(o *fleet.Options) { o.Kind = 9 }},
	} {
		opt := ok
		c.edit(&opt)
		for name, err := range views(ctx, src, opt) {
			if !errors.Is(err, subsecond.ErrInvalid) {
				t.Errorf("%s: %s: %v; want ErrInvalid", c.name, name, err)
			}
		}
	}
	if _, err := fleet.Search(ctx, src, fleet.Options{From: 1, To: 2}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Search without Match: %v; want ErrInvalid", err)
	}
	if _, err := fleet.Groups(ctx, src, fleet.Options{From: 1, To: 2}); !errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("Groups without Group: %v; want ErrInvalid", err)
	}
	for name, err := range views(ctx, src, ok) {
		if err != nil {
			t.Errorf("%s of valid options: %v", name, err)
		}
	}
}

// views runs the four views with opt and returns their errors by name.
func views(ctx context.Context, src fleet.Source, opt fleet.Options) map[string]error {
	_, m := fleet.Map(ctx, src, opt)
	_, s := fleet.Search(ctx, src, opt)
	_, g := fleet.Groups(ctx, src, opt)
	_, u := fleet.Uptime(ctx, src, opt)
	return map[string]error{"Map": m, "Search": s, "Groups": g, "Uptime": u}
}

func TestCancel(t *testing.T) {
	src := planted(1).Source()
	from, to := span(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt := fleet.Options{From: from, To: to, Group: "zone"}
	for name, err := range map[string]error{"Groups": second(fleet.Groups(ctx, src, opt)), "Uptime": second(fleet.Uptime(ctx, src, opt))} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context: %v; want context.Canceled", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestClean checks that the planted fleet's shape without the leak yields
// no finding with q < 0.05 (TestCalibration bounds how often a clean fleet
// may, by chance: about one in twenty).
func TestClean(t *testing.T) {
	for seed := range uint64(3) {
		f := planted(seed)
		f.Leak = 0
		src := f.Source()
		from, to := span(t, src)
		opt := fleet.Options{From: from, To: to, Group: "zone", Seed: seed, Limit: 1}
		g, err := fleet.Groups(context.Background(), src, opt)
		if err != nil {
			t.Fatal(err)
		}
		if g.Tested == 0 || len(g.Findings) > 0 && g.Findings[0].Q < 0.05 {
			t.Errorf("seed %d: groups tested %d, found %+v", seed, g.Tested, g.Findings)
		}
		u, err := fleet.Uptime(context.Background(), src, opt)
		if err != nil {
			t.Fatal(err)
		}
		if u.Tested == 0 || len(u.Findings) > 0 && u.Findings[0].Q < 0.05 {
			t.Errorf("seed %d: uptime tested %d, found %+v", seed, u.Tested, u.Findings)
		}
	}
}
