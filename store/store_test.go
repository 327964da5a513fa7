package store_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/store"
)

func TestImportRoundTrip(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		text := []byte(smallCapture)
		var progress []int64
		p, existed, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{FileName: "small.perf",
			Progress: func(n int64) { progress = append(progress, n) }})
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		if existed {
			t.Errorf("Import of new content: existed = true")
		}
		if !store.ValidID(p.ID) {
			t.Errorf("ID %q is not 26 base32 characters", p.ID)
		}
		if p.Name != "small.perf" || p.FileName != "small.perf" || p.Host != "box1" {
			t.Errorf("Name, FileName, Host = %q, %q, %q; want small.perf twice and box1", p.Name, p.FileName, p.Host)
		}
		if p.Samples != 4 || p.CPUs != 3 || p.Bytes != int64(len(text)) {
			t.Errorf("Samples, CPUs, Bytes = %d, %d, %d; want 4, 3, %d", p.Samples, p.CPUs, p.Bytes, len(text))
		}
		if p.Start != 100_100_000_000 || p.End != 101_900_000_000 {
			t.Errorf("Start, End = %d, %d; want 100.1 s, 101.9 s", p.Start, p.End)
		}
		if p.Meta.Hostname != "box1" || p.Meta.NrCPUs != 4 || len(p.Meta.Header) != 9 {
			t.Errorf("Meta = %+v; want hostname box1, 4 CPUs online, 9 header lines", p.Meta)
		}
		if want := blake3Digest(text); p.Digest != want {
			t.Errorf("Digest = %q; want the text's, %s", p.Digest, want)
		}
		if len(progress) == 0 || progress[len(progress)-1] != int64(len(text)) {
			t.Errorf("Progress calls = %v; want the last to report %d bytes", progress, len(text))
		}

		got, err := e.s.Profile(ctx, p.ID)
		if err != nil {
			t.Fatalf("Profile: %v", err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("Profile(id) = %+v\nwant %+v", got, p)
		}

		c, err := e.s.Capture(ctx, p.ID)
		if err != nil {
			t.Fatalf("Capture: %v", err)
		}
		want := buildCapture(t, text)
		compareCapture(t, c, want)
		if !reflect.DeepEqual(c.Profile, *got) {
			t.Errorf("Capture.Profile = %+v\nwant %+v", c.Profile, *got)
		}
		if c2, err := e.s.Capture(ctx, p.ID); err != nil || c2 != c {
			t.Errorf("second Capture = %p, %v; want the cached %p", c2, err, c)
		}
		loaded, err := e.fresh().Capture(ctx, p.ID)
		if err != nil {
			t.Fatalf("Capture read back: %v", err)
		}
		compareCapture(t, loaded, want)
		if !reflect.DeepEqual(loaded.Profile, *got) {
			t.Errorf("Capture.Profile read back = %+v\nwant %+v", loaded.Profile, *got)
		}
	})
}

// TestImportInBlocksMatchesBuilder imports generated captures cut into
// many small blocks parsed by several workers: strings, frames, stacks and
// samples must come out exactly as one serial pass (the Builder) makes
// them, and exactly as a one-worker import does; the SHA-256, hashed
// beside the reader piece by piece, is the text's.
func TestImportInBlocksMatchesBuilder(t *testing.T) {
	text := genText(t, genConfig{CPUs: 8, Seconds: 6, Hz: 49, Seed: 7, Start: 5000.5, Events: 3})
	want := buildCapture(t, text)
	for _, opt := range []store.Options{
		{Workers: 1},
		{Workers: 1, BlockSize: 4 << 10}, // the worker's tables are the profile's, growing block by block
		{Workers: 3, BlockSize: 4 << 10},
		{Workers: 4, BlockSize: 64 << 10},
	} {
		name := fmt.Sprintf("%d workers, %d-byte blocks", opt.Workers, opt.BlockSize)
		t.Run(name, func(t *testing.T) {
			forEach(t, opt, func(t *testing.T, e *env) {
				ctx := context.Background()
				p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{FileName: "gen.perf"})
				if err != nil {
					t.Fatalf("Import with %d workers, %d-byte blocks: %v", opt.Workers, opt.BlockSize, err)
				}
				if want := blake3Digest(text); p.Digest != want {
					t.Errorf("Digest = %s; want the text's, %s", p.Digest, want)
				}
				if p.Samples != 8*6*49 || p.CPUs != 8 || len(p.Events) != 3 {
					t.Errorf("Samples, CPUs, events = %d, %d, %d; want %d, 8, 3", p.Samples, p.CPUs, len(p.Events), 8*6*49)
				}
				if p.FrequencyHz != want.Profile.FrequencyHz || p.Start != want.Profile.Start || p.End != want.Profile.End ||
					!reflect.DeepEqual(p.Events, want.Profile.Events) {
					t.Errorf("FrequencyHz, Start, End, Events = %v, %d, %d, %v; want %v, %d, %d, %v", p.FrequencyHz, p.Start, p.End,
						p.Events, want.Profile.FrequencyHz, want.Profile.Start, want.Profile.End, want.Profile.Events)
				}
				c, err := e.s.Capture(ctx, p.ID)
				if err != nil {
					t.Fatalf("Capture: %v", err)
				}
				compareCapture(t, c, want)
				loaded, err := e.fresh().Capture(ctx, p.ID)
				if err != nil {
					t.Fatalf("Capture read back: %v", err)
				}
				compareCapture(t, loaded, want)
			})
		})
	}
}

