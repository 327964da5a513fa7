package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
)

// genConfig shapes a synthetic perf script capture.
type genConfig struct {
	CPUs    int
	Seconds int
	Hz      int
	Seed    uint64
	Start   float64 // seconds of the first sample
}

var (
	genComms = []string{"java", "postgres", "nginx: worker", "kworker/0:1", "V8 WorkerThread"}
	genFuncs = []struct{ sym, dso string }{
		{"main", "/usr/bin/app"}, {"run_loop", "/usr/bin/app"}, {"handle_request", "/usr/bin/app"},
		{"parse_json", "/usr/lib/libjson.so"}, {"malloc", "/usr/lib/libc.so.6"}, {"memcpy", "/usr/lib/libc.so.6"},
		{"std::vector<int>::push_back", "/usr/bin/app"}, {"compress_block", "/usr/lib/libz.so"},
		{"do_syscall_64", "[kernel.kallsyms]"}, {"entry_SYSCALL_64", "[kernel.kallsyms]"},
		{"__x64_sys_read", "[kernel.kallsyms]"}, {"copy_user_generic", "[kernel.kallsyms]"},
	}
)

// genPerf writes a deterministic perf script capture: every CPU sampled at
// cfg.Hz for cfg.Seconds, samples in time order, stacks drawn from a small
// pool of call chains. It returns the number of samples written.
func genPerf(w io.Writer, cfg genConfig) (int, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
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
			fmt.Fprintf(&b, "%15s %6d/%-6d [%03d] %d.%06d: %10d cpu-clock:\n", comm, pid, pid+rng.IntN(4), cpu,
				t/1e9, t%1e9/1000, period)
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

// genText returns a small generated capture as text.
func genText(t testing.TB, cfg genConfig) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := genPerf(&b, cfg); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// openTest opens a store in a fresh temporary directory.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// tables lists every table that holds profile data.
var tables = []string{"profiles", "events", "warnings", "strings", "frames", "stack_nodes", "samples"}

// rowCounts opens path independently of any Store and counts the rows of
// every profile table.
func rowCounts(t testing.TB, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite3", path+"?"+dsnParams)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counts := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + tb).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", tb, err)
		}
		counts[tb] = n
	}
	return counts
}

// assertEmpty fails unless every profile table of path is empty.
func assertEmpty(t testing.TB, path string) {
	t.Helper()
	for tb, n := range rowCounts(t, path) {
		if n != 0 {
			t.Errorf("table %s holds %d rows; want 0", tb, n)
		}
	}
}

// buildCapture parses text with the parser and the root package's Builder,
// the reference the store's Capture must match.
func buildCapture(t testing.TB, text []byte) *subsecond.Capture {
	t.Helper()
	sc := parser.NewScanner(bytes.NewReader(text), parser.Options{})
	b := subsecond.NewBuilder()
	for sc.Scan() {
		b.Add(sc.Sample())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("parse reference: %v", err)
	}
	return b.Capture(subsecond.Profile{})
}
