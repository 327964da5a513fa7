package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet/fleetgen"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
)

// bruteIndex is a capture's fleet index computed from its decoded samples
// alone: per slot the totals and peak core, per name the counts per slot.
type bruteIndex struct {
	slots []subsecond.SlotTotals
	names map[subsecond.NameKind]map[string][]int64
}

// bruteForce computes c's fleet index sample by sample, with the one
// definition of a sample's classes (subsecond.ClassesOf).
func bruteForce(c *subsecond.Capture) bruteIndex {
	cl := subsecond.ClassesOf(c)
	t0 := c.Profile.T0()
	smp := &c.Samples
	var last int64
	for i := range smp.Len() {
		if smp.Event[i] == 0 && smp.Time[i] != subsecond.NoTime {
			last = max(last, (smp.Time[i]-t0)/subsecond.IndexSlot)
		}
	}
	b := bruteIndex{slots: make([]subsecond.SlotTotals, last+1), names: map[subsecond.NameKind]map[string][]int64{
		subsecond.NameComm: {}, subsecond.NameFunction: {}, subsecond.NameEdge: {}}}
	add := func(k subsecond.NameKind, name string, slot int64) {
		v := b.names[k][name]
		if v == nil {
			v = make([]int64, len(b.slots))
			b.names[k][name] = v
		}
		v[slot]++
	}
	type cpuSec struct {
		sec int64
		cpu int32
	}
	perCPU := map[cpuSec]*[2]int64{}
	var frames []int32
	for i := range smp.Len() {
		if smp.Event[i] != 0 || smp.Time[i] == subsecond.NoTime {
			continue
		}
		slot := (smp.Time[i] - t0) / subsecond.IndexSlot
		busy, sys := cl.Nodes[smp.Stack[i]].Time(cl.Idle(i))
		b.slots[slot].Count(busy, sys)
		k := cpuSec{subsecond.FloorSecond(smp.Time[i]), smp.CPU[i]}
		if perCPU[k] == nil {
			perCPU[k] = new([2]int64)
		}
		perCPU[k][0]++
		if sys {
			perCPU[k][1]++
		}
		add(subsecond.NameComm, c.Strings[smp.Comm[i]], slot)
		frames = c.Stack(frames[:0], smp.Stack[i])
		seen := map[string]bool{}
		for _, f := range frames {
			seen[c.Strings[c.Frames[f].Symbol]] = true
		}
		for f := range seen {
			add(subsecond.NameFunction, f, slot)
		}
		edges := map[string]bool{}
		for j := len(frames) - 1; j > 0; j-- {
			edges[c.Strings[c.Frames[frames[j]].Symbol]+";"+c.Strings[c.Frames[frames[j-1]].Symbol]] = true
		}
		for e := range edges {
			add(subsecond.NameEdge, e, slot)
		}
	}
	for k, n := range perCPU {
		if n[0] < subsecond.MinPeakSamples {
			continue
		}
		s := &b.slots[(k.sec-t0)/subsecond.IndexSlot]
		s.PeakCore = max(s.PeakCore, float64(n[1])/float64(n[0]))
	}
	return b
}

// trimZeros returns v without its trailing zeros.
func trimZeros(v []int64) []int64 {
	for len(v) > 0 && v[len(v)-1] == 0 {
		v = v[:len(v)-1]
	}
	return v
}

// wallSpan returns the wall-clock range of p's slots.
func wallSpan(p *subsecond.Profile) (int64, int64) {
	start := p.Wall.Wall(p.T0())
	return start, start + p.End - p.T0() + subsecond.IndexSlot
}

