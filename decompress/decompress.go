// Package decompress opens a capture that may be gzip- or zstd-compressed or
// plain text, recognising the format from its first bytes rather than from a
// file name, so that uploads, files and stdin are treated alike.
//
//	rc, err := decompress.NewReader(f)
//	if err != nil { … }
//	defer rc.Close()
//	sc := parser.NewScanner(rc, parser.Options{})
package decompress

import (
	"bufio"
	"bytes"

	"errors"
	"fmt"
	"github.com/klauspost/compress/gzip"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Format is a compression format NewReader recognises.
type Format int

// Formats.
const (
	Plain Format = iota
	Gzip
	Zstd
)

func (f Format) String() string {
	switch f {
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	}
	return "plain"
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// bufSize is the read buffer placed in front of the source. Large reads keep
// the decompressors and the parser out of the system call path.
const bufSize = 256 << 10

// Detect reports the format of the stream that begins with head.
func Detect(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	}
	return Plain
}

// NewReader returns a reader of r's decompressed bytes. Plain input is passed
// through unchanged; an empty input yields an empty reader. Close releases the
// decompressor but does not close r. Corrupt compressed data surfaces as an
// error from Read.
func NewReader(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, bufSize)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	switch Detect(head) {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("decompress: gzip header: %w", err)
		}
		zr.Multistream(true)
		return zr, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, fmt.Errorf("decompress: zstd: %w", err)
		}
		return zstdCloser{zr}, nil
	}
	return io.NopCloser(br), nil
}

type zstdCloser struct{ *zstd.Decoder }

func (z zstdCloser) Close() error {
	z.Decoder.Close()
	return nil
}