func TestImportSameBytesTwice(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		text := genText(t, genConfig{CPUs: 2, Seconds: 2, Hz: 49, Seed: 1, Start: 10})
		first, existed, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{Name: "first"})
		if err != nil || existed {
			t.Fatalf("first Import: existed=%v err=%v", existed, err)
		}
		before := e.rows()
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(text)
		zw.Close()
		zs, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, in := range map[string][]byte{"plain": text, "gzip": gz.Bytes(), "zstd": zs.EncodeAll(text, nil)} {
			again, existed, err := e.s.Import(ctx, bytes.NewReader(in), store.ImportOptions{Name: "again " + name})
			if err != nil {
				t.Fatalf("%s: second Import: %v", name, err)
			}
			if !existed || again.ID != first.ID || again.Name != "first" {
				t.Errorf("%s: second Import = %s %q existed=%v; want %s \"first\" existed=true", name, again.ID, again.Name, existed, first.ID)
			}
		}
		if after := e.rows(); !reflect.DeepEqual(after, before) {
			t.Errorf("row counts after duplicate imports = %v; want unchanged %v", after, before)
		}
		other := append(append([]byte(nil), text...), smallCapture...)
		p, existed, err := e.s.Import(ctx, bytes.NewReader(other), store.ImportOptions{})
		if err != nil || existed || p.ID == first.ID {
			t.Errorf("Import of other bytes = %v, existed=%v, err=%v; want a new profile", p, existed, err)
		}
	})
}

func TestImportNotPerf(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte("<!DOCTYPE html><html><body>Sign in</body></html>"))
		zw.Close()
		tests := []struct {
			name, in, want string
		}{
			{"empty", "", ": not perf script text: empty"},
			{"blank", "\n\n  \n", ": not perf script text: only white space"},
			{"html", "\n<!doctype html>\n<html><head><title>x</title></head></html>", "looks like HTML"},
			{"gzipped html", gz.String(), "looks like HTML"},
			{"json", `{"samples": [1, 2, 3]}`, "looks like JSON"},
			{"json array", `[{"a": 1}]`, "looks like JSON"},
			{"xml", `<?xml version="1.0"?><svg></svg>`, "looks like XML"},
			{"binary", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00", "binary data"},
			{"perf.data", "PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00", "a perf.data file (binary); send the text of perf script --header -i perf.data"},
			{"prose", "Dear team,\nplease find attached the profile.\n", "no samples"},
			{"header only", "# ========\n# hostname : box\n# ========\n", "no samples"},
		}
		for _, tt := range tests {
			_, _, err := e.s.Import(ctx, strings.NewReader(tt.in), store.ImportOptions{FileName: tt.name})
			if !errors.Is(err, subsecond.ErrNotPerf) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Import(%s) error = %v; want ErrNotPerf mentioning %q", tt.name, err, tt.want)
			}
		}
		// An error names the input once: its file name, else its display
		// name, else "the upload".
		for _, tt := range []struct {
			opt  store.ImportOptions
			want string
		}{
			{store.ImportOptions{FileName: "big.txt", Name: "big"}, "import big.txt: not perf script text: empty"},
			{store.ImportOptions{Name: "stdin"}, "import stdin: not perf script text: empty"},
			{store.ImportOptions{}, "import the upload: not perf script text: empty"},
		} {
			if _, _, err := e.s.Import(ctx, strings.NewReader(""), tt.opt); err == nil || err.Error() != tt.want {
				t.Errorf("Import(%+v) of nothing: error %v; want %q", tt.opt, err, tt.want)
			}
		}
		e.assertEmpty()
	})
}