// checkIndex fails unless the store's fleet index of profile p equals the
// one computed by brute force from its samples.
func checkIndex(t *testing.T, s *store.Store, p *subsecond.Profile) {
	t.Helper()
	ctx := context.Background()
	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteForce(c)
	from, to := wallSpan(p)
	caps, err := s.IndexedCaptures(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(caps, func(ic subsecond.IndexedCapture) bool { return ic.ID == p.ID })
	if i < 0 {
		t.Fatalf("IndexedCaptures(%d, %d) = %d captures without %s", from, to, len(caps), p.ID)
	}
	ic := caps[i]
	if ic.Start != p.Wall.Wall(p.T0()) || ic.Host != p.Host || ic.Kernel != p.Meta.OSRelease || ic.CPUs != p.Meta.NrCPUs {
		t.Errorf("indexed capture %+v; want start %d host %s kernel %s cpus %d", ic, p.Wall.Wall(p.T0()), p.Host, p.Meta.OSRelease, p.Meta.NrCPUs)
	}
	if !slices.Equal(ic.Slots, want.slots) {
		t.Errorf("slots:\n got %+v\nwant %+v", ic.Slots, want.slots)
	}
	// Totals of every name, then per-slot counts through NameCounts, a
	// few hundred names at a time.
	totals, err := s.NameTotals(ctx, subsecond.TotalsQuery{From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	gotTotals := map[subsecond.NameKind]map[string]int64{}
	for _, nc := range totals {
		if nc.Capture != p.ID {
			continue
		}
		if gotTotals[nc.Kind] == nil {
			gotTotals[nc.Kind] = map[string]int64{}
		}
		gotTotals[nc.Kind][nc.Name] = nc.Total()
	}
	for kind, names := range want.names {
		if len(gotTotals[kind]) != len(names) {
			t.Errorf("%s: %d names indexed; want %d", kind, len(gotTotals[kind]), len(names))
		}
		var list []string
		for name, v := range names {
			var sum int64
			for _, n := range v {
				sum += n
			}
			if gotTotals[kind][name] != sum {
				t.Errorf("%s %q: total %d; want %d", kind, name, gotTotals[kind][name], sum)
			}
			list = append(list, name)
		}
		slices.Sort(list)
		for len(list) > 0 {
			batch := list[:min(len(list), 300)]
			list = list[len(batch):]
			quoted := make([]string, len(batch))
			for i, n := range batch {
				quoted[i] = regexp.QuoteMeta(n)
			}
			re := regexp.MustCompile("^(?:" + strings.Join(quoted, "|") + ")$")
			counts, err := s.NameCounts(ctx, kind, re, from, to)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]int64{}
			for _, nc := range counts {
				if nc.Capture == p.ID {
					got[nc.Name] = nc.Slots
				}
			}
			for _, n := range batch {
				if w := trimZeros(names[n]); !slices.Equal(got[n], w) {
					t.Errorf("%s %q: slots %v; want %v", kind, n, got[n], w)
				}
			}
		}
	}
}

// importFile imports the capture at path (plain, gzip or zstd) into s.
func importFile(t *testing.T, s *store.Store, path string, opt store.ImportOptions) *subsecond.Profile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if opt.FileName == "" {
		opt.FileName = filepath.Base(path)
	}
	p, _, err := s.Import(context.Background(), bytes.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFleetIndexBruteForce: the fleet index written at import holds the
// counts computed sample by sample from the stored capture: the bundled
// incident (96 CPUs), and a real capture with deep, recursive stacks.
func TestFleetIndexBruteForce(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		p, _, err := e.s.Import(context.Background(), sampledata.IncidentCompressed(), store.ImportOptions{FileName: "incident.perf"})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Wall.Known() {
			t.Fatal("the incident has no wall clock")
		}
		indexed(t, e.s)
		checkIndex(t, e.fresh(), p)
		real := importFile(t, e.s, filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz"), store.ImportOptions{})
		indexed(t, e.s)
		checkIndex(t, e.fresh(), real)
	})
}

// TestFleetIndexNamesInDictionary: a store whose cache of the names'
// dictionary is empty (a second process, a restarted server) imports a
// capture whose names the dictionary holds in part: it finds those, adds
// the rest, and its index holds the counts computed sample by sample. On
// SQLite the dictionary's IDs run from 1 without a gap.
func TestFleetIndexNamesInDictionary(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		other, err := reopen(e.name, e.where)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		dir := filepath.Join("..", "sample-data")
		importFile(t, e.s, filepath.Join(dir, "real-mixed-2cpu-5s.perf.txt.gz"), store.ImportOptions{})
		indexed(t, e.s)
		var before int
		e.db.QueryRow("SELECT count(*) FROM fleet_names").Scan(&before)
		s2 := store.New(other, store.Options{})
		p := importFile(t, s2, filepath.Join(dir, "real-mixed-2cpu-12s.perf.txt.gz"), store.ImportOptions{})
		indexed(t, s2)
		checkIndex(t, e.fresh(), p)
		var n, top int
		if err := e.db.QueryRow("SELECT count(*), max(id) FROM fleet_names").Scan(&n, &top); err != nil {
			t.Fatal(err)
		}
		if n <= before || before == 0 {
			t.Errorf("the dictionary holds %d names after the second import, %d before; want more, and some before", n, before)
		}
		if e.name == "sqlite" && top != n {
			t.Errorf("the dictionary's largest ID is %d, with %d names; want them equal", top, n)
		}
	})
}

