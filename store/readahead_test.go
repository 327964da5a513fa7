package store

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// closeCounter counts the Close calls of a reader.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestReadAhead reads text through readAhead in odd pieces: the bytes come
// out as they went in, and the source's error after them, whatever it is
// (io.ErrUnexpectedEOF included), comes after exactly those bytes.
func TestReadAhead(t *testing.T) {
	data := make([]byte, 3*aheadPiece+12345)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	for _, tc := range []struct {
		name string
		err  error // the source's error after data; nil: io.EOF
	}{{"end", nil}, {"unexpected EOF", io.ErrUnexpectedEOF}, {"other", errors.New("disk on fire")}} {
		t.Run(tc.name, func(t *testing.T) {
			var src io.Reader = iotest.HalfReader(bytes.NewReader(data))
			if tc.err != nil {
				src = io.MultiReader(src, iotest.ErrReader(tc.err))
			}
			cc := &closeCounter{Reader: src}
			ra := newReadAhead(cc)
			got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(ra, 1000)))
			if err != nil || !bytes.Equal(got, data[:1000]) {
				t.Fatalf("first 1000 bytes one at a time: %d bytes, %v", len(got), err)
			}
			rest, err := io.ReadAll(ra)
			if !bytes.Equal(rest, data[1000:]) {
				t.Errorf("read %d more bytes; want %d, the same", len(rest), len(data)-1000)
			}
			if tc.err == nil && err != nil || tc.err != nil && err != tc.err {
				t.Errorf("error after the data: %v; want %v", err, tc.err)
			}
			if _, err2 := ra.Read(make([]byte, 10)); tc.err != nil && err2 != tc.err || tc.err == nil && err2 != io.EOF {
				t.Errorf("Read after the end: %v", err2)
			}
			if err := ra.Close(); err != nil || ra.Close() != nil || cc.closed != 1 {
				t.Errorf("Close twice: %v; source closed %d times, want once", err, cc.closed)
			}
		})
	}
}

// TestReadAheadClose stops a readAhead whose reader stopped reading, with
// its pieces all full: Close returns and closes the source.
func TestReadAheadClose(t *testing.T) {
	cc := &closeCounter{Reader: bytes.NewReader(make([]byte, 2*aheadBufs*aheadPiece))}
	ra := newReadAhead(cc)
	if _, err := ra.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := ra.Close(); err != nil || cc.closed != 1 {
		t.Errorf("Close: %v; source closed %d times, want once", err, cc.closed)
	}
}