func TestImportWarnings(t *testing.T) {
	// The malformed record sits in the third of three blocks: its line
	// number counts the lines of the blocks before it.
	text := genText(t, genConfig{CPUs: 2, Seconds: 1, Hz: 49, Seed: 4})
	text = append(append(text, text...), badCapture...)
	badLine := bytes.Count(text, []byte("\n")) - strings.Count(badCapture, "\n") + 4
	sc := parser.NewScanner(bytes.NewReader(text), parser.Options{})
	for sc.Scan() {
	}
	nwarn, warns := sc.Warnings()
	if nwarn == 0 || warns[0].Line != badLine {
		t.Fatalf("reference scan: %d warnings %v; want the first on line %d", nwarn, warns, badLine)
	}
	forEach(t, store.Options{Workers: 2, BlockSize: len(text) / 3}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{Name: "bad"})
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		if p.Samples != 2*2*49+2 || p.Warnings != nwarn {
			t.Errorf("Samples, Warnings = %d, %d; want %d, %d", p.Samples, p.Warnings, 2*2*49+2, nwarn)
		}
		got, err := e.s.Profile(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.WarningList, warns) || !strings.Contains(got.WarningList[0].Message, "this line is not") {
			t.Errorf("stored warnings = %+v; want %+v, the first quoting the bad line", got.WarningList, warns)
		}
		_, _, err = e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{Strict: true})
		if want := "line " + strconv.Itoa(badLine) + ":"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("strict Import error = %v; want ErrInvalid naming %q", err, want)
		}
		if n := e.rows()["profiles"]; n != 1 {
			t.Errorf("%d profiles after the strict import failed; want 1", n)
		}
	})
}

func TestImportCancelLeavesNothing(t *testing.T) {
	forEach(t, store.Options{BlockSize: 16 << 10}, func(t *testing.T, e *env) {
		text := genText(t, genConfig{CPUs: 16, Seconds: 10, Hz: 49, Seed: 3})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		_, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{Progress: func(int64) {
			calls++
			if calls == 1 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Import error = %v; want context.Canceled", err)
		}
		e.assertEmpty()
		if _, _, err := e.s.Import(context.Background(), strings.NewReader(smallCapture), store.ImportOptions{}); err != nil {
			t.Errorf("Import after a cancelled one: %v", err)
		}
	})
}

func TestImportBrokenInputLeavesNothing(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		text := genText(t, genConfig{CPUs: 8, Seconds: 5, Hz: 49, Seed: 11})
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(text)
		zw.Close()
		zs, _ := zstd.NewWriter(nil)
		zt := zs.EncodeAll(text, nil)
		readErr := errors.New("connection reset")
		for _, tt := range []struct {
			name string
			r    io.Reader
			want error
			says string
		}{
			{"truncated gzip", bytes.NewReader(gz.Bytes()[:gz.Len()/2]), subsecond.ErrInvalid, "truncated gzip input"},
			{"truncated zstd", bytes.NewReader(zt[:len(zt)/2]), subsecond.ErrInvalid, "truncated zstd input"},
			{"read error", io.MultiReader(bytes.NewReader(text[:len(text)/2]), iotest.ErrReader(readErr)), readErr, "connection reset"},
		} {
			_, _, err := e.s.Import(ctx, tt.r, store.ImportOptions{FileName: tt.name})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Import(%s) error = %v; want one wrapping %v saying %q", tt.name, err, tt.want, tt.says)
			}
		}
		e.assertEmpty()
	})
}

