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
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
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
// decompressor but does not close r.
//
// Errors of the compressed stream itself surface from Read wrapping
// subsecond.ErrInvalid and naming the format: a stream cut short ("truncated
// gzip input") or damaged ("corrupt zstd input"). Errors of r pass through
// unchanged.
func NewReader(r io.Reader) (io.ReadCloser, error) {
	rc, _, err := Open(r)
	return rc, err
}

// Open is NewReader that also reports the format it recognised.
func Open(r io.Reader) (io.ReadCloser, Format, error) {
	src := &source{r: r}
	br := bufio.NewReaderSize(src, bufSize)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, Plain, fmt.Errorf("decompress: %w", err)
	}
	switch f := Detect(head); f {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, f, src.classify(f, err)
		}
		zr.Multistream(true)
		return &stream{rc: zr, src: src, f: f}, f, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, f, fmt.Errorf("decompress: zstd: %w", err)
		}
		return &stream{rc: zstdCloser{zr}, src: src, f: f}, f, nil
	}
	return io.NopCloser(br), Plain, nil
}

type zstdCloser struct{ *zstd.Decoder }

func (z zstdCloser) Read(p []byte) (int, error) { return z.Decoder.Read(p) }

func (z zstdCloser) Close() error {
	z.Decoder.Close()
	return nil
}

// source remembers the last error of the compressed input, so that a
// decompressor's error can be told apart from its input's.
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// classify turns a decompressor's error into one that says what is wrong
// with the input, unless it is the input's own read error.
func (s *source) classify(f Format, err error) error {
	switch {
	case err == nil, err == io.EOF:
		return err
	case s.err != nil && errors.Is(err, s.err):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("truncated %s input: the compressed stream ends early: %w", f, subsecond.ErrInvalid)
	}
	return fmt.Errorf("corrupt %s input: %v: %w", f, err, subsecond.ErrInvalid)
}

// stream is a decompressor whose errors are classified by source.
type stream struct {
	rc  io.ReadCloser
	src *source
	f   Format
}

func (s *stream) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	return n, s.src.classify(s.f, err)
}

func (s *stream) Close() error { return s.rc.Close() }