// indexed waits until s has written the fleet index of every capture it
// imported.
func indexed(t testing.TB, s *store.Store) {
	t.Helper()
	if err := s.Indexed(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fleetRows counts the rows of the fleet index's tables.
func (e *env) fleetRows() int {
	e.t.Helper()
	total := 0
	for _, tb := range []string{"fleet_captures", "fleet_counts", "host_labels"} {
		var n int
		if err := e.db.QueryRow("SELECT count(*) FROM " + tb).Scan(&n); err != nil {
			e.t.Fatalf("count %s: %v", tb, err)
		}
		total += n
	}
	return total
}

// TestFleetIndexAtomic: a failed import (strict mode's error after many
// chunks were encoded, a cancelled context) leaves no index rows and no
// labels, and Delete removes a profile's index.
func TestFleetIndexAtomic(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		var buf bytes.Buffer
		if _, err := genPerf(&buf, genConfig{CPUs: 4, Seconds: 30, Hz: 99, Seed: 3}); err != nil {
			t.Fatal(err)
		}
		text := "# captured on    : Tue Mar 11 02:14:07 2025\n" + buf.String()
		labels := []subsecond.Label{{Key: "zone", Value: "a"}}
		_, _, err := e.s.Import(context.Background(), strings.NewReader(text+"\nthis is no sample\n"),
			store.ImportOptions{Strict: true, Labels: labels})
		if err == nil {
			t.Fatal("strict import of a malformed record succeeded")
		}
		if n := e.fleetRows(); n != 0 {
			t.Errorf("after a failed import: %d fleet rows; want 0", n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		_, _, err = e.s.Import(ctx, strings.NewReader(text), store.ImportOptions{Labels: labels, Progress: func(int64) { cancel() }})
		if err == nil {
			t.Fatal("import cancelled as it read succeeded")
		}
		if n := e.fleetRows(); n != 0 {
			t.Errorf("after a cancelled import: %d fleet rows; want 0", n)
		}
		// A commit that fails after the index was written (the host's
		// labels would pass MaxLabels) takes the index with it.
		var full []subsecond.Label
		for i := range subsecond.MaxLabels {
			full = append(full, subsecond.Label{Key: fmt.Sprintf("k%d", i), Value: "v"})
		}
		if err := e.s.SetHostLabels(context.Background(), subsecond.UnknownHost, full, nil); err != nil {
			t.Fatal(err)
		}
		_, _, err = e.s.Import(context.Background(), strings.NewReader(text), store.ImportOptions{Labels: labels})
		if !errors.Is(err, subsecond.ErrInvalid) {
			t.Fatalf("import passing MaxLabels: %v; want ErrInvalid", err)
		}
		if n := e.fleetRows(); n != subsecond.MaxLabels {
			t.Errorf("after a failed commit: %d fleet rows; want the %d labels set before", n, subsecond.MaxLabels)
		}
		if err := e.s.SetHostLabels(context.Background(), subsecond.UnknownHost, nil, slices.Collect(func(yield func(string) bool) {
			for _, l := range full {
				yield(l.Key)
			}
		})); err != nil {
			t.Fatal(err)
		}
		p, _, err := e.s.Import(context.Background(), strings.NewReader(text), store.ImportOptions{Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		indexed(t, e.s)
		if n := e.fleetRows(); n < 3 {
			t.Errorf("after an import: %d fleet rows; want a capture, its names and a label", n)
		}
		checkIndex(t, e.s, p)
		if err := e.s.Delete(context.Background(), p.ID); err != nil {
			t.Fatal(err)
		}
		if n := e.fleetRows(); n != 1 {
			t.Errorf("after Delete: %d fleet rows; want the host's label alone", n)
		}
	})
}

// TestHostLabels: labels are checked, set, replaced and removed; derived
// labels come from the host's newest capture unless set by hand.
func TestHostLabels(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, sampledata.IncidentCompressed(), store.ImportOptions{FileName: "incident.perf",
			Labels: []subsecond.Label{{Key: "zone", Value: "a"}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.s.HostLabels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []subsecond.Label{{Key: subsecond.LabelCPUModel, Value: p.Meta.CPUDesc},
			{Key: subsecond.LabelCPUs, Value: fmt.Sprint(p.Meta.NrCPUs)}, {Key: subsecond.LabelKernel, Value: p.Meta.OSRelease},
			{Key: "zone", Value: "a"}}
		if !slices.Equal(got[p.Host], want) {
			t.Errorf("HostLabels()[%s] = %v; want %v", p.Host, got[p.Host], want)
		}
		err = e.s.SetHostLabels(ctx, p.Host, []subsecond.Label{{Key: "zone", Value: "b"}, {Key: subsecond.LabelKernel, Value: "custom"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.s.SetHostLabels(ctx, p.Host, nil, []string{"zone"}); err != nil {
			t.Fatal(err)
		}
		got, _ = e.s.HostLabels(ctx)
		want = []subsecond.Label{{Key: subsecond.LabelCPUModel, Value: p.Meta.CPUDesc},
			{Key: subsecond.LabelCPUs, Value: fmt.Sprint(p.Meta.NrCPUs)}, {Key: subsecond.LabelKernel, Value: "custom"}}
		if !slices.Equal(got[p.Host], want) {
			t.Errorf("after setting kernel and removing zone: %v; want %v", got[p.Host], want)
		}
		for _, bad := range []subsecond.Label{{Key: "Zone", Value: "a"}, {Key: "zone", Value: ""}, {Key: "z one", Value: "a"},
			{Key: "zone", Value: "a\nb"}} {
			err := e.s.SetHostLabels(ctx, p.Host, []subsecond.Label{bad}, nil)
			if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), bad.Key) {
				t.Errorf("SetHostLabels(%q) = %v; want ErrInvalid naming it", bad, err)
			}
		}
		var many []subsecond.Label
		for i := range subsecond.MaxLabels {
			many = append(many, subsecond.Label{Key: fmt.Sprintf("k%d", i), Value: "v"})
		}
		// The kernel label set above makes MaxLabels + 1.
		if err := e.s.SetHostLabels(ctx, p.Host, many, nil); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("SetHostLabels(%d more labels) = %v; want ErrInvalid", len(many), err)
		}
		got, _ = e.s.HostLabels(ctx)
		if len(got[p.Host]) != 3 {
			t.Errorf("after a refused SetHostLabels: %v; want the three before", got[p.Host])
		}
		if _, _, err := e.s.Import(ctx, strings.NewReader("x"), store.ImportOptions{Labels: []subsecond.Label{{Key: "9", Value: "a"}}}); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("import with a bad label: %v; want ErrInvalid", err)
		}
	})
}

// TestNameCountsTooMany: a search matching more than subsecond.MaxIndexNames names
// fails with ErrTooLarge asking to narrow the expression; a narrower one
// succeeds.
func TestNameCountsTooMany(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		p := importFile(t, e.s, filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz"), store.ImportOptions{})
		from, to := wallSpan(p)
		ctx := context.Background()
		edges, err := e.s.NameTotals(ctx, subsecond.TotalsQuery{From: from, To: to})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, nc := range edges {
			if nc.Kind == subsecond.NameEdge {
				n++
			}
		}
		if n <= 1000 {
			t.Fatalf("the capture has %d call edges; the test needs more than 1000", n)
		}
		_, err = e.s.NameCounts(ctx, subsecond.NameEdge, regexp.MustCompile(""), from, to)
		if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "narrow the expression") {
			t.Errorf("NameCounts(every edge) = %v; want ErrTooLarge saying to narrow the expression", err)
		}
		got, err := e.s.NameCounts(ctx, subsecond.NameComm, regexp.MustCompile(""), from, to)
		if err != nil || len(got) == 0 {
			t.Errorf("NameCounts(every comm) = %d counts, %v", len(got), err)
		}
	})
}

// TestReindex: a profile whose index rows were deleted (as one imported
// before the index existed) gets the same rows back from Reindex.
func TestReindex(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := importFile(t, e.s, filepath.Join("..", "sample-data", "real-mixed-2cpu-12s.perf.txt.gz"), store.ImportOptions{})
		indexed(t, e.s)
		dump := func() string {
			var b strings.Builder
			for _, q := range []string{`SELECT day, host, start_ns, end_ns, boot_ns, kernel, cpu_model, cpus, slots FROM fleet_captures`,
				`SELECT n.kind, n.name, c.day, c.total, c.slots FROM fleet_counts c JOIN fleet_names n ON n.id = c.name ORDER BY n.kind, n.name`} {
				rows, err := e.db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				cols, _ := rows.Columns()
				for rows.Next() {
					v := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range v {
						ptrs[i] = &v[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "%v\n", v)
				}
				rows.Close()
			}
			return b.String()
		}
		before := dump()
		if n, err := e.s.Reindex(ctx); err != nil || n != 0 {
			t.Errorf("Reindex of an indexed database = %d, %v; want 0", n, err)
		}
		for _, tb := range []string{"fleet_counts", "fleet_captures"} {
			if _, err := e.db.Exec("DELETE FROM " + tb); err != nil {
				t.Fatal(err)
			}
		}
		if dump() == before {
			t.Fatal("the index is still there")
		}
		n, err := e.s.Reindex(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Reindex = %d, %v; want 1", n, err)
		}
		if after := dump(); after != before {
			t.Errorf("Reindex wrote\n%.2000s\nwant\n%.2000s", after, before)
		}
		checkIndex(t, e.fresh(), p)
	})
}