func TestProfileListDelete(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := e.s.Import(ctx, strings.NewReader(badCapture), store.ImportOptions{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		list, err := e.s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
			t.Fatalf("List = %v; want b then a", list)
		}
		if len(list[1].Events) != 1 || list[1].Events[0] != (subsecond.EventCount{Name: "cpu-clock", Samples: 4}) {
			t.Errorf("List events of a = %v; want cpu-clock × 4", list[1].Events)
		}
		if list[1].Host != "box1" || list[0].Host != subsecond.UnknownHost || list[0].WarningList != nil {
			t.Errorf("List hosts %q, %q, warnings %v; want box1, unknown and no warning messages", list[1].Host, list[0].Host, list[0].WarningList)
		}
		if _, err := e.s.Capture(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Delete(ctx, a.ID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		for name, err := range map[string]error{
			"Profile":   func() error { _, err := e.s.Profile(ctx, a.ID); return err }(),
			"Capture":   func() error { _, err := e.s.Capture(ctx, a.ID); return err }(),
			"Summaries": func() error { _, err := e.s.Summaries(ctx, a.ID); return err }(),
			"Delete":    e.s.Delete(ctx, a.ID),
			"Rename":    e.s.Rename(ctx, a.ID, "c"),
		} {
			if !errors.Is(err, subsecond.ErrNotFound) {
				t.Errorf("%s of a deleted profile: %v; want ErrNotFound", name, err)
			} else if n := strings.Count(err.Error(), a.ID); n != 1 {
				t.Errorf("%s of a deleted profile: %q names it %d times; want once", name, err, n)
			}
		}
		for _, id := range []string{"", "x", "'; DROP TABLE profiles; --", strings.Repeat("a", 26), strings.ToUpper(b.ID)} {
			if _, err := e.s.Profile(ctx, id); !errors.Is(err, subsecond.ErrNotFound) {
				t.Errorf("Profile(%q) error = %v; want ErrNotFound", id, err)
			}
		}
		if err := e.s.Delete(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		e.assertEmpty()
	})
}

func TestRename(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		a, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Capture(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Rename(ctx, a.ID, "web-1 <incident> ✓"); err != nil {
			t.Fatalf("Rename: %v", err)
		}
		p, err := e.s.Profile(ctx, a.ID)
		if err != nil || p.Name != "web-1 <incident> ✓" {
			t.Fatalf("Profile after Rename = %+v, %v; want the new name", p, err)
		}
		c, err := e.s.Capture(ctx, a.ID)
		if err != nil || c.Profile.Name != "web-1 <incident> ✓" || c.Samples.Len() != 4 {
			t.Errorf("Capture after Rename: name %q, %v; want the new name and the same samples", c.Profile.Name, err)
		}
		list, err := e.s.List(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "web-1 <incident> ✓" {
			t.Errorf("List after Rename = %v, %v", list, err)
		}
		for _, bad := range []string{strings.Repeat("x", store.MaxNameLen+1), "a\nb", "\xff"} {
			if err := e.s.Rename(ctx, a.ID, bad); !errors.Is(err, subsecond.ErrInvalid) {
				t.Errorf("Rename(%q) = %v; want ErrInvalid", bad, err)
			}
		}
		if err := e.s.Rename(ctx, "nosuchprofileidxxxxxxxxxxx", "x"); !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("Rename of an unknown id = %v; want ErrNotFound", err)
		}
		if p, _ := e.s.Profile(ctx, a.ID); p == nil || p.Name != "web-1 <incident> ✓" {
			t.Errorf("a refused Rename changed the name to %q", p.Name)
		}
	})
}

// TestDeleteThroughAnotherStore deletes a profile through one Store while
// another, over the same database, has its capture cached: the other must
// answer ErrNotFound, as a second server or process sharing the database
// does.
func TestDeleteThroughAnotherStore(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		other := e.fresh()
		if _, err := other.Capture(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Delete(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Capture(ctx, p.ID); !errors.Is(err, subsecond.ErrNotFound) || strings.Count(err.Error(), p.ID) != 1 {
			t.Errorf("Capture of a profile deleted elsewhere: %v; want ErrNotFound, naming it once", err)
		}
	})
}

func TestImportPeriodsAndEqualTimes(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, strings.NewReader(oddCapture), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := buildCapture(t, []byte(oddCapture))
		for _, s := range []*store.Store{e.s, e.fresh()} {
			c, err := s.Capture(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			compareCapture(t, c, want)
			if got := c.Samples.Weight; len(got) != 7 || got[0] != 9 || got[1] != 100 || got[2] != 250 {
				t.Errorf("weights = %v; want 9, 100, 250, …", got)
			}
		}
		all, err := e.s.Window(ctx, p.ID, subsecond.Range{Start: 0, End: 20e9}, nil)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "Window.Weight", all.Weight, want.Samples.Weight)
		diff(t, "Window.Time", all.Time, want.Samples.Time)
		diff(t, "Window.Stack", all.Stack, want.Samples.Stack)
	})
}

