package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/subsecond/subsecond"
)

// goldenInterner returns tables shaped like a real capture's: stacks that
// share prefixes and branch, call sites of one function at several
// addresses, the same library mapped at two bases, kernel frames under
// user ones, inlined frames and source lines.
func goldenInterner() *subsecond.Interner {
	in := subsecond.NewInterner()
	libc := "/usr/lib/x86_64-linux-gnu/libc.so.6"
	fr := func(sym, dso string, addr uint64) subsecond.Frame {
		f := subsecond.Frame{Symbol: sym, DSO: dso, Addr: addr}
		if dso == "[kernel.kallsyms]" {
			f.Kind = subsecond.KindKernel
		}
		return f
	}
	kernel := []subsecond.Frame{fr("clear_page_erms", "[kernel.kallsyms]", 0xffffffff81a2b3c7),
		fr("do_anonymous_page", "[kernel.kallsyms]", 0xffffffff812c4d21), fr("handle_mm_fault", "[kernel.kallsyms]", 0xffffffff812c9f0e),
		fr("asm_exc_page_fault", "[kernel.kallsyms]", 0xffffffff81c00b62)}
	for base, pid := range []uint64{0x7f3a12000000, 0x7f9c44000000} {
		for i := range 6 {
			leafFirst := []subsecond.Frame{fr("memset", libc, uint64(base)+0x1a2b40+uint64(i%3)*0x10)}
			if i%2 == 1 {
				leafFirst = append(append([]subsecond.Frame{}, kernel...), leafFirst...)
			}
			for d := range 3 + i {
				leafFirst = append(leafFirst, fr(fmt.Sprintf("cmd/compile/internal/ssa.(*state).f%d", d), "/usr/local/go/pkg/tool/linux_amd64/compile",
					0x4a0000+uint64(d)*0x1234+uint64(i%2)*0x40))
			}
			leafFirst = append(leafFirst, fr("__libc_start_call_main", libc, uint64(base)+0x2724a))
			in.String(fmt.Sprintf("comm-%d", pid))
			in.Stack(leafFirst)
		}
	}
	in.Stack([]subsecond.Frame{{Symbol: "inlined_helper", SrcLine: "x.c:12", Inline: true, Kind: subsecond.KindInlined, Addr: 0x401000},
		{Symbol: "[unknown]", DSO: "[unknown]", Kind: subsecond.KindUnknown}, {Symbol: "main", DSO: "/bin/x", SrcLine: "x.c:1", Addr: math64}})
	return in
}

const math64 = 1<<64 - 1

// segmentBytesOf returns the decompressed segments, each as its kind, its
// sequence, its length and its bytes.
func segmentBytesOf(t *testing.T, segs []Segment) []byte {
	t.Helper()
	var e enc
	for _, s := range segs {
		raw, err := unzstd(nil, s.Data)
		if err != nil {
			t.Fatal(err)
		}
		e.uvarint(uint64(s.Kind))
		e.uvarint(uint64(s.Seq))
		e.bytes(raw)
	}
	return e.b
}

