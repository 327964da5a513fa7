package fleet_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/fleet/fleetgen"
	"github.com/subsecond/subsecond/internal/pgtest"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
	"github.com/subsecond/subsecond/store/sqlite"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for the test's schema
)

var _ fleet.Source = (*store.Store)(nil)

// openStore returns a store of the end-to-end test: a SQLite file, or a
// PostgreSQL schema of its own (pgtest.Schema; the subtest is skipped
// without a server).
func openStore(t *testing.T, backend string) *store.Store {
	t.Helper()
	ctx := context.Background()
	switch backend {
	case "sqlite":
		s, err := sqlite.OpenStore(ctx, filepath.Join(t.TempDir(), "fleet.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s, err := postgres.OpenStore(ctx, pgtest.Schema(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// importFleet imports every capture of f as perf script text, with its
// host, labels and boot time as the recorder sends them, and the hosts'
// markers.
func importFleet(t *testing.T, s *store.Store, f fleetgen.Fleet) {
	t.Helper()
	ctx := context.Background()
	for _, c := range f.Captures() {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(f.Write(pw, c)) }()
		if _, _, err := s.Import(ctx, pr, store.ImportOptions{FileName: c.ID, Host: c.Host, Labels: c.Labels, Boot: c.Boot.UnixNano()}); err != nil {
			t.Fatalf("import %s: %v", c.ID, err)
		}
	}
	for h := range f.Hosts {
		if _, err := s.AddMarkers(ctx, fleetgen.HostName(h), f.HostMarkers(h)); err != nil {
			t.Fatal(err)
		}
	}
}

// same fails t unless a and b marshal to the same JSON (NaN as null).
func same(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, jb := jsonOf(t, a), jsonOf(t, b)
	if ja != jb {
		n := 0
		for n < min(len(ja), len(jb)) && ja[n] == jb[n] {
			n++
		}
		lo := max(0, n-200)
		t.Errorf("%s from the store differs from the generator's at byte %d:\nstore:     …%s…\ngenerator: …%s…", what, n, ja[lo:min(len(ja), n+200)], jb[lo:min(len(jb), n+200)])
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(nanFree(v))
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// nanFree returns v with its NaN and infinite floats (which JSON cannot
// hold) replaced by strings, through a generic copy.
func nanFree(v any) any {
	b, err := json.Marshal(v)
	if err == nil {
		var out any
		json.Unmarshal(b, &out)
		return out
	}
	switch x := v.(type) {
	case *fleet.Grid:
		rows := make([]any, len(x.Rows))
		for i, r := range x.Rows {
			vals := make([]any, len(r.Values))
			for j, v := range r.Values {
				vals[j] = floatOf(v)
			}
			rows[i] = []any{r.Host, r.Labels, r.Group, vals, r.Markers, r.Samples, floatOf(r.Share), floatOf(r.Peak), r.PeakAt}
		}
		return []any{x.From, x.To, x.Bucket, x.Measure, rows}
	case *fleet.SearchResult:
		hits := make([]any, len(x.Hosts))
		for i, h := range x.Hosts {
			spark := make([]any, len(h.Spark))
			for j, v := range h.Spark {
				spark[j] = floatOf(v)
			}
			hits[i] = []any{h.Host, h.Labels, h.Samples, h.Matched, floatOf(h.Share), floatOf(h.Peak), h.PeakAt, spark}
		}
		return []any{x.From, x.To, x.Bucket, x.Kind, x.Match, x.Names, hits, x.ByPeak}
	case *fleet.GroupReport:
		fs := make([]any, len(x.Findings))
		for i, d := range x.Findings {
			fs[i] = []any{d.Kind, d.Name, d.Group, floatOf(d.GroupShare), floatOf(d.RestShare), floatOf(d.Ratio), floatOf(d.P), floatOf(d.Q)}
		}
		return []any{x.Key, x.Groups, x.Tested, x.Permutations, x.Seed, fs}
	}
	return v
}

func floatOf(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "non-finite " + jsonFloat(v)
	}
	return math.Round(v*1e12) / 1e12
}

func jsonFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case v > 0:
		return "+Inf"
	}
	return "-Inf"
}

// TestStoreFleet imports the generated fleet (20 hosts in two zones, the
// leak planted in zone a) into a real SQLite file and a real PostgreSQL
// database, as `subsecond record` would send it, and checks that the
// views read from the store's fleet index give the answers the
// generator's own index gives, and the planted truth: the zone-a hosts
// first in the search, the leak named by the zone contrast (q < 0.01) and
// first in the uptime contrast of zone a (rho > 0.8).
func TestStoreFleet(t *testing.T) {
	f := fleetgen.Fleet{Hosts: 20, Leak: 4, Seed: 1}
	gen := f.Source()
	from, to := span(t, gen)
	ctx := context.Background()
	plantedFn := regexp.MustCompile("^" + fleetgen.Planted + "$")
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := openStore(t, backend)
			importFleet(t, s, f)

			labels, err := s.HostLabels(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := labels[fleetgen.HostName(0)]; !containsLabel(got, "zone", "a") || !containsLabel(got, subsecond.LabelKernel, "6.8.0-fleet") {
				t.Errorf("labels of %s: %v; want zone=a and the header's kernel=6.8.0-fleet", fleetgen.HostName(0), got)
			}

			opt := fleet.Options{From: from, To: to, Seed: 3}
			gm, err := fleet.Map(ctx, gen, opt)
			if err != nil {
				t.Fatal(err)
			}
			sm, err := fleet.Map(ctx, s, opt)
			if err != nil {
				t.Fatal(err)
			}
			same(t, "the map", sm, gm)

			sopt := opt
			sopt.Kind, sopt.Match = subsecond.NameFunction, plantedFn
			gs, err := fleet.Search(ctx, gen, sopt)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := fleet.Search(ctx, s, sopt)
			if err != nil {
				t.Fatal(err)
			}
			same(t, "the search", ss, gs)
			if len(ss.Hosts) != 20 {
				t.Fatalf("the search found %d hosts; want 20", len(ss.Hosts))
			}
			for i, h := range ss.Hosts[:10] {
				if !containsLabel(h.Labels, "zone", "a") {
					t.Errorf("host %d of the search is %s %v; want the 10 zone-a hosts first", i, h.Host, h.Labels)
				}
			}

			gopt := opt
			gopt.Group = "zone"
			gg, err := fleet.Groups(ctx, gen, gopt)
			if err != nil {
				t.Fatal(err)
			}
			sg, err := fleet.Groups(ctx, s, gopt)
			if err != nil {
				t.Fatal(err)
			}
			same(t, "the zone contrast", sg, gg)
			if len(sg.Findings) == 0 || sg.Findings[0].Q >= 0.01 || !strings.Contains(sg.Findings[0].Name, fleetgen.Planted) {
				t.Errorf("the zone contrast's first finding: %+v; want %s with q < 0.01", first(sg.Findings), fleetgen.Planted)
			}

			uopt := opt
			uopt.Labels = []subsecond.Label{{Key: "zone", Value: "a"}}
			su, err := fleet.Uptime(ctx, s, uopt)
			if err != nil {
				t.Fatal(err)
			}
			gu, err := fleet.Uptime(ctx, gen, uopt)
			if err != nil {
				t.Fatal(err)
			}
			same(t, "the uptime contrast", su, gu)
			if len(su.Findings) == 0 || su.Findings[0].Name != fleetgen.Planted || su.Findings[0].Rho <= 0.8 {
				t.Errorf("the uptime contrast's first finding in zone a: %+v; want %s with rho > 0.8", first(su.Findings), fleetgen.Planted)
			}
		})
	}
}

func first[T any](s []T) any {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}

func containsLabel(ls []subsecond.Label, k, v string) bool {
	for _, l := range ls {
		if l.Key == k && l.Value == v {
			return true
		}
	}
	return false
}
