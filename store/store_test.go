package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
)

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

func TestImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	text := []byte(smallCapture)
	var progress []int64
	p, existed, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{FileName: "small.perf",
		Progress: func(n int64) { progress = append(progress, n) }})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if existed {
		t.Errorf("Import of new content: existed = true")
	}
	if !validID(p.ID) {
		t.Errorf("ID %q is not 26 base32 characters", p.ID)
	}
	if p.Name != "small.perf" || p.FileName != "small.perf" {
		t.Errorf("Name, FileName = %q, %q; want small.perf twice", p.Name, p.FileName)
	}
	if p.Samples != 4 || p.CPUs != 3 || p.Bytes != int64(len(text)) {
		t.Errorf("Samples, CPUs, Bytes = %d, %d, %d; want 4, 3, %d", p.Samples, p.CPUs, p.Bytes, len(text))
	}
	if p.Start != 100_100_000_000 || p.End != 101_900_000_000 {
		t.Errorf("Start, End = %d, %d; want 100.1 s, 101.9 s", p.Start, p.End)
	}
	if p.Meta.Hostname != "box1" {
		t.Errorf("Meta.Hostname = %q; want box1", p.Meta.Hostname)
	}
	if len(p.SHA256) != 64 {
		t.Errorf("SHA256 = %q; want 64 hex digits", p.SHA256)
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(text)) {
		t.Errorf("Progress calls = %v; want the last to report %d bytes", progress, len(text))
	}

	got, err := s.Profile(ctx, p.ID)
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	if !got.Uploaded.Equal(p.Uploaded) {
		t.Errorf("stored Uploaded = %v; want %v", got.Uploaded, p.Uploaded)
	}
	got.Uploaded = p.Uploaded
	if !reflect.DeepEqual(got, p) {
		t.Errorf("Profile(id) = %+v\nwant %+v", got, p)
	}

	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	want := buildCapture(t, text)
	compareCapture(t, c, want)
	if !reflect.DeepEqual(c.Profile, *got) {
		t.Errorf("Capture.Profile = %+v\nwant %+v", c.Profile, *got)
	}
	if c.Strings[c.Samples.Comm[3]] != "nginx: worker" {
		t.Errorf("last sample's comm = %q; want %q", c.Strings[c.Samples.Comm[3]], "nginx: worker")
	}
	c2, err := s.Capture(ctx, p.ID)
	if err != nil || c2 != c {
		t.Errorf("second Capture = %p, %v; want the cached %p", c2, err, c)
	}
}

