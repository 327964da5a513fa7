package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/timeline"
)

// TestSummariesMatchSamples checks the per-second summaries stored with
// the chunks, counted as the import streams samples into chunks and
// merged from them, against timeline.Summarize, which counts the same
// figures per second from the loaded capture's samples, and checks that
// every sample of every event is counted once.
//
// It does so for a generated capture of two events, for the same samples
// out of time order (so that the chunks of a second are many, each with a
// summary to merge) and for the bundled real capture; and checks that
// timeline.FromChunks keeps of them what the host views read.
func TestSummariesMatchSamples(t *testing.T) {
	text := genText(t, genConfig{CPUs: 6, Seconds: 5, Hz: 49, Seed: 12, Start: 300.7, Events: 2})
	rc, err := sampledata.Real()
	if err != nil {
		t.Fatal(err)
	}
	real, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		name string
		text []byte
	}{{"generated", text}, {"shuffled", shuffleRecords(text, 3)}, {"real", real}} {
		t.Run(in.name, func(t *testing.T) { checkSummaries(t, in.text) })
	}
}

// shuffleRecords returns perf script text with its records (the header
// comments first) in an order of seed.
func shuffleRecords(text []byte, seed uint64) []byte {
	var head []byte
	for bytes.HasPrefix(text, []byte("#")) {
		i := bytes.IndexByte(text, '\n')
		head, text = append(head, text[:i+1]...), text[i+1:]
	}
	recs := bytes.SplitAfter(bytes.TrimSpace(text), []byte("\n\n"))
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	out := head
	for _, rec := range recs {
		out = append(out, bytes.TrimRight(rec, "\n")...)
		out = append(out, "\n\n"...)
	}
	return out
}