// segmentsOf is the inverse of segmentBytesOf.
func segmentsOf(t *testing.T, b []byte) []Segment {
	t.Helper()
	d := dec{b: b}
	var segs []Segment
	for len(d.b) > 0 && d.err == nil {
		s := Segment{Kind: SegmentKind(d.uvarint()), Seq: int32(d.uvarint())}
		s.Data = zstdBlob(d.bytes())
		segs = append(segs, s)
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	return segs
}

// TestSegmentFormats pins the bytes of table segments: every format
// written since the first release must still decode to the same tables,
// so that existing databases stay readable, and the current format's bytes
// must not change unnoticed.
func TestSegmentFormats(t *testing.T) {
	in := goldenInterner()
	for f := 1; f <= segmentFormat; f++ {
		golden := filepath.Join("testdata", fmt.Sprintf("segments-format%d.bin", f))
		if *update && f == segmentFormat {
			if err := os.WriteFile(golden, segmentBytesOf(t, encodeSegments(in)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		var c subsecond.Capture
		if err := decodeSegments(segmentsOf(t, want), &c); err != nil {
			t.Fatalf("decode %s: %v", golden, err)
		}
		if !reflect.DeepEqual(c.Strings, in.Strings) || !reflect.DeepEqual(c.Frames, in.Frames) || !reflect.DeepEqual(c.Nodes, in.Nodes) {
			t.Errorf("%s decodes to other tables than goldenInterner's", golden)
		}
		if f == segmentFormat {
			for _, s := range encodeSegments(in) {
				raw, err := unzstd(nil, s.Data)
				if err != nil {
					t.Fatal(err)
				}
				if want := map[SegmentKind]byte{SegStrings: 3, SegFrames: 4, SegNodes: 5}[s.Kind]; raw[0] != want {
					t.Errorf("segment kind %d written in format %d; want %d", s.Kind, raw[0], want)
				}
			}
			if got := segmentBytesOf(t, encodeSegments(in)); !bytes.Equal(got, want) {
				t.Errorf("encodeSegments(goldenInterner()) differs from %s: a format %d segment's bytes changed", golden, f)
			}
		}
	}
}

// TestSegmentsRefuseDamage decodes cut and altered segments: each must
// fail with errCorrupt or decode to tables within their bounds, never
// panic.
func TestSegmentsRefuseDamage(t *testing.T) {
	// A small random tree's nodes have parents far from the node before
	// them and frames not predicted, which goldenInterner's have not.
	tree := randomTree(rand.New(rand.NewPCG(5, 24)), 30, 40)
	if len(tree.Nodes) > 200 {
		tree.Nodes = tree.Nodes[:200]
	}
	// Random frames have whole addresses and unpredicted symbols.
	frames := randomInterner(rand.New(rand.NewPCG(6, 24)))
	for _, segs := range [][]Segment{encodeSegments(goldenInterner()), encodeSegments(tree), encodeSegments(frames)} {
		refuseDamage(t, segs)
	}
}

func refuseDamage(t *testing.T, segs []Segment) {
	for i, s := range segs {
		raw, err := unzstd(nil, s.Data)
		if err != nil {
			t.Fatal(err)
		}
		try := func(what string, b []byte) {
			bad := append([]Segment(nil), segs...)
			bad[i].Data = zstdBlob(b)
			var c subsecond.Capture
			if err := decodeSegments(bad, &c); err != nil {
				if !errors.Is(err, errCorrupt) {
					t.Errorf("segment %d %s: %v; want errCorrupt", i, what, err)
				}
				return
			}
			for _, n := range c.Nodes[1:] {
				if n.Parent < 0 || int(n.Parent) >= len(c.Nodes) || n.Frame < 0 || int(n.Frame) >= len(c.Frames) {
					t.Fatalf("segment %d %s: node %+v out of range", i, what, n)
				}
			}
		}
		for cut := 0; cut < len(raw); cut += 3 {
			try(fmt.Sprintf("cut at %d", cut), raw[:cut])
		}
		for at := 1; at < len(raw); at += 5 {
			b := bytes.Clone(raw)
			b[at] ^= 0x5a
			try(fmt.Sprintf("altered at %d", at), b)
		}
	}
}

// randomInterner returns tables of random stacks drawn from a few
// programs: symbols shared between DSOs, call sites of one function at
// several addresses, garbage addresses under [unknown] frames, kinds,
// inlined frames, source lines, and strings holding NUL bytes.
func randomInterner(r *rand.Rand) *subsecond.Interner {
	in := subsecond.NewInterner()
	syms := []string{"main", "f\x00g", "\x00", "x\x00", "[unknown]", "runtime.mallocgc", "std::vector<int>::push_back"}
	for i := range 40 {
		syms = append(syms, fmt.Sprintf("pkg%d.fn%d", i%7, i))
	}
	dsos := []string{"[kernel.kallsyms]", "/bin/x", "[unknown]", "/lib/\x00libc.so", ""}
	frame := func() subsecond.Frame {
		f := subsecond.Frame{Symbol: syms[r.IntN(len(syms))], DSO: dsos[r.IntN(len(dsos))],
			Kind: subsecond.FrameKind(r.IntN(int(subsecond.KindInlined) + 1))}
		switch r.IntN(4) {
		case 0:
			f.Addr = r.Uint64() // stack garbage
		case 1:
			f.Addr = 0x7f0000000000 + uint64(r.IntN(1<<20))
		default:
			f.Addr = 0x400000 + uint64(len(f.Symbol))*0x100 + uint64(r.IntN(64))
		}
		if r.IntN(8) == 0 {
			f.SrcLine, f.Inline = fmt.Sprintf("x.c:%d", r.IntN(50)), true
		}
		return f
	}
	var stacks [][]subsecond.Frame
	for range 300 {
		var s []subsecond.Frame
		if len(stacks) > 0 && r.IntN(3) > 0 { // share a caller's part of an earlier stack
			old := stacks[r.IntN(len(stacks))]
			s = append(s, old[r.IntN(len(old)):]...)
		}
		for range r.IntN(6) {
			s = append([]subsecond.Frame{frame()}, s...)
		}
		if r.IntN(10) == 0 {
			in.String(fmt.Sprintf("comm\x00%d", r.IntN(5)))
		}
		in.Stack(s)
		if len(s) > 0 {
			stacks = append(stacks, s)
		}
	}
	return in
}

// TestSegmentsRoundTripRandom encodes and decodes random tables: they must
// come back exactly.
func TestSegmentsRoundTripRandom(t *testing.T) {
	for seed := range uint64(70) {
		in := randomInterner(rand.New(rand.NewPCG(seed, 24)))
		if seed >= 50 {
			in = randomTree(rand.New(rand.NewPCG(seed, 24)), 400, 300)
		}
		var c subsecond.Capture
		if err := decodeSegments(encodeSegments(in), &c); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(c.Strings, in.Strings) || !reflect.DeepEqual(c.Frames, in.Frames) || !reflect.DeepEqual(c.Nodes, in.Nodes) {
			t.Fatalf("seed %d: tables differ after a round trip", seed)
		}
	}
}

// TestSegmentsRefuseMixedNodes decodes a nodes segment of the current
// format after nodes of an older one (no encoder writes that): formats 4
// and 5 code each node in the context of its parent's code, which older
// nodes lack, and format 5 its parent by the parents coded before it, so
// the decoder must refuse it rather than index past what it knows.
func TestSegmentsRefuseMixedNodes(t *testing.T) {
	in := goldenInterner()
	for _, f := range []int{3, 4} {
		old, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("segments-format%d.bin", f)))
		if err != nil {
			t.Fatal(err)
		}
		segs := segmentsOf(t, old)
		for _, s := range encodeSegments(in) {
			if s.Kind != SegNodes {
				continue
			}
			raw, err := unzstd(nil, s.Data)
			if err != nil {
				t.Fatal(err)
			}
			d := dec{b: raw[1:]}
			d.uvarint() // first
			var e enc
			e.byte(raw[0])
			e.uvarint(uint64(len(in.Nodes)))
			segs = append(segs, Segment{Kind: SegNodes, Seq: 1, Data: zstdBlob(append(e.b, d.b...))})
		}
		var c subsecond.Capture
		if err := decodeSegments(segs, &c); !errors.Is(err, errCorrupt) {
			t.Fatalf("format %d nodes after format %d ones: %v; want errCorrupt", segmentFormat, f, err)
		}
	}
}

// TestFrames4Codes checks that random tables exercise every kind of
// format 4 frame code (so that TestSegmentsRoundTripRandom round-trips
// each): symbols predicted and not, DSOs predicted, recent and neither,
// whole addresses, and differences from each source of prediction.
func TestFrames4Codes(t *testing.T) {
	var symPred, symRaw4, whole int
	var from, dsos [3]int
	for seed := range uint64(50) {
		in := randomInterner(rand.New(rand.NewPCG(seed, 24)))
		fc := newFrameCoder(len(in.Strings), in.Frames, in.Nodes)
		fc.models = newFrameModels()
		for i := range in.Frames {
			f := &in.Frames[i]
			fc.at(i)
			if fc.symCode(f.Symbol) < symRaw {
				symPred++
			} else {
				symRaw4++
			}
			switch {
			case fc.dsoCode(f.Symbol, f.DSO) <= 1:
				dsos[0]++
			case slices.Contains(fc.models.dsos[:], f.DSO+1):
				dsos[1]++
			default:
				dsos[2]++
			}
			fc.noteDSO(f.DSO)
			k := byte(f.Kind)
			if zigzag(int64(f.Addr-fc.addrPrediction(f.Symbol, f.DSO))) >= rawAddrAbove {
				whole++
				k |= rawAddrBit
			} else {
				from[fc.addrContext(f.Symbol, f.DSO, f.Kind)/4]++
			}
			fc.seen(f, k)
		}
	}
	if symPred == 0 || symRaw4 == 0 || whole == 0 || slices.Contains(from[:], 0) || slices.Contains(dsos[:], 0) {
		t.Errorf("random frames: %d symbols predicted, %d not, %v DSOs predicted, recent, neither, %d whole addresses, %v differences from the symbol's, the DSO's, none; want each",
			symPred, symRaw4, dsos, whole, from)
	}
}

// TestPackSegments packs a capture's segments into one row and back, and
// segments over segmentBytes into several; a packed row decodes to the
// tables its segments make, beside rows of the other kinds (a profile
// stored before packing), and a damaged one is refused with errCorrupt.
func TestPackSegments(t *testing.T) {
	in := goldenInterner()
	segs := encodeSegments(in)
	packed := packSegments(segs)
	if len(packed) != 1 || packed[0].Kind != SegPacked || packed[0].Seq != 0 {
		t.Fatalf("packed %d segments into %+v; want one SegPacked row", len(segs), packed)
	}
	back, err := unpackSegments(packed)
	if err != nil || !reflect.DeepEqual(back, segs) {
		t.Fatalf("unpacked %v, %v; want the segments packed", back, err)
	}
	var c subsecond.Capture
	if err := decodeSegments(packed, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Strings, in.Strings) || !slices.Equal(c.Frames, in.Frames) || !slices.Equal(c.Nodes, in.Nodes) {
		t.Error("the packed row decodes to other tables")
	}
	// Old rows of a kind stay as they are.
	mixed := append(append([]Segment(nil), segs[0]), packSegments(segs[1:])...)
	if back, err := unpackSegments(mixed); err != nil || !reflect.DeepEqual(back, segs) {
		t.Errorf("unpacked a strings row and a packed one: %v, %v", back, err)
	}
	// Large segments take a row each, in order, numbered from 0.
	big := []Segment{{Kind: SegStrings, Seq: 0, Data: make([]byte, segmentBytes-100)}, {Kind: SegStrings, Seq: 1, Data: make([]byte, 200)},
		{Kind: SegFrames, Seq: 0, Data: make([]byte, 50)}, {Kind: SegNodes, Seq: 0, Data: make([]byte, segmentBytes+1)}}
	rows := packSegments(big)
	if len(rows) != 3 || rows[2].Seq != 2 {
		t.Fatalf("packed into %d rows; want 3 (the first alone, the next two, the last alone)", len(rows))
	}
	if back, err := unpackSegments(rows); err != nil || !reflect.DeepEqual(back, big) {
		t.Errorf("unpacked large segments: %v", err)
	}
	raw := packed[0].Data
	for cut := 0; cut < len(raw); cut += max(1, len(raw)/300) {
		if _, err := unpackSegments([]Segment{{Kind: SegPacked, Data: raw[:cut]}}); !errors.Is(err, errCorrupt) {
			t.Fatalf("packed row cut at %d: %v; want errCorrupt", cut, err)
		}
	}
	for _, bad := range [][]byte{{2, 0}, {1, 1, 4, 0, 0}, append(bytes.Clone(raw), 0)} {
		if _, err := unpackSegments([]Segment{{Kind: SegPacked, Data: bad}}); !errors.Is(err, errCorrupt) {
			t.Errorf("packed row %x…: %v; want errCorrupt", bad[:min(len(bad), 8)], err)
		}
	}
}

// FuzzDecodePackedSegments feeds arbitrary bytes to the table decoder as a
// packed row: it must fail with errCorrupt or return tables whose nodes
// stay within them, never panic.
func FuzzDecodePackedSegments(f *testing.F) {
	f.Add(packSegments(encodeSegments(goldenInterner()))[0].Data)
	f.Add([]byte{1, 1, 1, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c subsecond.Capture
		if err := decodeSegments([]Segment{{Kind: SegPacked, Data: b}}, &c); err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("%v; want errCorrupt", err)
			}
			return
		}
		for _, n := range c.Nodes[1:] {
			if n.Parent < 0 || int(n.Parent) >= len(c.Nodes) || n.Frame < 0 || int(n.Frame) >= len(c.Frames) {
				t.Fatalf("node %+v out of range", n)
			}
		}
	})
}

