package parser

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPaddedAddr compares paddedAddr, which reads eight bytes at a time,
// with strconv on address fields as perf prints them and on random fields
// of the bytes around the hexadecimal digits' ranges.
func TestPaddedAddr(t *testing.T) {
	ref := func(field string) (uint64, bool) {
		digits := strings.TrimLeft(field, " ")
		if digits == "" {
			return 0, false
		}
		v, err := strconv.ParseUint(digits, 16, 64)
		return v, err == nil && !strings.ContainsAny(digits, "+-_xX")
	}
	check := func(field string) {
		t.Helper()
		got, gotOK := paddedAddr([]byte(field))
		want, wantOK := ref(field)
		if got != want || gotOK != wantOK {
			t.Fatalf("paddedAddr(%q) = %#x, %v; want %#x, %v", field, got, gotOK, want, wantOK)
		}
	}
	for _, f := range []string{
		"ffffffff819e9c13", "          4d6291", "               0", "               F", "0000000000000000",
		"FfFfFfFf00000001", "                ", " ", "       1 1234567", "1234567 12345678", "123456789abcdefg",
		"          4d629g", "          4d629:", "          4d629/", "          4d629`", "          4d629@",
		"          4d629G", "\t         4d6291", "         4d6291 ", "7fffffffffffffff", "       abcdef012",
	} {
		check(fmt.Sprintf("%16s", f)[:16])
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(" 0123456789abcdefABCDEF/:@`gG\x00\x80\xff\t+x-")
	for range 200000 {
		b := make([]byte, 16)
		spaces := rnd.IntN(17)
		for k := range b {
			if k < spaces {
				b[k] = ' '
			} else if rnd.IntN(20) == 0 {
				b[k] = alphabet[rnd.IntN(len(alphabet))]
			} else {
				b[k] = "0123456789abcdefABCDEF"[rnd.IntN(22)]
			}
		}
		check(string(b))
	}
}

// TestNextSpace compares nextSpace, which reads eight bytes at a time, with
// a byte loop, on random text of spaces, tabs, letters and bytes with the
// high bit set, from every starting point.
func TestNextSpace(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("  \tab\x00\x80\xa0\xff\x09\x0a\x20\x60:")
	for range 20000 {
		b := make([]byte, rnd.IntN(40))
		for k := range b {
			if rnd.IntN(4) == 0 {
				b[k] = alphabet[rnd.IntN(len(alphabet))]
			} else {
				b[k] = byte('a' + rnd.IntN(26))
			}
		}
		for i := 0; i <= len(b); i++ {
			want := i
			for want < len(b) && b[want] != ' ' && b[want] != '\t' {
				want++
			}
			if got := nextSpace(b, i); got != want {
				t.Fatalf("nextSpace(%q, %d) = %d; want %d", b, i, got, want)
			}
		}
	}
}

// TestFieldStartSkip checks that parseHeader, which skips the readings
// whose first field cannot open with a pid, CPU, date or time, finds the
// same header as trying every reading, on header lines of real captures
// and on random variations of them.
func TestFieldStartSkip(t *testing.T) {
	text, err := io.ReadAll(openCapture(t, filepath.Join("..", "sample-data", "real-mixed-2cpu-5s.perf.txt.gz")))
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"job 42 x 7/7 [001] 1.5: 3 cycles:", "a -1 [0] 2.0: e:", "[x] 5 [1] 1.0: e:", "9 9/9 [9] 9.9: 9 e:",
		"c 2026-11-30 17:11:15.184852 12 [000] 1.0: e:", "c 12 1.0: e:", "c 12", "c [3] 1.000: 5 e: 4 f (x)"}
	for _, l := range strings.Split(string(text), "\n") {
		if l != "" && l[0] != '\t' && l[0] != '#' {
			lines = append(lines, l)
		}
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		b := []byte(lines[rnd.IntN(len(lines))])
		for range 1 + rnd.IntN(3) {
			if len(b) > 0 {
				b[rnd.IntN(len(b))] = " -[]/:.0123456789ax\t"[rnd.IntN(20)]
			}
		}
		lines = append(lines, string(b))
	}
	for _, l := range lines {
		for _, evented := range []bool{false, true} {
			s := NewScanner(nil, Options{})
			s.evented = evented
			var got header
			ok := s.parseHeader([]byte(l), &got)
			// The reference: every reading in turn, as parseHeader does
			// without the skip.
			r := NewScanner(nil, Options{})
			r.evented = evented
			var want header
			wantOK := false
			r.parseHeader([]byte(l), &want) // tokenizes into r.toks
		readings:
			for _, bare := range []bool{false, true} {
				if bare && r.evented {
					break
				}
				for a := 0; a < len(r.toks) && a <= maxCommTokens; a++ {
					if r.headerTail([]byte(l), r.toks, a, &want, bare) {
						want.comm = ""
						if a > 0 {
							want.comm = l[r.toks[0].start:r.toks[a-1].end]
						}
						wantOK = true
						break readings
					}
				}
			}
			if ok != wantOK || ok && fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Fatalf("parseHeader(%q) = %+v, %v; want %+v, %v", l, got, ok, want, wantOK)
			}
		}
	}
}

// TestFieldSets reads stack lines whose address fields share a set of the
// field cache, three at a time and with texts that change at the same
// address, in place and through a reader (which does not use the cache):
// both must report the same samples and frame IDs.
func TestFieldSets(t *testing.T) {
	const bits = 11 // cacheBits of the input below
	set := func(addr uint64) uint64 {
		field := []byte(fmt.Sprintf("%16x", addr))
		w0, w1 := binary.LittleEndian.Uint64(field[:8]), binary.LittleEndian.Uint64(field[8:])
		return ((w0 ^ w1*0x9E3779B97F4A7C15) * 0xC2B2AE3D27D4EB4F) >> (64 - bits) &^ 1
	}
	var addrs []uint64 // four fields of one set
	for a := uint64(0x401000); len(addrs) < 4; a += 16 {
		if set(a) == set(0x400ff0) {
			addrs = append(addrs, a)
		}
	}
	var text strings.Builder
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 200 {
		fmt.Fprintf(&text, "prog 1/1 [000] %d.000001: 1 cycles:\n", 100+n)
		for range 1 + r.IntN(6) {
			k := r.IntN(len(addrs))
			fmt.Fprintf(&text, "\t%16x f%d_%d+0x%x (/bin/prog)\n", addrs[k], k, n/50, r.IntN(2))
		}
		text.WriteString("\n")
	}
	if b := cacheBits(text.Len()); b != bits {
		t.Fatalf("cacheBits(%d) = %d; want %d", text.Len(), b, bits)
	}
	inPlace := NewScanner(nil, Options{Strict: true})
	inPlace.ResetBytes([]byte(text.String()), Options{Strict: true})
	got := scanWith(inPlace)
	want := scanWith(NewScanner(strings.NewReader(text.String()), Options{Strict: true}))
	if len(want.samples) != 200 {
		t.Fatalf("%d samples; want 200 (err %v)", len(want.samples), want.err)
	}
	sameScan(t, "in place", got, want, true)
}