// indexBytes returns the bytes the fleet index takes in e's database, of
// them those of its names' dictionary (SQLite only; shared by every
// capture), and the database's in all. SQLite: the file's pages, less those left once
// the index's rows are deleted and the file vacuumed (which the test
// does, last). PostgreSQL: the fleet tables' relations, their partitions,
// indexes and TOAST, against every table of the schema.
func (e *env) indexBytes() (index, dict, total int64) {
	e.t.Helper()
	size := func(q string) int64 {
		var n int64
		if err := e.db.QueryRow(q).Scan(&n); err != nil {
			e.t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if e.name == "sqlite" {
		pages := func() int64 { return size("PRAGMA page_count") * size("PRAGMA page_size") }
		if _, err := e.db.Exec("VACUUM"); err != nil {
			e.t.Fatal(err)
		}
		total = pages()
		for _, q := range []string{"DELETE FROM fleet_counts", "DELETE FROM fleet_captures", "VACUUM"} {
			if _, err := e.db.Exec(q); err != nil {
				e.t.Fatal(err)
			}
		}
		dict = pages()
		for _, q := range []string{"DELETE FROM fleet_names", "VACUUM"} {
			if _, err := e.db.Exec(q); err != nil {
				e.t.Fatal(err)
			}
		}
		dict -= pages()
		return total - pages(), dict, total
	}
	index = size(`SELECT COALESCE(sum(pg_total_relation_size(t.relid)), 0) FROM
		(SELECT relid FROM pg_partition_tree('fleet_counts') UNION ALL SELECT relid FROM pg_partition_tree('fleet_captures')
		UNION ALL SELECT 'fleet_names'::regclass) t`)
	dict = size(`SELECT pg_total_relation_size('fleet_names')`)
	total = size(`SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`)
	return index, dict, total
}

// TestFleetIndexShare reports the share of the database the fleet index
// takes for the bundled captures (go test -v -run FleetIndexShare), and
// fails when it passes 10% for the 96-CPU incident on SQLite.
func TestFleetIndexShare(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		for _, path := range []string{"incident-96cpu-120s.perf.txt.zst", "real-mixed-2cpu-12s.perf.txt.gz", "real-mixed-2cpu-5s.perf.txt.gz"} {
			t.Run(path, func(t *testing.T) {
				b, db, _ := backends[slices.IndexFunc(backends, func(b backend) bool { return b.name == e.name })].open(t)
				e := &env{t: t, name: e.name, b: b, db: db, s: store.New(b, store.Options{})}
				p := importFile(t, e.s, filepath.Join("..", "sample-data", path), store.ImportOptions{})
				indexed(t, e.s)
				var names, rows int64
				e.db.QueryRow("SELECT count(*) FROM fleet_names").Scan(&names)
				e.db.QueryRow("SELECT count(*) FROM fleet_counts").Scan(&rows)
				if names == 0 || rows == 0 {
					t.Fatalf("%d names and %d count rows indexed; want some", names, rows)
				}
				index, dict, total := e.indexBytes()
				t.Logf("%s: %d samples, %d names, %d count rows: index %d of %d bytes (%.1f%%; without the names' dictionary %.1f%%)",
					path, p.Samples, names, rows, index, total, 100*float64(index)/float64(total), 100*float64(index-dict)/float64(total-dict))
				if e.name == "sqlite" && strings.HasPrefix(path, "incident") && index*10 > total {
					t.Errorf("the index takes %d of %d bytes, more than 10%%", index, total)
				}
			})
		}
	})
}