// TestNodeStream codes stack nodes as an import's merge hands them over,
// in batches of random sizes and with the frames known so far, and
// checks that the segments are those of coding the whole table at once:
// for the golden tables, and for a random table of more nodes than a
// segment takes, whose frames grow with its nodes.
func TestNodeStream(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	big := &subsecond.Interner{Nodes: []subsecond.StackNode{{Parent: -1, Frame: -1}}}
	frames := 0
	for i := 1; i < segmentEntries+segmentEntries/2; i++ {
		p := int32(i - 1)
		if r.IntN(5) == 0 {
			p = int32(r.IntN(i))
		}
		f := int32(r.IntN(frames + 1))
		if f == int32(frames) {
			frames++
		}
		big.Nodes = append(big.Nodes, subsecond.StackNode{Parent: p, Frame: f})
	}
	big.Frames = make([]subsecond.FrameRec, frames)
	for _, in := range []*subsecond.Interner{goldenInterner(), big} {
		want := encodeNodeSegments(in)
		s := newNodeStream()
		for at := 1; at < len(in.Nodes); {
			at = min(len(in.Nodes), at+1+r.IntN(max(2, len(in.Nodes)/20)))
			seen := 0 // the frames the nodes so far use
			for _, n := range in.Nodes[1:at] {
				seen = max(seen, int(n.Frame)+1)
			}
			s.add(in.Nodes[:at], seen)
		}
		got := s.finish(in.Nodes, len(in.Frames))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d nodes coded in batches: %d segments, not the %d of coding them at once (or other bytes)", len(in.Nodes), len(got), len(want))
		}
		if in == big && len(got) != 2 {
			t.Errorf("%d nodes in %d segments; want 2", len(in.Nodes), len(got))
		}
	}
}

