package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"sync"

	"github.com/zeebo/blake3"
)

// A capture's identity is the digest of its text (decompressed), so that
// the same text sent twice, however compressed, is stored once
// (subsecond.Profile.Digest). It is BLAKE3-256, written "blake3:" and 64
// lower-case hex digits. Profiles stored before were known by the text's
// SHA-256, written "sha256:…"; a database that still holds any is sent
// its SHA-256 too, so that a capture stored then is still found when sent
// again: dedupe stays exact across the change.
//
// Why BLAKE3: every byte of an import passes through the hash, and
// SHA-256 (with the processor's SHA instructions) was a tenth of the CPU
// of importing a real capture and three tenths of the bundled one's. With
// its vector instructions BLAKE3 hashed the 55.5 MB real capture in 17 ms
// where SHA-256 took 31 ms (one core, 256 KiB writes, as the import
// makes them). It is a cryptographic hash with 256-bit output, as SHA-256
// is: two different texts are not taken for one.
const (
	DigestBLAKE3 = "blake3:"
	DigestSHA256 = "sha256:"
)

// digester hashes a capture's text as it is read.
type digester struct {
	b3  *blake3.Hasher
	sha hash.Hash // nil unless the database holds profiles known by SHA-256
}

func newDigester(legacy bool) *digester {
	d := &digester{b3: blake3.New()}
	if legacy {
		d.sha = sha256.New()
	}
	return d
}

func (d *digester) Write(p []byte) {
	d.b3.Write(p)
	if d.sha != nil {
		d.sha.Write(p)
	}
}

// digests returns the text's identity and, when the database held
// profiles known by SHA-256 as the import began, its SHA-256 digest ("" if
// not).
func (d *digester) digests() (id, legacy string) {
	id = DigestBLAKE3 + hex.EncodeToString(d.b3.Sum(nil))
	if d.sha != nil {
		legacy = DigestSHA256 + hex.EncodeToString(d.sha.Sum(nil))
	}
	return id, legacy
}

// legacyDigests remembers whether the database holds profiles known by
// SHA-256 alone. Once none is left none comes back (imports store BLAKE3
// digests), so it asks the database again only while some were there.
type legacyDigests struct {
	mu    sync.Mutex
	known bool
	some  bool
}

func (l *legacyDigests) get(ctx context.Context, b Backend) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known && !l.some {
		return false, nil
	}
	some, err := b.LegacyDigests(ctx)
	if err != nil {
		return false, err
	}
	l.known, l.some = true, some
	return some, nil
}

// ValidDigest reports whether d is a digest as Profile.Digest holds one.
func ValidDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, DigestBLAKE3)
	if !ok {
		hexPart, ok = strings.CutPrefix(d, DigestSHA256)
	}
	if !ok || len(hexPart) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil && strings.ToLower(hexPart) == hexPart
}