// TestPruneIndex: on PostgreSQL pruning drops the partitions of a whole
// old day of the fleet index and keeps today's; on SQLite it drops
// nothing and the index goes with the profiles' deletes.
func TestPruneIndex(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		old, _, err := e.s.Import(ctx, sampledata.IncidentCompressed(), store.ImportOptions{FileName: "incident.perf"})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := genPerf(&buf, genConfig{CPUs: 2, Seconds: 5, Hz: 49, Seed: 5}); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		text := "# captured on    : " + now.Format(time.ANSIC) + "\n" + buf.String()
		fresh, _, err := e.s.Import(ctx, strings.NewReader(text), store.ImportOptions{FileName: "now.perf"})
		if err != nil {
			t.Fatal(err)
		}
		indexed(t, e.s)
		partitions := func() []string {
			if e.name != "postgres" {
				return nil
			}
			var names []string
			// The test's schema's alone: other packages' tests run at
			// the same time in schemas of their own.
			rows, err := e.db.Query(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
				WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var n string
				rows.Scan(&n)
				names = append(names, n)
			}
			return names
		}
		day := func(p *subsecond.Profile) string {
			return fmt.Sprint(subsecond.FloorSecond(p.Wall.Wall(p.T0())) / int64(24*time.Hour))
		}
		if e.name == "postgres" {
			want := []string{"fleet_captures_d" + day(old), "fleet_captures_d" + day(fresh), "fleet_counts_d" + day(old), "fleet_counts_d" + day(fresh)}
			if got := partitions(); !slices.Equal(got, want) {
				t.Fatalf("partitions %v; want %v", got, want)
			}
		}
		n, err := e.s.PruneIndex(ctx, now.Add(-24*time.Hour).UnixNano())
		if err != nil {
			t.Fatal(err)
		}
		from, to := wallSpan(old)
		caps, err := e.s.IndexedCaptures(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if e.name == "postgres" {
			want := []string{"fleet_captures_d" + day(fresh), "fleet_counts_d" + day(fresh)}
			if got := partitions(); n != 1 || !slices.Equal(got, want) || len(caps) != 0 {
				t.Errorf("after PruneIndex: %d days dropped, partitions %v, %d old captures; want 1, %v, 0", n, got, len(caps), want)
			}
		} else if n != 0 || len(caps) != 1 {
			t.Errorf("SQLite's PruneIndex: %d days dropped, %d old captures; want 0, 1", n, len(caps))
		}
		from, to = wallSpan(fresh)
		if caps, err := e.s.IndexedCaptures(ctx, from, to); err != nil || len(caps) != 1 || caps[0].ID != fresh.ID {
			t.Errorf("today's captures after PruneIndex: %v, %v; want %s", caps, err, fresh.ID)
		}
		checkIndex(t, e.s, fresh)
		if err := e.s.Delete(ctx, old.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFleetIndexConcurrentDays imports captures of one new day through
// two stores over one database at once, as two `serve` processes of a
// team do: every import succeeds and is indexed, and PostgreSQL holds one
// partition of that day per index table (the first import of a day creates
// them under an advisory lock; the other waits and finds them).
func TestFleetIndexConcurrentDays(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		other, err := reopen(e.name, e.where)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		stores := []*store.Store{e.s, store.New(other, store.Options{})}
		at := time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)
		f := fleetgen.Fleet{Hosts: 8, Boots: 1, Sessions: 1, PerSession: 1, At: at, Seed: 9}
		caps := f.Captures()
		errs := make(chan error, len(caps))
		var wg sync.WaitGroup
		for i, c := range caps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pr, pw := io.Pipe()
				go func() { pw.CloseWithError(f.Write(pw, c)) }()
				_, _, err := stores[i%2].Import(ctx, pr, store.ImportOptions{FileName: c.ID, Host: c.Host, Labels: c.Labels, Boot: c.Boot.UnixNano()})
				pr.CloseWithError(err)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("import: %v", err)
			}
		}
		// A store waits for its own imports' indexes; the other's are
		// another process's.
		indexed(t, stores[1])
		ics, err := e.s.IndexedCaptures(ctx, at.UnixNano(), at.Add(time.Hour).UnixNano())
		if err != nil {
			t.Fatal(err)
		}
		if len(ics) != len(caps) {
			t.Errorf("%d captures indexed; want %d", len(ics), len(caps))
		}
		if e.name == "postgres" {
			var n int
			day := strconv.FormatInt(at.Unix()/86400, 10)
			err := e.db.QueryRow(`SELECT count(*) FROM pg_class WHERE relname IN ('fleet_captures_d' || $1, 'fleet_counts_d' || $1)`, day).Scan(&n)
			if err != nil || n != 2 {
				t.Errorf("partitions of day %s: %d, %v; want 2", day, n, err)
			}
		}
	})
}

