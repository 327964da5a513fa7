package decompress

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const text = "cc1 11361 [000]   464.971906:    2004008 cpu-clock:ppp: \n\t         144b5a0 [unknown] (/usr/lib/cc1)\n\n"

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, s)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNewReader(t *testing.T) {
	long := strings.Repeat(text, 20000) // larger than the read buffer
	tests := []struct {
		name string
		in   []byte
		want string
		fmt  Format
	}{
		{"plain", []byte(text), text, Plain},
		{"plain long", []byte(long), long, Plain},
		{"empty", nil, "", Plain},
		{"one byte", []byte{0x1f}, "\x1f", Plain},
		{"gzip", gz(t, text), text, Gzip},
		{"gzip long", gz(t, long), long, Gzip},
		{"gzip concatenated", append(gz(t, "a\n"), gz(t, "b\n")...), "a\nb\n", Gzip},
		{"zstd", zst(t, text), text, Zstd},
		{"zstd long", zst(t, long), long, Zstd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.in); got != tt.fmt {
				t.Errorf("Detect = %v; want %v", got, tt.fmt)
			}
			rc, err := NewReader(bytes.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("read %d bytes; want %d bytes", len(got), len(tt.want))
			}
		})
	}
}

func TestCorrupt(t *testing.T) {
	bad := gz(t, strings.Repeat(text, 100))
	bad = bad[:len(bad)/2]
	rc, err := NewReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("reading a truncated gzip stream succeeded; want an error")
	}

	// A gzip magic number followed by garbage fails at the header.
	if _, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0, 0})); err == nil {
		t.Error("NewReader accepted a broken gzip header")
	}

	z := zst(t, strings.Repeat(text, 100))
	z[len(z)/2] ^= 0xff
	rc, err = NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("reading a corrupted zstd stream succeeded; want an error")
	}
}