// TestImportOutOfOrder imports a capture whose samples come seconds out of
// time order, so that a second's chunk is written before all its samples
// are read: the later ones form a further chunk of the same second, and
// the capture still reads back in time order, input order among equal
// times.
func TestImportOutOfOrder(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		sec := i % 8 // 0..7 s, then again: each second revisited 50 times
		if i >= 200 {
			sec = 7 - i%8
		}
		b.WriteString("app 1/" + strconv.Itoa(i%5+1) + " [00" + strconv.Itoa(i%4) + "] " + strconv.Itoa(100+sec) + ".000" + strconv.Itoa(100+i%7) + ": 1000 cpu-clock:\n")
		b.WriteString("\t400100 f" + strconv.Itoa(i%9) + "+0x20 (/usr/bin/app)\n\n")
	}
	text := []byte(b.String())
	want := buildCapture(t, text)
	forEach(t, store.Options{Workers: 2, BlockSize: 1 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := e.rows()["chunks"]; n <= 8 {
			t.Errorf("%d chunks for 8 seconds read out of order; want more than one for some", n)
		}
		for _, s := range []*store.Store{e.s, e.fresh()} {
			c, err := s.Capture(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			compareCapture(t, c, want)
		}
		w, err := e.s.Window(ctx, p.ID, subsecond.Range{Start: 102e9, End: 104e9}, []int32{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		ref := filterColumns(want, subsecond.Range{Start: 102e9, End: 104e9}, []int32{1, 2})
		diff(t, "Window.Time", w.Time, ref.Time)
		diff(t, "Window.TID", w.TID, ref.TID)
		diff(t, "Window.Stack", w.Stack, ref.Stack)
	})
}

// TestImportHostAndWallClock imports real captures: the host comes from
// "# hostname" unless the import names one, "unknown" without either, and
// the wall-clock anchor survives the round trip through the database.
func TestImportHostAndWallClock(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		open := func(name string) *os.File {
			f, err := os.Open(filepath.Join("..", "testdata", "wallclock", name))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}
		rt, _, err := e.s.Import(ctx, open("realtime-2cpu-1s.perf.txt.gz"), store.ImportOptions{FileName: "rt"})
		if err != nil {
			t.Fatal(err)
		}
		boot, _, err := e.s.Import(ctx, open("boot-a-2cpu-1s.perf.txt.gz"), store.ImportOptions{FileName: "boot", Host: "db-7"})
		if err != nil {
			t.Fatal(err)
		}
		bare, _, err := e.s.Import(ctx, strings.NewReader("cc1 11361 [000]   464.971906:    2004008 cpu-clock:ppp: \n"), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			id, host string
			wall     subsecond.WallClock
		}{
			{rt.ID, "vm", subsecond.WallClock{Source: subsecond.WallRealtime}},
			// captured on Mon Nov 30 17:11:08 2026; last sample at 309.806709 s.
			{boot.ID, "db-7", subsecond.WallClock{Offset: 1796058668_500_000_000 - 309_806_709_000, Source: subsecond.WallCapturedOn, Approximate: true}},
			{bare.ID, subsecond.UnknownHost, subsecond.WallClock{}},
		} {
			p, err := e.s.Profile(ctx, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Host != tt.host || p.Wall != tt.wall {
				t.Errorf("profile %s: host %q, wall %+v; want %q, %+v", p.FileName, p.Host, p.Wall, tt.host, tt.wall)
			}
		}
		if rt.Host != "vm" || boot.Host != "db-7" {
			t.Errorf("Import returned hosts %q and %q; want vm and db-7", rt.Host, boot.Host)
		}
		if _, _, err := e.s.Import(ctx, strings.NewReader(smallCapture), store.ImportOptions{Host: "a b"}); !errors.Is(err, subsecond.ErrInvalid) {
			t.Errorf("Import with host %q: %v; want ErrInvalid", "a b", err)
		}
	})
}

// TestConcatenatedCapturesInBlocks imports two captures of different hosts
// concatenated into one input, cut into blocks so that the second header
// is parsed apart from the first: it is refused as one pass refuses it.
func TestConcatenatedCapturesInBlocks(t *testing.T) {
	capture := func(host string) []byte {
		text := genText(t, genConfig{CPUs: 2, Seconds: 2, Hz: 49, Seed: 5})
		return append([]byte("# ========\n# captured on    : Mon Nov 30 17:11:08 2026\n# hostname : "+host+"\n# ========\n#\n"), text...)
	}
	forEach(t, store.Options{Workers: 3, BlockSize: 2 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		_, _, err := e.s.Import(ctx, bytes.NewReader(append(capture("a"), capture("b")...)), store.ImportOptions{})
		if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), `from host "b" after one from host "a"`) {
			t.Errorf("Import of captures of hosts a and b: %v; want them refused", err)
		}
		e.assertEmpty()
		p, _, err := e.s.Import(ctx, bytes.NewReader(append(capture("a"), capture("a")...)), store.ImportOptions{})
		if err != nil || p.Host != "a" || p.Samples != 2*2*2*49 {
			t.Errorf("Import of two captures of host a: %v, %v; want one profile of host a", p, err)
		}
	})
}

func filterColumns(c *subsecond.Capture, r subsecond.Range, cpus []int32) subsecond.Columns {
	var out subsecond.Columns
	s := &c.Samples
	for i := range s.Time {
		keep := r.Contains(s.Time[i])
		if len(cpus) > 0 {
			in := false
			for _, cpu := range cpus {
				in = in || cpu == s.CPU[i]
			}
			keep = keep && in
		}
		if !keep {
			continue
		}
		out.AppendRange(s, i, i+1)
	}
	return out
}

