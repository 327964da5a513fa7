package parser

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// scanned is everything a Scanner reports of one input.
type scanned struct {
	samples []subsecond.Sample
	ids     [][]uint32
	err     error
	nwarn   int
	warns   []subsecond.Warning
	meta    subsecond.Metadata
	lines   int
	bytes   int64
	state   State
}

// scanWith scans sc to its end.
func scanWith(sc *Scanner) scanned {
	var r scanned
	for sc.Scan() {
		s := *sc.Sample()
		s.Frames = append([]subsecond.Frame(nil), s.Frames...)
		r.samples = append(r.samples, s)
		r.ids = append(r.ids, append([]uint32(nil), sc.FrameIDs()...))
	}
	r.err = sc.Err()
	r.nwarn, r.warns = sc.Warnings()
	r.meta, r.lines, r.bytes, r.state = sc.Metadata(), sc.Line(), sc.Bytes(), sc.State()
	return r
}

// sameScan fails unless got reports what want does. With ids false, frame
// IDs are not compared (a reused Scanner numbers texts from its earlier
// inputs on); checkIDs checks them instead.
func sameScan(t testing.TB, what string, got, want scanned, ids bool) {
	t.Helper()
	if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
		t.Fatalf("%s: error %v; want %v", what, got.err, want.err)
	}
	if !ids {
		got.ids, want.ids = nil, nil
	}
	got.err, want.err = nil, nil
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got.samples), len(want.samples)) {
			if !reflect.DeepEqual(got.samples[i], want.samples[i]) {
				t.Fatalf("%s: sample %d is %+v; want %+v", what, i, got.samples[i], want.samples[i])
			}
		}
		t.Fatalf("%s: %d samples, %d lines, %d bytes, %d warnings %v, metadata %+v, state %+v; "+
			"want %d samples, %d lines, %d bytes, %d warnings %v, metadata %+v, state %+v", what,
			len(got.samples), got.lines, got.bytes, got.nwarn, got.warns, got.meta, got.state,
			len(want.samples), want.lines, want.bytes, want.nwarn, want.warns, want.meta, want.state)
	}
}

// frameText is what a frame ID stands for: the frame's text as printed.
type frameText struct {
	sym, dso string
	off      uint64
	inline   bool
}

// checkIDs fails unless equal IDs in r stand for equal frame texts, using
// and extending seen (ID → text) across inputs.
func checkIDs(t testing.TB, what string, r scanned, seen map[uint32]frameText) {
	t.Helper()
	for i, s := range r.samples {
		for k, f := range s.Frames {
			id, ft := r.ids[i][k], frameText{f.Symbol, f.DSO, f.Offset, f.Inline}
			if prev, ok := seen[id]; ok && prev != ft {
				t.Fatalf("%s: sample %d frame %d: ID %d is %+v; it was %+v", what, i, k, id, ft, prev)
			}
			seen[id] = ft
		}
	}
}