// TestNameTotalsCutRange: totals over a range that cuts through a capture
// count only the slots starting in it (read from each name's slot counts),
// and over a range holding the whole capture its every slot (read from the
// names' totals): both equal the per-slot counts NameCounts reads, summed.
func TestNameTotalsCutRange(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, sampledata.IncidentCompressed(), store.ImportOptions{FileName: "incident.perf"})
		if err != nil {
			t.Fatal(err)
		}
		start := p.Wall.Wall(p.T0())
		all := regexp.MustCompile("")
		for _, r := range [][2]int64{{start + 15e9, start + 45e9}, {start - 3600e9, start + 3600e9}, {start + 95e9, start + 105e9}} {
			totals, err := e.s.NameTotals(ctx, subsecond.TotalsQuery{From: r[0], To: r[1], Kind: subsecond.NameFunction})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, nc := range totals {
				got[nc.Name] += nc.Total()
			}
			counts, err := e.s.NameCounts(ctx, subsecond.NameFunction, all, r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{}
			for _, nc := range counts {
				for k, v := range nc.Slots {
					if at := start + int64(k)*subsecond.IndexSlot; at >= r[0] && at < r[1] {
						want[nc.Name] += v
					}
				}
			}
			for n, v := range want {
				if v == 0 {
					delete(want, n)
				}
			}
			if len(want) == 0 || !maps.Equal(got, want) {
				t.Errorf("range %d–%d s from T0: totals of %d functions differ from the slots' sums of %d (or none)", (r[0]-start)/1e9, (r[1]-start)/1e9, len(got), len(want))
			}
		}
	})
}