// TestWindowMatchesCapture reads windows of a generated capture and of a
// real one, whose chunks code their stacks from the profile's stack nodes
// (subsecond.Tree), through a Store that has not loaded them: Window reads
// the tables (one packed row) with the chunks.
func TestWindowMatchesCapture(t *testing.T) {
	for _, tc := range []struct {
		name string
		text []byte
	}{
		{"generated", genText(t, genConfig{CPUs: 8, Seconds: 12, Hz: 49, Seed: 31, Start: 700.25})},
		{"real", readText(t, filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz"))},
	} {
		want := buildCapture(t, tc.text)
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, store.Options{}, func(t *testing.T, e *env) {
				ctx := context.Background()
				p, _, err := e.s.Import(ctx, bytes.NewReader(tc.text), store.ImportOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var rows int
				if err := e.db.QueryRow("SELECT count(*) FROM segments").Scan(&rows); err != nil || rows != 1 {
					t.Errorf("%s: %d rows of segments (%v); want the tables packed in one", tc.name, rows, err)
				}
				cold := store.New(e.b, store.Options{})
				t0 := p.T0()
				for _, tt := range []struct {
					name string
					r    subsecond.Range
					cpus []int32
				}{
					{"all", subsecond.Range{Start: 0, End: 1 << 62}, nil},
					{"window", subsecond.Range{Start: t0 + 1_500_000_000, End: t0 + 4_250_000_000}, nil},
					{"window on cpus", subsecond.Range{Start: t0 + 1_500_000_000, End: t0 + 4_250_000_000}, []int32{0, 5}},
					{"empty", subsecond.Range{Start: t0 + 3e9, End: t0 + 3e9}, nil},
					{"before", subsecond.Range{Start: 0, End: t0}, nil},
					{"extreme", subsecond.Range{Start: -1 << 63, End: 1<<63 - 1}, nil},
				} {
					got, err := cold.Window(ctx, p.ID, tt.r, tt.cpus)
					if err != nil {
						t.Fatalf("%s %s: %v", tc.name, tt.name, err)
					}
					ref := filterColumns(want, tt.r, tt.cpus)
					if tt.name == "window" && len(ref.Time) < 1000 {
						t.Fatalf("%s: the window holds %d samples; the test wants a busy one", tc.name, len(ref.Time))
					}
					what := tc.name + " " + tt.name
					diff(t, what+" Time", got.Time, ref.Time)
					diff(t, what+" CPU", got.CPU, ref.CPU)
					diff(t, what+" TID", got.TID, ref.TID)
					diff(t, what+" Stack", got.Stack, ref.Stack)
					diff(t, what+" Weight", got.Weight, ref.Weight)
				}
				if _, err := cold.Window(ctx, "aaaaaaaaaaaaaaaaaaaaaaaaaa", subsecond.Range{Start: 0, End: 1}, nil); !errors.Is(err, subsecond.ErrNotFound) {
					t.Errorf("Window of an unknown profile: %v; want ErrNotFound", err)
				}
			})
		})
	}
}

func TestMarkers(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		ms := []subsecond.Marker{{Time: 3e18, Text: "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out"}, {Time: 1e18, Text: "mlx5_core: reset"}}
		if n, err := e.s.AddMarkers(ctx, "node-1", ms); err != nil || n != (subsecond.MarkersAdded{Added: 2}) {
			t.Fatalf("AddMarkers = %+v, %v; want 2 new", n, err)
		}
		if n, err := e.s.AddMarkers(ctx, "node-1", ms[:1]); err != nil || n != (subsecond.MarkersAdded{}) {
			t.Errorf("AddMarkers of a stored marker = %+v, %v; want 0 new", n, err)
		}
		if _, err := e.s.AddMarkers(ctx, "node-1", []subsecond.Marker{{Time: 5, Text: "ok"}, {Time: 6, Text: ""}}); err == nil {
			t.Error("AddMarkers with an empty text: no error")
		}
		if _, err := e.s.AddMarkers(ctx, "a/b", ms); err == nil {
			t.Error("AddMarkers for host a/b: no error")
		}
		got, err := e.s.Markers(ctx, "node-1", 0, 4e18)
		if err != nil || len(got) != 2 || got[0] != ms[1] || got[1] != ms[0] {
			t.Errorf("Markers = %+v, %v; want both in time order, and nothing of the refused batch", got, err)
		}
		if got, _ := e.s.Markers(ctx, "node-1", 2e18, 4e18); len(got) != 1 {
			t.Errorf("Markers in [2e18, 4e18) = %+v; want one", got)
		}
		if got, err := e.s.Markers(ctx, "node-2", 0, 4e18); err != nil || got == nil || len(got) != 0 {
			t.Errorf("another host's markers = %+v, %v; want none", got, err)
		}
	})
}