// TestFrameStream codes frames as an import's merge hands them over, in
// batches of random sizes, each frame table's prefix ahead of the nodes
// made with its frames (a frame waits for its first node): the segments
// must be those of coding the whole table at once, across a segment
// boundary too, with frames no node uses.
func TestFrameStream(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	var ins []*subsecond.Interner
	for seed := range uint64(8) {
		in := randomInterner(rand.New(rand.NewPCG(seed, 5)))
		for range 5 { // frames of no stack
			in.Frame(&subsecond.Frame{Symbol: fmt.Sprintf("alone%d", r.IntN(3)), DSO: "/bin/y", Addr: r.Uint64()})
		}
		ins = append(ins, in)
	}
	big := &subsecond.Interner{Nodes: []subsecond.StackNode{{Parent: -1, Frame: -1}}}
	const strs = 5000
	big.Strings = make([]string, strs)
	for len(big.Frames) < segmentEntries+segmentEntries/3 {
		f := subsecond.FrameRec{Symbol: uint32(r.IntN(strs)), DSO: uint32(r.IntN(50)), Addr: 0x400000 + uint64(r.IntN(1<<16)),
			Kind: subsecond.FrameKind(r.IntN(int(subsecond.KindInlined) + 1))}
		big.Frames = append(big.Frames, f)
		if r.IntN(10) > 0 { // most frames come with a node
			p := int32(len(big.Nodes) - 1)
			if r.IntN(4) == 0 {
				p = int32(r.IntN(len(big.Nodes)))
			}
			big.Nodes = append(big.Nodes, subsecond.StackNode{Parent: p, Frame: int32(len(big.Frames) - 1)})
		}
	}
	ins = append(ins, goldenInterner(), big)
	for k, in := range ins {
		want := encodeFrames(in)
		s := newFrameStream()
		frames, strings := 0, 0
		for at := 1; at < len(in.Nodes); {
			at = min(len(in.Nodes), at+1+r.IntN(max(2, len(in.Nodes)/20)))
			for _, n := range in.Nodes[1:at] {
				frames = max(frames, int(n.Frame)+1)
			}
			frames += r.IntN(len(in.Frames) - frames + 1) // frames whose first node is still to come
			for _, f := range in.Frames[:frames] {
				strings = max(strings, int(f.Symbol)+1, int(f.DSO)+1, int(f.SrcLine)+1)
			}
			s.add(strings, in.Frames[:frames], in.Nodes[:at])
		}
		got := s.finish(len(in.Strings), in.Frames, in.Nodes)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("interner %d: %d frames coded in batches: %d segments, not the %d of coding them at once (or other bytes)", k, len(in.Frames), len(got), len(want))
		}
		if in == big && len(got) != 2 {
			t.Errorf("%d frames in %d segments; want 2", len(in.Frames), len(got))
		}
	}
}