func checkSummaries(t *testing.T, text []byte) {
	forEach(t, store.Options{Workers: 2, BlockSize: 8 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.s.Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := timeline.Summarize(c)
		sums, err := e.s.Summaries(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []subsecond.ChunkSummary
		perEvent := make([]int64, len(p.Events))
		var busy, sys int64
		for _, s := range sums {
			if s.Start%subsecond.ChunkSpan != 0 {
				t.Errorf("summary starts at %d, not a whole second", s.Start)
			}
			ts := subsecond.ChunkSummary{Start: s.Start}
			var byCPU, byComm subsecond.Counts
			for _, k := range s.CPUs {
				byCPU.Add(k.Counts)
				perEvent[k.Event] += k.Counts.Samples
				if k.Event == 0 && k.CPU != subsecond.Unknown {
					ts.CPUs = append(ts.CPUs, k)
				}
				busy += k.Counts.Busy
				sys += k.Counts.System
			}
			for _, k := range s.Comms {
				byComm.Add(k.Counts)
				if k.Event == 0 {
					ts.Comms = append(ts.Comms, k)
				}
			}
			if byCPU != byComm {
				t.Errorf("second %d: counts by CPU %+v, by command %+v; want equal", s.Start, byCPU, byComm)
			}
			if len(ts.CPUs) > 0 {
				got = append(got, ts)
			}
		}
		if len(got) != len(want) || len(want) < 5 {
			t.Fatalf("%d summaries of event 0; want %d (at least 5)", len(got), len(want))
		}
		if from := timeline.FromChunks(sums); !reflect.DeepEqual(from, got) {
			t.Errorf("FromChunks kept %d seconds, differing from the %d of event 0 with a CPU", len(from), len(got))
		}
		for i := range want {
			if !equalSummary(got[i], want[i]) {
				t.Errorf("summary of second %d = %+v\nwant %+v", i, got[i], want[i])
			}
		}
		for i, ev := range p.Events {
			if perEvent[i] != ev.Samples {
				t.Errorf("summaries count %d samples of %s; want %d", perEvent[i], ev.Name, ev.Samples)
			}
		}
		if busy == 0 || sys == 0 || busy == p.Samples {
			t.Errorf("busy %d, system %d of %d samples; want some of each and some idle", busy, sys, p.Samples)
		}
	})
}

func equalSummary(a, b subsecond.ChunkSummary) bool {
	if a.Start != b.Start || len(a.CPUs) != len(b.CPUs) || len(a.Comms) != len(b.Comms) {
		return false
	}
	for i := range a.CPUs {
		if a.CPUs[i] != b.CPUs[i] {
			return false
		}
	}
	for i := range a.Comms {
		if a.Comms[i] != b.Comms[i] {
			return false
		}
	}
	return true
}

// TestSummaryCountsAreClasses checks the busy and system counts the import
// stores, per CPU and event, against a direct count over the loaded
// capture's samples with subsecond.ClassesOf, on real captures.
func TestSummaryCountsAreClasses(t *testing.T) {
	tests := []struct {
		name string
		open func() (io.ReadCloser, error)
		idle bool // the capture has idle samples
	}{
		{"real-mixed", sampledata.Real, true},
		{"dd-pegged", func() (io.ReadCloser, error) {
			return os.Open(filepath.Join("..", "testdata", "perf", "dd-pegged-cpu1.perf.txt.zst"))
		}, false},
	}
	type key struct {
		cpu   int32
		event uint16
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, store.Options{}, func(t *testing.T, e *env) {
				r, err := tt.open()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				ctx := context.Background()
				p, _, err := e.s.Import(ctx, r, store.ImportOptions{Name: tt.name})
				if err != nil {
					t.Fatal(err)
				}
				c, err := e.s.Capture(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := map[key]subsecond.Counts{}
				cl := subsecond.ClassesOf(c)
				s := &c.Samples
				for i := range s.Len() {
					k := key{s.CPU[i], s.Event[i]}
					n := want[k]
					n.Samples++
					if !cl.Idle(i) {
						n.Busy++
					}
					if cl.System(i, s.Stack[i]) {
						n.System++
					}
					want[k] = n
				}
				sums, err := e.s.Summaries(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				got := map[key]subsecond.Counts{}
				for _, sum := range sums {
					for _, k := range sum.CPUs {
						n := got[key{k.CPU, k.Event}]
						n.Add(k.Counts)
						got[key{k.CPU, k.Event}] = n
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: summaries count %+v per (CPU, event); ClassesOf counts %+v", tt.name, got, want)
				}
				var total subsecond.Counts
				for _, n := range want {
					total.Add(n)
				}
				if total.System == 0 || total.Busy == total.System || (total.Busy < total.Samples) != tt.idle {
					t.Errorf("%s: %+v; want some system and some user samples, idle ones %v", tt.name, total, tt.idle)
				}
			})
		})
	}
}

// TestCgroupColumn imports a real capture whose header lines carry a
// cgroup path after the event, as perf script -F +cgroup prints them (the
// field that perf record --all-cgroups records), and checks that the
// stored column reads back and that the cgroup filter keeps exactly the
// samples of each path, counted independently from the text.
func TestCgroupColumn(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "perf", "dd-pegged-cpu1.perf.txt.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// dd's samples go to one service's cgroup, the others to a user's,
	// and every fifth header keeps no cgroup at all.
	want := map[string]int{}
	var b bytes.Buffer
	headers := 0
	for _, line := range strings.SplitAfter(string(text), "\n") {
		body := strings.TrimRight(line, "\n")
		if body == "" || body[0] == '#' || body[0] == ' ' || body[0] == '\t' || !strings.HasSuffix(strings.TrimSpace(body), ":") {
			b.WriteString(line)
			continue
		}
		cg := "/user.slice/user-0.slice/session-4.scope"
		if strings.HasPrefix(body, "dd ") {
			cg = "/system.slice/dd-load.service"
		}
		if headers%5 == 4 {
			cg = ""
		}
		headers++
		want[cg]++
		if cg != "" {
			body = strings.TrimSpace(body) + " " + cg
		}
		b.WriteString(body + "\n")
	}
	if len(want) != 3 || want["/system.slice/dd-load.service"] == 0 {
		t.Fatalf("cgroups planted: %v; want three kinds", want)
	}
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(b.Bytes()), store.ImportOptions{Name: "cgroups"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Samples != int64(headers) {
			t.Fatalf("imported %d samples; want the %d headers", p.Samples, headers)
		}
		c, err := e.s.Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, s := range c.Samples.Cgroup {
			got[c.Strings[s]]++
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stored cgroups %v; want %v", got, want)
		}
		for expr, n := range map[string]int{
			`dd-load\.service$`: want["/system.slice/dd-load.service"],
			`^/user\.slice/`:    want["/user.slice/user-0.slice/session-4.scope"],
			`^$`:                want[""],
			`slice`:             headers - want[""],
		} {
			m, err := query.Filter{Cgroup: expr, Idle: true}.Compile(c)
			if err != nil {
				t.Fatal(err)
			}
			kept := 0
			for i := range c.Samples.Len() {
				if m.Keep(i) {
					kept++
				}
			}
			if kept != n {
				t.Errorf("cgroup=%s keeps %d samples; want %d", expr, kept, n)
			}
		}
	})
}

// importReal imports the bundled real capture into e's store and returns
// its profile and its whole capture.
func importReal(t *testing.T, e *env) (*subsecond.Profile, *subsecond.Capture) {
	t.Helper()
	r, err := sampledata.Real()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	p, _, err := e.s.Import(ctx, r, store.ImportOptions{Name: "real"})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := e.s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p, whole
}

