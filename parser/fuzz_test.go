package parser

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
)

// FuzzScanner feeds arbitrary text to the Scanner in both modes. It must
// never panic, and what it yields must be consistent: header line numbers
// increase and lie within the lines read, frame IDs match frames, and a
// strict scan fails only with a SyntaxError. The text read in place
// (ResetBytes) yields exactly what it yields through a reader, and a
// Scanner Reset after reading other text yields the same samples, its
// frame IDs still standing each for one text.
func FuzzScanner(f *testing.F) {
	seeds, err := scannerSeeds()
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range seeds {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, strict := range []bool{false, true} {
			sc := NewScanner(bytes.NewReader(data), Options{Strict: strict, MaxWarnings: 5})
			last := 0
			for sc.Scan() {
				s := sc.Sample()
				if s.Line <= last || s.Line > sc.Line() {
					t.Fatalf("sample line %d after %d, %d lines read", s.Line, last, sc.Line())
				}
				last = s.Line
				if len(sc.FrameIDs()) != len(s.Frames) {
					t.Fatalf("%d frame IDs for %d frames", len(sc.FrameIDs()), len(s.Frames))
				}
				for _, fr := range s.Frames {
					if fr.Kind > subsecond.KindInlined {
						t.Fatalf("frame kind %d", fr.Kind)
					}
				}
			}
			err := sc.Err()
			var se *SyntaxError
			switch {
			case err == nil:
			case strict && errors.As(err, &se):
				if se.Line < 1 || se.Line > sc.Line() {
					t.Fatalf("error at line %d of %d", se.Line, sc.Line())
				}
			case !strict && errors.Is(err, subsecond.ErrNotPerf):
			default:
				t.Fatalf("strict=%v: unexpected error %v", strict, err)
			}
			if n, ws := sc.Warnings(); len(ws) > 5 || len(ws) > n || (strict && n > 0) {
				t.Fatalf("warnings %d, kept %d", n, len(ws))
			}
			if err == nil && sc.Bytes() != int64(len(data)) {
				t.Fatalf("read %d of %d bytes", sc.Bytes(), len(data))
			}

			opt := Options{Strict: strict, MaxWarnings: 5}
			want := scanWith(NewScanner(bytes.NewReader(data), opt))
			inPlace := NewScanner(nil, opt)
			inPlace.ResetBytes(data, opt)
			sameScan(t, "ResetBytes", scanWith(inPlace), want, true)
			reused := NewScanner(strings.NewReader(fuzzPrelude), Options{})
			seen := map[uint32]frameText{}
			checkIDs(t, "prelude", scanWith(reused), seen)
			reused.Reset(bytes.NewReader(data), opt)
			got := scanWith(reused)
			sameScan(t, "Reset", got, want, false)
			checkIDs(t, "Reset", got, seen)
		}
	})
}

// scannerSeeds returns FuzzScanner's seeds: the start (seedExcerpt) of
// each of the conformance corpus's inputs (folded/testdata/corpus) and of
// one real capture per perf script form (testdata/perf), and three short
// texts of edge cases.
func scannerSeeds() ([][]byte, error) {
	inputs, _ := filepath.Glob(filepath.Join("..", "folded", "testdata", "corpus", "inputs", "*", "*"))
	if len(inputs) == 0 {
		return nil, errors.New("no seed inputs in ../folded/testdata/corpus/inputs")
	}
	forms, _ := filepath.Glob(filepath.Join(formsDir, "*.perf.txt.*"))
	if len(forms) == 0 {
		return nil, errors.New("no seed inputs in " + formsDir)
	}
	var seeds [][]byte
	for _, p := range append(inputs, forms...) {
		fh, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		r, err := decompress.NewReader(fh)
		if err == nil {
			var b []byte
			if b, err = io.ReadAll(r); err == nil {
				seeds = append(seeds, seedExcerpt(b))
			}
		}
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return append(seeds,
		[]byte("a 1 [000] 1.0: cycles:\n\t1 f (x)\n\n"),
		[]byte("       c 3 [001] 1.000004: 7 cycles:      4 h+0x2 (/bin/c)\r\n"),
		[]byte(fuzzPrelude)), nil
}

// TestScannerSeedsSmall: FuzzScanner's seeds are at most seedMax bytes and
// end at a line end (a sample's start, not half a line), so that the
// fuzzer keeps executing instead of stalling on minimizing big inputs (it
// ran at 0 execs/s most of the time with whole captures as seeds), and
// the corpus and every perf script form are among them.
func TestScannerSeedsSmall(t *testing.T) {
	seeds, err := scannerSeeds()
	if err != nil {
		t.Fatal(err)
	}
	forms, _ := filepath.Glob(filepath.Join(formsDir, "*.perf.txt.*"))
	if len(seeds) < len(forms)+10 {
		t.Errorf("%d seeds; want the corpus's inputs and the %d forms", len(seeds), len(forms))
	}
	cut := 0
	for i, b := range seeds {
		if len(b) > seedMax {
			t.Errorf("seed %d is %d bytes; want at most %d", i, len(b), seedMax)
		}
		if len(b) > seedMax/2 {
			cut++
			if b[len(b)-1] != '\n' {
				t.Errorf("seed %d (%d bytes) ends inside a line: %q", i, len(b), b[max(0, len(b)-40):])
			}
		}
	}
	if cut == 0 {
		t.Errorf("no seed was cut near seedMax; the real captures should be")
	}
}

// seedMax is the largest seed FuzzScanner adds. Each execution scans its
// input eight times and the fuzzer minimizes every input that finds new
// coverage, so a seed of a few kilobytes keeps executions flowing where
// seeds of 16 KB stalled them at a few a second.
const seedMax = 2 << 10

// seedExcerpt returns the start of b, at most seedMax bytes, ending at a
// line end where there is one: the header and first samples of a capture.
func seedExcerpt(b []byte) []byte {
	if len(b) <= seedMax {
		return b
	}
	b = b[:seedMax]
	if i := bytes.LastIndexByte(b, '\n'); i > 0 {
		b = b[:i+1]
	}
	return b
}

// fuzzPrelude is what FuzzScanner's reused Scanner reads before the fuzzed
// text: frames the text may repeat at other addresses, an inlined one and
// a source line.
const fuzzPrelude = `a 1 [000] 1.0: cycles:
	1 f (x)
	ffffffff81000000 g+0x2 ([kernel.kallsyms])
	5 h (inlined)
	7 k (/bin/c)
  c.c:12

`