// failSegments is a Backend whose imports fail when they write their
// segments, which Import does after writing the fleet index.
type failSegments struct{ store.Backend }

func (b failSegments) Begin(ctx context.Context, id string) (store.Import, error) {
	im, err := b.Backend.Begin(ctx, id)
	return failSegmentsImport{im}, err
}

type failSegmentsImport struct{ store.Import }

func (failSegmentsImport) WriteSegments(context.Context, []store.Segment) error {
	return errors.New("disk on fire")
}

// TestFleetIndexRolledBack: an import that fails after writing its fleet
// index leaves no index rows and no names, and the store that ran it does
// not take the names it inserted for stored: importing the capture again
// inserts them again, and its index holds the counts computed sample by
// sample.
func TestFleetIndexRolledBack(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		path := filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := store.New(failSegments{e.b}, store.Options{})
		if _, _, err := s.Import(context.Background(), bytes.NewReader(data), store.ImportOptions{}); err == nil {
			t.Fatal("an import whose segments failed to be written succeeded")
		}
		var names int
		if err := e.db.QueryRow("SELECT count(*) FROM fleet_names").Scan(&names); err != nil {
			t.Fatal(err)
		}
		if n := e.fleetRows(); n != 0 || names != 0 {
			t.Errorf("after a failed import: %d fleet rows and %d names; want none", n, names)
		}
		s2 := store.New(e.b, store.Options{})
		p, _, err := s2.Import(context.Background(), bytes.NewReader(data), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		indexed(t, s2)
		checkIndex(t, e.fresh(), p)
	})
}