// checkWindowSamples checks that window w holds exactly whole's samples
// of the whole seconds secs, column for column.
func checkWindowSamples(t *testing.T, w, whole *subsecond.Capture, secs subsecond.Range) {
	t.Helper()
	lo, hi := whole.Window(secs)
	want := whole.Samples.Slice(lo, hi, hi)
	if w.Samples.Len() == 0 || !reflect.DeepEqual(w.Samples.Time, want.Time) || !reflect.DeepEqual(w.Samples.Stack, want.Stack) ||
		!reflect.DeepEqual(w.Samples.CPU, want.CPU) || !reflect.DeepEqual(w.Samples.Comm, want.Comm) {
		t.Errorf("window holds %d samples; want the %d of seconds %d to %d, column for column", w.Samples.Len(), want.Len(),
			(secs.Start-whole.Profile.T0())/1e9, (secs.End-whole.Profile.T0())/1e9-1)
	}
}

// TestCaptureWindow: a window of a stored capture holds its tables whole
// and exactly the samples of the seconds the range overlaps, as the whole
// capture has them; with the capture in the cache, it is the cache's copy,
// whose Window holds the same samples.
func TestCaptureWindow(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, whole := importReal(t, e)
		t0 := p.T0()
		rg := subsecond.Range{Start: t0 + 1_500_000_000, End: t0 + 3_200_000_000} // seconds 1, 2 and 3
		if c, err := e.s.CaptureWindow(ctx, p.ID, rg); err != nil || c != whole {
			t.Errorf("window of a cached capture = %p, %v; want the cache's copy %p", c, err, whole)
		}
		w, err := e.fresh().CaptureWindow(ctx, p.ID, rg) // nothing cached
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(w.Strings, whole.Strings) || !reflect.DeepEqual(w.Nodes, whole.Nodes) || !reflect.DeepEqual(w.Frames, whole.Frames) {
			t.Fatal("the window's tables differ from the capture's")
		}
		checkWindowSamples(t, w, whole, subsecond.Range{Start: t0 + 1e9, End: t0 + 4e9})
		if n, err := e.s.WindowSamples(ctx, p.ID, rg); err != nil || n != int64(w.Samples.Len()) {
			t.Errorf("WindowSamples(seconds 1 to 3) = %d, %v; want the window's %d", n, err, w.Samples.Len())
		}
		if _, err := e.s.WindowSamples(ctx, "nosuchprofileaaaaaaaaaaaaa", rg); !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("WindowSamples(unknown id) = %v; want ErrNotFound", err)
		}
	})
}

// TestCaptureWindowSharesTables: windows of a profile not in the capture
// cache decode its tables once and share them, each with its own samples
// and the profile as stored (its warnings, its current name: a rename
// keeps the tables); a deleted profile's windows are not found.
func TestCaptureWindowSharesTables(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, whole := importReal(t, e)
		s := e.fresh() // nothing cached
		t0 := p.T0()
		first, err := s.CaptureWindow(ctx, p.ID, subsecond.Range{Start: t0, End: t0 + 1e9})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Rename(ctx, p.ID, "renamed"); err != nil {
			t.Fatal(err)
		}
		rg := subsecond.Range{Start: t0 + 2e9, End: t0 + 4e9}
		w, err := s.CaptureWindow(ctx, p.ID, rg)
		if err != nil {
			t.Fatal(err)
		}
		if second, err := s.CaptureWindow(ctx, p.ID, rg); err != nil || &second.Frames[0] != &w.Frames[0] ||
			&second.Nodes[0] != &w.Nodes[0] || &second.Strings[0] != &w.Strings[0] {
			t.Errorf("two windows of a profile hold tables of their own (%v); want them shared", err)
		}
		if &first.Frames[0] != &w.Frames[0] {
			t.Error("a window read after a rename holds tables of its own; want those read before it, with the new name")
		}
		if !reflect.DeepEqual(w.Strings, whole.Strings) || !reflect.DeepEqual(w.Nodes, whole.Nodes) || !reflect.DeepEqual(w.Frames, whole.Frames) {
			t.Fatal("the shared tables differ from the capture's")
		}
		checkWindowSamples(t, w, whole, rg)
		wantProfile := whole.Profile
		wantProfile.Name = "renamed"
		if !reflect.DeepEqual(w.Profile, wantProfile) {
			t.Errorf("window's profile = %+v; want the stored one, renamed: %+v", w.Profile, wantProfile)
		}
		if err := s.Delete(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CaptureWindow(ctx, p.ID, rg); !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("window of a deleted profile: %v; want ErrNotFound", err)
		}
	})
}
