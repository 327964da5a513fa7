package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/pgtest"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/postgres"
	"github.com/subsecond/subsecond/store/sqlite"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for counting rows
)

// A backend under test: every test that uses the database runs once per
// entry, against a real server (a SQLite file, a PostgreSQL database).
type backend struct {
	name string
	// open returns a new, empty database, a connection to it that the
	// tests count rows through, and where it is (see reopen).
	open func(t testing.TB) (store.Backend, *sql.DB, string)
}

var backends = []backend{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

// openPostgres opens a schema of its own in $SUBSECOND_TEST_POSTGRES's
// database (pgtest.Schema: the subtest is skipped without it), and a
// connection to it that the tests count rows through.
func openPostgres(t testing.TB) (store.Backend, *sql.DB, string) {
	t.Helper()
	where := pgtest.Schema(t)
	b, err := postgres.Open(context.Background(), where)
	if err != nil {
		t.Fatalf("open PostgreSQL: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	db, err := sql.Open("pgx", where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return b, db, where
}

func openSQLite(t testing.TB) (store.Backend, *sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	b, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatalf("open SQLite: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, b.DB.DB, path
}

// reopen opens, in another process, the database a backend's open
// returned.
func reopen(name, where string) (store.Backend, error) {
	switch name {
	case "sqlite":
		return sqlite.Open(context.Background(), where, sqlite.Options{})
	case "postgres":
		return postgres.Open(context.Background(), where)
	}
	return nil, fmt.Errorf("no backend %q", name)
}

// env is one backend's database with a Store over it.
type env struct {
	t     testing.TB
	name  string
	where string
	b     store.Backend
	db    *sql.DB
	s     *store.Store
}

// forEach runs fn once per backend, each with an empty database and a Store
// with options opt.
func forEach(t *testing.T, opt store.Options, fn func(t *testing.T, e *env)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b, db, where := bk.open(t)
			fn(t, &env{t: t, name: bk.name, where: where, b: b, db: db, s: store.New(b, opt)})
		})
	}
}

// fresh returns another Store over the same database, with an empty
// capture cache: what a second process, or this one restarted, sees.
func (e *env) fresh() *store.Store {
	return store.New(e.b, store.Options{WarmLimit: -1})
}

// tables lists every table that holds profile data.
var tables = []string{"profiles", "events", "warnings", "segments", "chunks", "rollups", "markers", "host_series"}

// rows counts the rows of every profile table.
func (e *env) rows() map[string]int {
	e.t.Helper()
	counts := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := e.db.QueryRow("SELECT count(*) FROM " + tb).Scan(&n); err != nil {
			e.t.Fatalf("count %s: %v", tb, err)
		}
		counts[tb] = n
	}
	return counts
}

// assertEmpty fails unless every profile table is empty.
func (e *env) assertEmpty() {
	e.t.Helper()
	for tb, n := range e.rows() {
		if n != 0 {
			e.t.Errorf("table %s holds %d rows; want 0", tb, n)
		}
	}
}

// genConfig shapes a synthetic perf script capture.
type genConfig struct {
	CPUs    int
	Seconds int
	Hz      int
	Seed    uint64
	Start   float64 // seconds of the first sample
	Events  int     // distinct events, round robin (0: one, cpu-clock)
}

var (
	genComms = []string{"java", "postgres", "nginx: worker", "kworker/0:1", "V8 WorkerThread", "swapper"}
	genFuncs = []struct{ sym, dso string }{
		{"main", "/usr/bin/app"}, {"run_loop", "/usr/bin/app"}, {"handle_request", "/usr/bin/app"},
		{"parse_json", "/usr/lib/libjson.so"}, {"malloc", "/usr/lib/libc.so.6"}, {"memcpy", "/usr/lib/libc.so.6"},
		{"std::vector<int>::push_back", "/usr/bin/app"}, {"compress_block", "/usr/lib/libz.so"},
		{"do_syscall_64", "[kernel.kallsyms]"}, {"entry_SYSCALL_64", "[kernel.kallsyms]"},
		{"__x64_sys_read", "[kernel.kallsyms]"}, {"copy_user_generic", "[kernel.kallsyms]"},
		{"do_idle", "[kernel.kallsyms]"}, {"native_safe_halt", "[kernel.kallsyms]"}, {"__do_softirq", "[kernel.kallsyms]"},
	}
)

// genPerf writes a deterministic perf script capture: every CPU sampled at
// cfg.Hz for cfg.Seconds, samples in time order, stacks drawn from a small
// pool of call chains (some idle, some kernel-leaf). It returns the number
// of samples written.
func genPerf(w io.Writer, cfg genConfig) (int, error) {
	rng := mrand.New(mrand.NewPCG(cfg.Seed, 1))
	chains := make([][]int, 200)
	for i := range chains {
		depth := 2 + rng.IntN(14)
		c := []int{0, 1} // main, run_loop outermost
		for len(c) < depth {
			c = append(c, rng.IntN(len(genFuncs)))
		}
		chains[i] = c
	}
	period := int64(1e9) / int64(cfg.Hz)
	start := int64(cfg.Start * 1e9)
	ticks := cfg.Seconds * cfg.Hz
	var b bytes.Buffer
	n := 0
	for tick := 0; tick < ticks; tick++ {
		for cpu := 0; cpu < cfg.CPUs; cpu++ {
			t := start + int64(tick)*period + int64(cpu)*1000 + int64(rng.IntN(500))*1000
			t -= t % 1000 // perf prints microseconds
			comm := genComms[rng.IntN(len(genComms))]
			pid := 1000 + rng.IntN(50)
			if comm == "swapper" {
				pid = 0
			}
			ev := "cpu-clock"
			if cfg.Events > 1 {
				ev = fmt.Sprintf("ev%d", n%cfg.Events)
			}
			fmt.Fprintf(&b, "%15s %6d/%-6d [%03d] %d.%06d: %10d %s:\n", comm, pid, pid+rng.IntN(4), cpu,
				t/1e9, t%1e9/1000, period, ev)
			chain := chains[rng.IntN(len(chains))]
			for i := len(chain) - 1; i >= 0; i-- {
				f := genFuncs[chain[i]]
				addr := uint64(0x400000 + chain[i]*0x1000 + i*16)
				if strings.HasPrefix(f.dso, "[") {
					addr += 0xffffffff81000000
				}
				fmt.Fprintf(&b, "\t%16x %s+0x%x (%s)\n", addr, f.sym, i*4, f.dso)
			}
			b.WriteByte('\n')
			n++
		}
		if b.Len() > 64<<10 {
			if _, err := w.Write(b.Bytes()); err != nil {
				return n, err
			}
			b.Reset()
		}
	}
	_, err := w.Write(b.Bytes())
	return n, err
}