// TestMarkersKeepNewest: a host keeps its newest markers, by time and then
// text in byte order on both backends ("B" before "a", which a locale's
// collation, such as en_US, orders the other way); the oldest beyond them are dropped in
// the same transaction as the new ones are added, other hosts' untouched.
func TestMarkersKeepNewest(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		add := func(host string, want subsecond.MarkersAdded, ms ...subsecond.Marker) {
			t.Helper()
			if got, err := store.AddMarkersKeeping(e.s, ctx, host, ms, 4); err != nil || got != want {
				t.Fatalf("AddMarkers(%s, %+v) = %+v, %v; want %+v", host, ms, got, err, want)
			}
		}
		add("other", subsecond.MarkersAdded{Added: 1}, subsecond.Marker{Time: 1, Text: "kept"})
		add("node-1", subsecond.MarkersAdded{Added: 3}, subsecond.Marker{Time: 10, Text: "x"}, subsecond.Marker{Time: 20, Text: "y"}, subsecond.Marker{Time: 30, Text: "z"})
		// Three more: the two oldest of the six go, one of them new.
		add("node-1", subsecond.MarkersAdded{Added: 3, Dropped: 2}, subsecond.Marker{Time: 5, Text: "older than all"},
			subsecond.Marker{Time: 20, Text: "a"}, subsecond.Marker{Time: 20, Text: "B"})
		want := []subsecond.Marker{{Time: 20, Text: "a"}, {Time: 20, Text: "y"}, {Time: 30, Text: "z"}}
		want = append([]subsecond.Marker{{Time: 20, Text: "B"}}, want...)
		got, err := e.s.Markers(ctx, "node-1", 0, 100)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("node-1's markers = %+v, %v; want the newest four %+v", got, err, want)
		}
		// At the limit, an older marker is added and dropped at once; a
		// stored one adds and drops nothing.
		add("node-1", subsecond.MarkersAdded{Added: 1, Dropped: 1}, subsecond.Marker{Time: 1, Text: "too old"})
		add("node-1", subsecond.MarkersAdded{}, subsecond.Marker{Time: 30, Text: "z"})
		// The tie at time 20: "B" is the oldest kept in byte order and
		// goes before "a" when a newer marker comes.
		add("node-1", subsecond.MarkersAdded{Added: 1, Dropped: 1}, subsecond.Marker{Time: 40, Text: "new"})
		if got, _ := e.s.Markers(ctx, "node-1", 0, 100); len(got) != 4 || got[0] != (subsecond.Marker{Time: 20, Text: "a"}) {
			t.Errorf("node-1's markers = %+v; want (20, a) the oldest of four", got)
		}
		if got, _ := e.s.Markers(ctx, "other", 0, 100); len(got) != 1 {
			t.Errorf("another host's markers = %+v; want its one", got)
		}
	})
}

// TestImportWithoutBlankLines imports captures whose records are not
// separated by blank lines (recorded without call chains), which cannot be
// cut into blocks: past 16 block sizes the rest is parsed as one stream.
// Samples, tables and the text's SHA-256 are as one pass makes them.
func TestImportWithoutBlankLines(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "app %d/%d [%03d] %d.%06d: 1000 cpu-clock: %x f%d+0x4 (/usr/bin/app)\n", 100+i%7, 100+i%7, i%4,
			50+i/1000, i%1000*1000, 0x400000+i%13*16, i%13)
	}
	text := []byte(b.String())
	want := buildCapture(t, text)
	sum := blake3Digest(text)
	forEach(t, store.Options{Workers: 2, BlockSize: 1 << 10}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Digest != sum {
			t.Errorf("Digest = %s; want the text's, %s", p.Digest, sum)
		}
		c, err := e.fresh().Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		compareCapture(t, c, want)
	})
}

// TestImportRefusesASpanNoHeatmapCanDraw: a capture whose two samples lie
// 9e9 s apart (a clock jump, a corrupted time) is refused with the reason,
// and nothing is stored; one spanning MaxSpan is taken.
func TestImportRefusesASpanNoHeatmapCanDraw(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		sample := func(sec int64) string {
			return fmt.Sprintf("a 1 [000] %d.000000: 1 cpu-clock:\n\tffffffff81000000 f (/x)\n\n", sec)
		}
		wide := sample(100) + sample(9_000_000_100)
		_, _, err := e.s.Import(ctx, strings.NewReader(wide), store.ImportOptions{Name: "wide"})
		if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), "more than the 720h0m0s a capture may span") {
			t.Errorf("Import of a 9e9 s span = %v; want ErrInvalid naming the limit", err)
		}
		if list, err := e.s.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("after the refusal the store lists %d profiles (%v); want none", len(list), err)
		}
		month := sample(100) + sample(100+subsecond.MaxSpan/1e9)
		if p, _, err := e.s.Import(ctx, strings.NewReader(month), store.ImportOptions{Name: "month"}); err != nil || p.Samples != 2 {
			t.Errorf("Import of a span of MaxSpan = %v, %v; want it stored", p, err)
		}
	})
}