// TestReset reads a real capture cut into pieces at blank lines, each piece
// after the previous one's state, three ways: a new Scanner per piece, one
// Scanner Reset for each, and one Scanner given each piece by ResetBytes.
// All three report the same samples, lines, warnings and metadata; the
// reused Scanners keep each frame text's ID from piece to piece.
func TestReset(t *testing.T) {
	text, err := io.ReadAll(openCapture(t, filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz")))
	if err != nil {
		t.Fatal(err)
	}
	var pieces [][]byte
	for len(text) > 0 {
		n := min(len(text), 200<<10)
		if i := bytes.Index(text[n:], []byte("\n\n")); i >= 0 {
			n += i + 2
		} else {
			n = len(text)
		}
		pieces, text = append(pieces, text[:n]), text[n:]
	}
	if len(pieces) < 5 {
		t.Fatalf("%d pieces; want several", len(pieces))
	}
	reused, inPlace := NewScanner(strings.NewReader(""), Options{}), NewScanner(strings.NewReader(""), Options{})
	var after *State
	seenReused, seenInPlace := map[uint32]frameText{}, map[uint32]frameText{}
	maxID := uint32(0)
	for i, p := range pieces {
		opt := Options{Strict: true, After: after}
		want := scanWith(NewScanner(bytes.NewReader(p), opt))
		if want.err != nil || len(want.samples) == 0 {
			t.Fatalf("piece %d: %d samples, error %v", i, len(want.samples), want.err)
		}
		if !reused.Reset(bytes.NewReader(p), opt) {
			t.Fatalf("piece %d: Reset forgot the frame texts", i)
		}
		got := scanWith(reused)
		sameScan(t, fmt.Sprintf("piece %d, Reset", i), got, want, i == 0)
		checkIDs(t, fmt.Sprintf("piece %d, Reset", i), got, seenReused)
		inPlace.ResetBytes(p, opt)
		gotInPlace := scanWith(inPlace)
		sameScan(t, fmt.Sprintf("piece %d, ResetBytes", i), gotInPlace, got, true)
		checkIDs(t, fmt.Sprintf("piece %d, ResetBytes", i), gotInPlace, seenInPlace)
		for _, ids := range got.ids {
			for _, id := range ids {
				maxID = max(maxID, id)
			}
		}
		st := want.state
		after = &st
	}
	// The IDs stay dense: one per distinct text over the whole capture.
	if int(maxID)+1 != len(seenReused) {
		t.Errorf("highest frame ID %d for %d distinct texts; want IDs 0 to %d", maxID, len(seenReused), len(seenReused)-1)
	}
}

// TestResetForgets checks that Reset forgets the frame texts once there are
// more than maxKeptFrames of them, and that IDs then start again from 0.
func TestResetForgets(t *testing.T) {
	var b strings.Builder
	b.WriteString("a 1 [000] 1.0: cycles:\n")
	for i := range maxKeptFrames + 1 {
		fmt.Fprintf(&b, "\t%x f%d (/x)\n", i, i)
	}
	b.WriteString("\n")
	sc := NewScanner(strings.NewReader(b.String()), Options{})
	if !sc.Scan() || len(sc.Sample().Frames) != maxKeptFrames+1 {
		t.Fatalf("Scan: %v", sc.Err())
	}
	if sc.Reset(strings.NewReader("a 1 [000] 1.0: cycles:\n\t1 g (/x)\n\n"), Options{}) {
		t.Errorf("Reset after %d frame texts kept them; want them forgotten", maxKeptFrames+1)
	}
	if !sc.Scan() || sc.Sample().Frames[0].Symbol != "g" || sc.FrameIDs()[0] != 0 {
		t.Errorf("after Reset: %+v, IDs %v; want frame g with ID 0", sc.Sample().Frames, sc.FrameIDs())
	}
}

// TestInPlaceEdges reads stack lines whose text repeats at one address,
// with the line endings and blanks that make the in-place reading of
// ResetBytes decline, in place and through a reader: both must yield the
// same samples and frame IDs.
func TestInPlaceEdges(t *testing.T) {
	const head = "a 1 [000] 1.0: cycles:\n"
	for _, text := range []string{
		"\t    ab f (x)\n\t    ab f (x)\n\n",
		"\t    ab f (x)\r\n\t    ab f (x)\r\n\r\n",
		"\t    ab f (x)\r\r\n\t    ab f (x)\r\r\n\t    ab f (x)\r\n\n",
		"\t    ab f (x)\r\n\t    ab f (x)\r\r\n\t    ab f (x)\n\n",
		"\t    ab f (x) \n\t    ab f (x)\n\t    ab f (x)  \n\n",
		"\t    ab f (x)\n\t    ab  f (x)\n\t    ab\tf (x)\n\n",
		"\t    ab f (x)\n\t    ab f (x)",
		"\t    ab f (x)\n\t    ab f (x)\n",
		"\t    ab \n\t    ab \n\t    ab\n\n",
		"\t    ab f (x)\n\t    ab f (x)y\n\t    ab f (x\n\n",
		"\t    ab f (x)\n    ab f (x)\n\t   ab f (x)\n\t     ab f (x)\n\n",
		"\t    ab f (x)\n\t    ab f (x)\n    c.c:3\n\t    ab f (x)\n  c.c:4 (inlined)\n\n",
	} {
		// perf's address field: 16 columns.
		text = strings.NewReplacer("\t    ab", "\t              ab", "\t   ab", "\t             ab",
			"\t     ab", "\t               ab").Replace(text)
		for _, in := range []string{head + text, head + text + head + text} {
			for _, strict := range []bool{false, true} {
				opt := Options{Strict: strict}
				want := scanWith(NewScanner(strings.NewReader(in), opt))
				sc := NewScanner(nil, opt)
				sc.ResetBytes([]byte(in), opt)
				sameScan(t, fmt.Sprintf("%q strict=%v", in, strict), scanWith(sc), want, true)
			}
		}
	}
}
