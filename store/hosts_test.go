package store_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// bootUnix is when the test's hosts booted, in Unix seconds: their
// default clock counts from it.
const bootUnix = 1796058000

// hostCapture returns a capture of host of 2 s from start (seconds on its
// clock) under the header lines given, seeded by seed.
func hostCapture(t *testing.T, host string, start float64, seed uint64, header ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# ========\n")
	for _, h := range header {
		b.WriteString("# " + h + "\n")
	}
	b.WriteString("# hostname : " + host + "\n# ========\n#\n")
	b.Write(genText(t, genConfig{CPUs: 2, Seconds: 2, Hz: 49, Seed: seed, Start: start}))
	return b.Bytes()
}

// capturedOn is the "# captured on" line perf writes for a capture whose
// last sample (on the boot clock) is at last seconds: the time of day
// just after it, to the second.
func capturedOn(last float64) string {
	return "captured on : " + time.Unix(int64(bootUnix+last)+1, 0).UTC().Format(time.ANSIC)
}

// importHosts stores captures of several hosts in every way a capture
// can lie on the wall clock, and returns how many it stored.
func importHosts(t *testing.T, s *store.Store) int {
	t.Helper()
	ref := func(clk float64) string {
		return fmt.Sprintf("reference time : x = %.6f (TOD) = %.9f (monotonic)", bootUnix+clk, clk)
	}
	captures := []struct {
		host   string
		start  float64
		header []string
	}{
		// Realtime: exact, one per 2 minutes, and one without samples' wall clock.
		{"alpha", bootUnix + 100, []string{"clockid : realtime"}},
		{"alpha", bootUnix + 220, []string{"clockid : realtime"}},
		{"alpha", 300, nil},
		// Estimates anchored on a capture of the same boot with perf's reference time.
		{"bravo", 1000, []string{capturedOn(1002)}},
		{"bravo", 1130, []string{capturedOn(1132)}},
		{"bravo", 1260, []string{ref(1260)}},
		{"bravo", 40, nil},
		// Estimates that agree with each other, and another boot's.
		{"charlie", 500, []string{capturedOn(502)}},
		{"charlie", 620, []string{capturedOn(622)}},
		{"charlie", 90000, []string{capturedOn(90002)}},
		// No wall clock at all.
		{"delta", 10, nil},
		{"delta", 20, nil},
		// Exact, perf's reference time.
		{"echo", 700, []string{ref(700)}},
		{"echo", 820, []string{ref(820)}},
	}
	for i, c := range captures {
		text := hostCapture(t, c.host, c.start, uint64(i+1), c.header...)
		if _, _, err := s.Import(context.Background(), bytes.NewReader(text), store.ImportOptions{FileName: fmt.Sprint("c", i)}); err != nil {
			t.Fatalf("import %s capture %d: %v", c.host, i, err)
		}
	}
	return len(captures)
}

// pagedHosts reads every page of limit hosts.
func pagedHosts(t *testing.T, s *store.Store, limit int) (hosts []timeline.Host, pages int) {
	t.Helper()
	after := ""
	for {
		page, next, err := timeline.HostPage(context.Background(), s, limit, after)
		if err != nil {
			t.Fatalf("HostPage(%d, %q): %v", limit, after, err)
		}
		if len(page) > limit || pages > 10 {
			t.Fatalf("HostPage(%d, %q) = %d hosts, page %d", limit, after, len(page), pages)
		}
		hosts, pages = append(hosts, page...), pages+1
		if next == "" {
			return hosts, pages
		}
		if next != page[len(page)-1].Host {
			t.Errorf("HostPage(%d, %q): next %q; want the page's last host %q", limit, after, next, page[len(page)-1].Host)
		}
		after = next
	}
}

// TestHostTotals: the host list totalled by the database, a page at a
// time, equals the one totalled in Go over every profile (timeline.Hosts):
// exact anchors, estimates anchored on a capture of the same boot,
// estimates agreeing with each other, captures without wall clock.
func TestHostTotals(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		n := importHosts(t, e.s)
		list, err := e.s.List(ctx)
		if err != nil || len(list) != n {
			t.Fatalf("List: %d profiles, %v; want %d", len(list), err, n)
		}
		want := timeline.Hosts(list)
		if len(want) != 5 || want[1].Approximate || want[1].End == 0 || !want[2].Approximate || want[3].End != 0 || want[3].Unanchored != 2 {
			t.Fatalf("timeline.Hosts = %+v; want 5 hosts, bravo exact (anchored on its reference), charlie approximate, delta without wall clock", want)
		}
		for _, limit := range []int{1, 2, 5, 100} {
			got, pages := pagedHosts(t, e.s, limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("pages of %d:\n%+v\nwant\n%+v", limit, got, want)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("pages of %d: %d; want %d", limit, pages, wantPages)
			}
		}
		// A cursor need not name a stored host: the page starts after it.
		page, next, err := timeline.HostPage(ctx, e.s, 2, "c")
		if err != nil || len(page) != 2 || page[0].Host != "charlie" || next != "delta" {
			t.Errorf(`HostPage(2, "c") = %v, %q, %v; want charlie, delta and next "delta"`, timeline.HostNames(page), next, err)
		}
		if page, next, err := timeline.HostPage(ctx, e.s, 2, "zulu"); err != nil || len(page) != 0 || next != "" {
			t.Errorf(`HostPage(2, "zulu") = %v, %q, %v; want nothing`, page, next, err)
		}

		// Profiles stored before migration 0012 get their columns when
		// the database is opened again.
		if _, err := e.db.Exec(`UPDATE profiles SET wall_source = NULL, wall_start = 0, wall_end = 0, wall_approx = 0`); err != nil {
			t.Fatal(err)
		}
		b, err := reopen(e.name, e.where)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		got, _ := pagedHosts(t, store.New(b, store.Options{}), 2)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("after filling the columns again:\n%+v\nwant\n%+v", got, want)
		}
	})
}

// TestHostLabelsOf: a page's labels are those of its hosts alone, as
// HostLabels gives them.
func TestHostLabelsOf(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		importHosts(t, e.s)
		for _, h := range []string{"alpha", "bravo", "delta"} {
			if err := e.s.SetHostLabels(ctx, h, []subsecond.Label{{Key: "zone", Value: h[:1]}, {Key: "rack", Value: strings.ToUpper(h)}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		all, err := e.s.HostLabels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.s.HostLabelsOf(ctx, []string{"bravo", "echo", "nowhere"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]subsecond.Label{}
		for _, h := range []string{"bravo", "echo"} {
			if ls, ok := all[h]; ok {
				want[h] = ls
			}
		}
		if !reflect.DeepEqual(got, want) || len(want["bravo"]) < 2 || len(all) < 3 {
			t.Errorf("HostLabelsOf(bravo, echo, nowhere) = %v; want %v", got, want)
		}
		if got, err := e.s.HostLabelsOf(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("HostLabelsOf() = %v, %v; want none", got, err)
		}
	})
}
