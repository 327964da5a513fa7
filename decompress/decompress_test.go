package decompress

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
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

func TestTruncatedAndCorrupt(t *testing.T) {
	long := strings.Repeat(text, 2000)
	g, z := gz(t, long), zst(t, long)
	corrupt := func(b []byte) []byte {
		c := bytes.Clone(b)
		for i := len(c) / 3; i < len(c)/3+64; i++ {
			c[i] ^= 0x5a
		}
		return c
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"gzip truncated", g[:len(g)/2], "truncated gzip input"},
		{"gzip without trailer", g[:len(g)-4], "truncated gzip input"},
		{"zstd truncated", z[:len(z)/2], "truncated zstd input"},
		{"gzip corrupt", corrupt(g), "corrupt gzip input"},
		{"zstd corrupt", corrupt(z), "corrupt zstd input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := NewReader(bytes.NewReader(tt.in))
			if err == nil {
				_, err = io.Copy(io.Discard, rc)
				rc.Close()
			}
			if !errors.Is(err, subsecond.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("reading %s: %v; want an error wrapping ErrInvalid saying %q", tt.name, err, tt.want)
			}
		})
	}
}

// TestSourceErrorPassesThrough checks that a failing input's own error is
// not mistaken for a damaged stream.
func TestSourceErrorPassesThrough(t *testing.T) {
	g := gz(t, strings.Repeat(text, 2000))
	reset := errors.New("connection reset")
	rc, err := NewReader(io.MultiReader(bytes.NewReader(g[:len(g)/2]), iotest.ErrReader(reset)))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); !errors.Is(err, reset) || errors.Is(err, subsecond.ErrInvalid) {
		t.Errorf("error = %v; want the input's own %v", err, reset)
	}
}