// TestImportRefusesASecondNoViewReads: a capture holding more samples in
// one second than one view reads (Options.MaxSecondSamples; the server's
// --max-view-samples) is refused at import with the reason, and nothing is
// stored, since no view could ever show that second (a 268 KB upload of 49
// M identical samples in one second was stored, and each of its views then
// took tens of seconds and gigabytes, or 413). As many a second over
// several seconds, and samples without times, are stored.
func TestImportRefusesASecondNoViewReads(t *testing.T) {
	forEach(t, store.Options{MaxSecondSamples: 1000}, func(t *testing.T, e *env) {
		ctx := context.Background()
		at := func(sec, n int) string {
			return strings.Repeat(fmt.Sprintf("a 1 [000] %d.000000: 1 cpu-clock:\n\tffffffff81000000 f (/x)\n\n", sec), n)
		}
		_, _, err := e.s.Import(ctx, strings.NewReader(at(1, 5000)), store.ImportOptions{Name: "one second"})
		if !errors.Is(err, subsecond.ErrTooLarge) || !strings.Contains(err.Error(), "holds more than 1000 samples, more than one view reads") {
			t.Errorf("Import of 5000 samples in one second = %v; want ErrTooLarge naming the limit", err)
		}
		if list, err := e.s.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("after the refusal the store lists %d profiles (%v); want none", len(list), err)
		}
		if p, _, err := e.s.Import(ctx, strings.NewReader(at(1, 1000)+at(2, 1000)+at(3, 1000)), store.ImportOptions{Name: "three seconds"}); err != nil || p.Samples != 3000 {
			t.Errorf("Import of 1000 samples in each of 3 seconds = %v, %v; want it stored", p, err)
		}
		untimed := strings.Repeat("a 1 [000] 1 cpu-clock:\n\tffffffff81000000 f (/x)\n\n", 2000)
		if p, _, err := e.s.Import(ctx, strings.NewReader(untimed), store.ImportOptions{Name: "untimed"}); err != nil || p.Samples != 2000 {
			t.Errorf("Import of 2000 samples without times = %v, %v; want it stored", p, err)
		}
	})
}

// TestCachedCapture checks that CachedCapture answers from the capture
// cache alone: false for a capture not cached, which it does not load, the
// cached capture once Capture has loaded it, and ErrNotFound once the
// profile is deleted by another process.
func TestCachedCapture(t *testing.T) {
	text := genText(t, genConfig{CPUs: 2, Seconds: 2, Hz: 49, Seed: 3})
	forEach(t, store.Options{WarmLimit: -1}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok, err := e.s.CachedCapture(ctx, p.ID); ok || c != nil || err != nil {
			t.Fatalf("CachedCapture before any Capture = %v, %v, %v; want nil, false, nil", c, ok, err)
		}
		if got := e.s.CacheStats(); got.Hits+got.Misses != 0 {
			t.Errorf("CachedCapture of an uncached capture counted a lookup: %+v", got)
		}
		want, err := e.s.Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok, err := e.s.CachedCapture(ctx, p.ID); !ok || c != want || err != nil {
			t.Fatalf("CachedCapture after Capture = %p, %v, %v; want %p, true, nil", c, ok, err, want)
		}
		// Deleted through another process: the cache still holds it.
		if err := e.b.Delete(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := e.s.CachedCapture(ctx, p.ID); ok || !errors.Is(err, subsecond.ErrNotFound) {
			t.Errorf("CachedCapture after a delete elsewhere = %v, %v; want false, ErrNotFound", ok, err)
		}
		if _, ok, err := e.s.CachedCapture(ctx, p.ID); ok || err != nil {
			t.Errorf("CachedCapture once more = %v, %v; want false, nil (no longer cached)", ok, err)
		}
	})
}

// blake3Digest returns text's identity: its BLAKE3-256, hashed whole.
func blake3Digest(text []byte) string {
	return fmt.Sprintf("%s%x", store.DigestBLAKE3, blake3.Sum256(text))
}

// TestImportPause imports in 16 KB blocks with a Pause that counts its
// calls: it is called before each block but the first, with the import's
// context, and what is stored is what an import without it stores.
func TestImportPause(t *testing.T) {
	text := genText(t, genConfig{CPUs: 8, Seconds: 6, Hz: 49, Seed: 7, Start: 5000.5})
	const block = 16 << 10
	forEach(t, store.Options{Workers: 2, BlockSize: block}, func(t *testing.T, e *env) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "import")
		var calls, foreign int
		p, _, err := e.s.Import(ctx, bytes.NewReader(text), store.ImportOptions{FileName: "gen.perf", Pause: func(c context.Context) {
			calls++
			if c.Value(key{}) != "import" {
				foreign++
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Blocks end at the last blank line within the block size, so
		// they are a little smaller.
		if least := len(text) / block; calls < least || calls > least*3/2 {
			t.Errorf("Pause called %d times for %d bytes of text in blocks of %d; want about one per block", calls, len(text), block)
		}
		if foreign > 0 {
			t.Errorf("Pause called %d times without the import's context", foreign)
		}
		if p.Samples != 8*6*49 || p.Digest != blake3Digest(text) {
			t.Errorf("Samples %d, digest %s; want %d and the text's", p.Samples, p.Digest, 8*6*49)
		}
	})
}