// compareCapture checks that got has exactly want's tables and samples.
func compareCapture(t *testing.T, got, want *subsecond.Capture) {
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
func diff[T comparable](t *testing.T, name string, got, want []T) {
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

func TestImportGeneratedMatchesBuilder(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	text := genText(t, genConfig{CPUs: 8, Seconds: 3, Hz: 49, Seed: 7, Start: 5000.5})
	p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{FileName: "gen.perf"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if p.Samples != 8*3*49 || p.CPUs != 8 {
		t.Errorf("Samples, CPUs = %d, %d; want %d, 8", p.Samples, p.CPUs, 8*3*49)
	}
	if p.FrequencyHz < 45 || p.FrequencyHz > 53 {
		t.Errorf("FrequencyHz = %v; want about 49", p.FrequencyHz)
	}
	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	compareCapture(t, c, buildCapture(t, text))
}

func TestImportSameBytesTwice(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	text := genText(t, genConfig{CPUs: 2, Seconds: 2, Hz: 49, Seed: 1, Start: 10})
	first, existed, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{Name: "first"})
	if err != nil || existed {
		t.Fatalf("first Import: existed=%v err=%v", existed, err)
	}
	before := rowCounts(t, path)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	zs, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{"plain": text, "gzip": gz.Bytes(), "zstd": zs.EncodeAll(text, nil)} {
		again, existed, err := s.Import(ctx, bytes.NewReader(in), ImportOptions{Name: "again " + name})
		if err != nil {
			t.Fatalf("%s: second Import: %v", name, err)
		}
		if !existed || again.ID != first.ID || again.Name != "first" {
			t.Errorf("%s: second Import = %s %q existed=%v; want %s \"first\" existed=true", name, again.ID, again.Name, existed, first.ID)
		}
	}
	if after := rowCounts(t, path); !reflect.DeepEqual(after, before) {
		t.Errorf("row counts after duplicate imports = %v; want unchanged %v", after, before)
	}

	// Different bytes make a different profile.
	other := append(append([]byte(nil), text...), smallCapture...)
	p, existed, err := s.Import(ctx, bytes.NewReader(other), ImportOptions{})
	if err != nil || existed || p.ID == first.ID {
		t.Errorf("Import of other bytes = %v, existed=%v, err=%v; want a new profile", p, existed, err)
	}
}

func TestImportNotPerf(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<!DOCTYPE html><html><body>Sign in</body></html>"))
	zw.Close()
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty input"},
		{"blank", "\n\n  \n", "empty input"},
		{"html", "\n<!doctype html>\n<html><head><title>x</title></head></html>", "looks like HTML"},
		{"gzipped html", gz.String(), "looks like HTML"},
		{"json", `{"samples": [1, 2, 3]}`, "looks like JSON"},
		{"json array", `[{"a": 1}]`, "looks like JSON"},
		{"xml", `<?xml version="1.0"?><svg></svg>`, "looks like XML"},
		{"binary", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00", "binary data"},
		{"prose", "Dear team,\nplease find attached the profile.\n", "no samples"},
		{"header only", "# ========\n# hostname : box\n# ========\n", "no samples"},
	}
	for _, tt := range tests {
		_, _, err := s.Import(ctx, strings.NewReader(tt.in), ImportOptions{FileName: tt.name})
		if !errors.Is(err, subsecond.ErrNotPerf) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Import(%s) error = %v; want ErrNotPerf mentioning %q", tt.name, err, tt.want)
		}
	}
	assertEmpty(t, path)
}

// badCapture has two good samples around a malformed record on line 4.
const badCapture = `java 1/1 [000] 1.000000: 1000 cpu-clock:
	400100 main+0x20 (/usr/bin/java)

this line is not a sample header at all
	400100 main+0x20 (/usr/bin/java)

java 1/1 [001] 1.200000: 1000 cpu-clock:
	400100 main+0x20 (/usr/bin/java)

`

func TestImportWarnings(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	p, _, err := s.Import(ctx, strings.NewReader(badCapture), ImportOptions{Name: "bad"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if p.Samples != 2 || p.Warnings < 1 {
		t.Errorf("Samples, Warnings = %d, %d; want 2, at least 1", p.Samples, p.Warnings)
	}
	got, err := s.Profile(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Warnings != p.Warnings || len(got.WarningList) != p.Warnings || got.WarningList[0].Line != 4 ||
		!strings.Contains(got.WarningList[0].Message, "this line is not") {
		t.Errorf("stored warnings = %d %+v; want %d, the first on line 4 quoting it", got.Warnings, got.WarningList, p.Warnings)
	}
}

func TestImportStrictLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	_, _, err := s.Import(ctx, strings.NewReader(badCapture), ImportOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("strict Import error = %v; want one naming line 4", err)
	}
	assertEmpty(t, path)
}

func TestImportCancelLeavesNothing(t *testing.T) {
	s, path := openTest(t)
	text := genText(t, genConfig{CPUs: 16, Seconds: 10, Hz: 49, Seed: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{Progress: func(int64) {
		calls++
		if calls == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Import error = %v; want context.Canceled", err)
	}
	assertEmpty(t, path)
	// The store still works afterwards.
	if _, _, err := s.Import(context.Background(), strings.NewReader(smallCapture), ImportOptions{}); err != nil {
		t.Errorf("Import after a cancelled one: %v", err)
	}
}

func TestProfileListDelete(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	a, _, err := s.Import(ctx, strings.NewReader(smallCapture), ImportOptions{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.Import(ctx, strings.NewReader(badCapture), ImportOptions{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("List = %v; want b then a", list)
	}
	if len(list[1].Events) != 1 || list[1].Events[0] != (subsecond.EventCount{Name: "cpu-clock", Samples: 4}) {
		t.Errorf("List events of a = %v; want cpu-clock × 4", list[1].Events)
	}
	if _, err := s.Capture(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for name, err := range map[string]error{
		"Profile": func() error { _, err := s.Profile(ctx, a.ID); return err }(),
		"Capture": func() error { _, err := s.Capture(ctx, a.ID); return err }(),
		"Delete":  s.Delete(ctx, a.ID),
	} {
		if !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("%s of a deleted profile: %v; want ErrNotFound", name, err)
		}
	}
	for _, id := range []string{"", "x", "'; DROP TABLE profiles; --", strings.Repeat("a", 26), strings.ToUpper(b.ID)} {
		if _, err := s.Profile(ctx, id); !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("Profile(%q) error = %v; want ErrNotFound", id, err)
		}
	}
	if err := s.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, path)
}

func TestSniff(t *testing.T) {
	perfLike := []string{
		"java 1/1 [000] 1.0: 1 cpu-clock:\n",
		"# ========\n# captured on: x\n",
		"[kworker/0:1] 5/5 [000] 1.0: 1 cpu-clock:\n",
		"std::vector<header> is a symbol, not HTML\n",
	}
	for _, in := range perfLike {
		if err := sniff([]byte(in)); err != nil {
			t.Errorf("sniff(%q) = %v; want nil", in, err)
		}
	}
}

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

func TestImportPeriodsAndEqualTimes(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	p, _, err := s.Import(ctx, strings.NewReader(oddCapture), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Capture(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := buildCapture(t, []byte(oddCapture))
	compareCapture(t, c, want)
	if got := c.Samples.Weight; len(got) != 7 || got[0] != 9 || got[1] != 100 || got[2] != 250 {
		t.Errorf("weights = %v; want 9, 100, 250, …", got)
	}
	all, err := s.Window(ctx, p.ID, subsecond.Range{Start: 0, End: 20e9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Window.Weight", all.Weight, want.Samples.Weight)
	diff(t, "Window.Time", all.Time, want.Samples.Time)
	diff(t, "Window.Stack", all.Stack, want.Samples.Stack)
}

func TestSeqCounter(t *testing.T) {
	var c seqCounter
	type step struct{ t, want int64 }
	steps := []step{
		{10e9, 0}, {10e9, 1}, {11e9, 0}, {10e9, 2}, // equal times count up
		{12e9, 0}, {10e9, farSeq + 6}, // 10 s fell out of the window
		{subsecond.NoTime, farSeq + 7},
		{12e9, 1},
	}
	for i, s := range steps {
		if got := c.next(s.t); got != s.want {
			t.Errorf("step %d: next(%d) = %d; want %d", i, s.t, got, s.want)
		}
	}
}

// failingReader yields its data and then an error instead of io.EOF.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestImportBrokenInputLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	text := genText(t, genConfig{CPUs: 8, Seconds: 5, Hz: 49, Seed: 11})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	readErr := errors.New("connection reset")
	for name, r := range map[string]io.Reader{
		"truncated gzip": bytes.NewReader(gz.Bytes()[:gz.Len()/2]),
		"read error":     &failingReader{data: text[:len(text)/2], err: readErr},
	} {
		_, _, err := s.Import(ctx, r, ImportOptions{FileName: name})
		if err == nil {
			t.Errorf("Import(%s) succeeded; want an error", name)
		}
		if name == "read error" && !errors.Is(err, readErr) {
			t.Errorf("Import(%s) error = %v; want it to wrap %v", name, err, readErr)
		}
	}
	assertEmpty(t, path)
}

// TestCaptureLoadedInHalves covers a capture large enough for Capture to
// read its two halves on two connections at once.
func TestCaptureLoadedInHalves(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	cfg := genConfig{CPUs: 48, Seconds: 22, Hz: 49, Seed: 17, Start: 300}
	if n := cfg.CPUs * cfg.Seconds * cfg.Hz; n < parallelLoad {
		t.Fatalf("capture of %d samples is below parallelLoad (%d)", n, parallelLoad)
	}
	text := genText(t, cfg)
	p, _, err := s.Import(ctx, bytes.NewReader(text), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.loadCapture(ctx, p.ID) // Import cached the capture; read it from SQLite
	if err != nil {
		t.Fatal(err)
	}
	compareCapture(t, c, buildCapture(t, text))
}

// refSeq is the plain definition seqCounter implements: per-time counts in
// a map, over a window of one second behind the latest time.
type refSeq struct {
	counts map[int64]int64
	latest int64
	n      int64
}

func (r *refSeq) next(t int64) int64 {
	r.n++
	if t == subsecond.NoTime {
		return farSeq + r.n
	}
	if r.counts == nil {
		r.counts, r.latest = map[int64]int64{}, t
	}
	r.latest = max(r.latest, t)
	if t < r.latest-seqWindow {
		return farSeq + r.n
	}
	s := r.counts[t]
	r.counts[t] = s + 1
	return s
}

// TestSeqCounterMatchesDefinition feeds seqCounter and refSeq the same
// times: mostly increasing with repeats, some jittered back within the
// window, some far behind, some missing.
func TestSeqCounterMatchesDefinition(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var c seqCounter
		var r refSeq
		now := int64(rng.IntN(1e9))
		for i := range 60_000 {
			var ts int64
			switch k := rng.IntN(100); {
			case k < 60:
				now += int64(rng.IntN(3)) * int64(rng.IntN(200_000))
				ts = now
			case k < 90:
				ts = now - int64(rng.IntN(1_200_000_000))/1000*1000
			case k < 97:
				ts = now - int64(rng.IntN(5))*1e9
			default:
				ts = subsecond.NoTime
			}
			if got, want := c.next(ts), r.next(ts); got != want {
				t.Fatalf("seed %d, sample %d: next(%d) = %d; want %d", seed, i, ts, got, want)
			}
		}
	}
}
