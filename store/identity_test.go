package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

// TestDigesterKnownAnswers checks the digests against BLAKE3's published
// test values and SHA-256's, written whole or in the pieces an import
// hashes.
func TestDigesterKnownAnswers(t *testing.T) {
	for _, c := range []struct{ text, blake3, sha256 string }{
		{"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
			"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85",
			"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		for _, legacy := range []bool{false, true} {
			d := newDigester(legacy)
			for _, b := range []byte(c.text) {
				d.Write([]byte{b})
			}
			id, old := d.digests()
			wantOld := ""
			if legacy {
				wantOld = DigestSHA256 + c.sha256
			}
			if id != DigestBLAKE3+c.blake3 || old != wantOld {
				t.Errorf("%q (legacy %v): %s, %q; want blake3:%s, %q", c.text, legacy, id, old, c.blake3, wantOld)
			}
			if !ValidDigest(id) || legacy && !ValidDigest(old) {
				t.Errorf("ValidDigest refuses %s or %s", id, old)
			}
		}
	}
	// A long text in uneven pieces: the same as hashed whole.
	text := bytes.Repeat([]byte("a perf script line\n"), 100_000)
	d := newDigester(true)
	for p, n := 0, 1; p < len(text); p, n = p+n, n*3%7919+1 {
		d.Write(text[p:min(len(text), p+n)])
	}
	id, old := d.digests()
	if id != blake3Hex(text) || old != fmt.Sprintf("%s%x", DigestSHA256, sha256.Sum256(text)) {
		t.Errorf("pieces: %s, %s; want the whole text's", id, old)
	}
}

func TestValidDigest(t *testing.T) {
	good := strings.Repeat("0f", 32)
	for d, want := range map[string]bool{
		DigestBLAKE3 + good: true, DigestSHA256 + good: true,
		good: false, "md5:" + good: false, DigestBLAKE3 + good[2:]: false,
		DigestBLAKE3 + strings.ToUpper(good): false, DigestBLAKE3 + good[2:] + "zz": false, "": false,
	} {
		if ValidDigest(d) != want {
			t.Errorf("ValidDigest(%q) = %v; want %v", d, !want, want)
		}
	}
}

// countingLegacy is a Backend whose LegacyDigests answers some and counts
// the questions.
type countingLegacy struct {
	Backend
	some bool
	asks int
}

func (c *countingLegacy) LegacyDigests(context.Context) (bool, error) {
	c.asks++
	return c.some, nil
}

// TestLegacyDigestsAsksWhileSome: the database is asked before every
// import while it holds profiles known by SHA-256, and never again once
// it held none.
func TestLegacyDigestsAsksWhileSome(t *testing.T) {
	ctx := context.Background()
	b := &countingLegacy{some: true}
	var l legacyDigests
	for i := range 3 {
		if some, err := l.get(ctx, b); err != nil || !some || b.asks != i+1 {
			t.Fatalf("ask %d: %v, %v after %d asks; want true, asked each time", i, some, err, b.asks)
		}
	}
	b.some = false
	for range 3 {
		if some, err := l.get(ctx, b); err != nil || some || b.asks != 4 {
			t.Fatalf("%v, %v after %d asks; want false, asked once more", some, err, b.asks)
		}
	}
}

// blake3Hex returns the identity of text hashed whole.
func blake3Hex(text []byte) string {
	return fmt.Sprintf("%s%x", DigestBLAKE3, blake3.Sum256(text))
}