// genText returns a generated capture as text.
func genText(t testing.TB, cfg genConfig) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := genPerf(&b, cfg); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// buildCapture parses text with the parser and the root package's Builder,
// the reference the store's Capture must match.
func buildCapture(t testing.TB, text []byte) *subsecond.Capture {
	t.Helper()
	c, err := synth.Parse(text, parser.Options{})
	if err != nil {
		t.Fatalf("parse reference: %v", err)
	}
	return c
}

// compareCapture checks that got has exactly want's tables and samples.
func compareCapture(t testing.TB, got, want *subsecond.Capture) {
	t.Helper()
	diff(t, "Strings", got.Strings, want.Strings)
	diff(t, "Frames", got.Frames, want.Frames)
	diff(t, "Nodes", got.Nodes, want.Nodes)
	g, w := &got.Samples, &want.Samples
	diff(t, "Samples.Time", g.Time, w.Time)
	diff(t, "Samples.CPU", g.CPU, w.CPU)
	diff(t, "Samples.PID", g.PID, w.PID)
	diff(t, "Samples.TID", g.TID, w.TID)
	diff(t, "Samples.Comm", g.Comm, w.Comm)
	diff(t, "Samples.Event", g.Event, w.Event)
	diff(t, "Samples.Weight", g.Weight, w.Weight)
	diff(t, "Samples.Stack", g.Stack, w.Stack)
}

// diff reports the first difference between two slices.
func diff[T comparable](t testing.TB, name string, got, want []T) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %v; want %v", name, i, got[i], want[i])
			return
		}
	}
	if len(got) != len(want) {
		t.Errorf("len(%s) = %d; want %d", name, len(got), len(want))
	}
}

const smallCapture = `# ========
# captured on    : Tue Nov 24 10:00:00 2026
# hostname : box1
# os release : 6.8.0
# perf version : 6.8
# arch : x86_64
# nrcpus online : 4
# ========
#
java 1234/1240 [001] 100.250000:   10101010 cpu-clock:
	ffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])
	7f0000001000 run+0x10 (/usr/bin/java)
	400100 main+0x20 (/usr/bin/java)

java 1234/1241 [000] 100.100000:   10101010 cpu-clock:
	7f0000001000 run+0x10 (/usr/bin/java)
	400100 main+0x20 (/usr/bin/java)

swapper     0/0     [002] 100.300000:   10101010 cpu-clock:
	ffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])

nginx: worker 77/77 [002] 101.900000:   10101010 cpu-clock:
	400200 ngx_process_events+0x4 (/usr/sbin/nginx)
	400100 main+0x20 (/usr/bin/java)

`

// badCapture has two good samples around a malformed record on line 4.
const badCapture = `java 1/1 [000] 1.000000: 1000 cpu-clock:
	400100 main+0x20 (/usr/bin/java)

this line is not a sample header at all
	400100 main+0x20 (/usr/bin/java)

java 1/1 [001] 1.200000: 1000 cpu-clock:
	400100 main+0x20 (/usr/bin/java)

`

// oddCapture has two events with varying periods, equal times on several
// CPUs and a sample more than a second out of order.
const oddCapture = `a 1/1 [000] 10.000000: 100 cycles:
	400100 main+0x20 (/usr/bin/a)

a 1/1 [001] 10.000000: 250 cycles:
	400100 main+0x20 (/usr/bin/a)

b 2/2 [002] 10.000000: 7 instructions:
	400200 work+0x4 (/usr/bin/b)
	400100 main+0x20 (/usr/bin/a)

a 1/1 [000] 12.500000: 100 cycles:
	400100 main+0x20 (/usr/bin/a)

a 1/1 [003] 10.000000: 100 cycles:
	400100 main+0x20 (/usr/bin/a)

b 2/2 [002] 9.000000: 9 instructions:
	400200 work+0x4 (/usr/bin/b)

a 1/1 [001] 10.000000: 1 cycles:

`

// dbSize returns the bytes the database takes on disk.
func dbSize(t testing.TB, name string, b store.Backend, db *sql.DB) int64 {
	t.Helper()
	switch name {
	case "sqlite":
		// The write-ahead log is copied into the file and truncated after
		// each import, in the background; Close waits for that.
		var pages, size int64
		if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
			t.Fatal(err)
		}
		return pages * size
	}
	var n int64
	for _, tb := range tables {
		var s int64
		if err := db.QueryRow("SELECT pg_total_relation_size($1)", tb).Scan(&s); err != nil {
			t.Fatal(err)
		}
		n += s
	}
	return n
}
