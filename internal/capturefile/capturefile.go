// Package capturefile reads a perf script capture on disk (plain, gzip or
// zstd) into a Capture held in memory, strictly: the first malformed line
// is an error. Tests use it to load the real captures in testdata.
//
//	c, err := capturefile.Read("../testdata/perf/dd-pegged-cpu1.perf.txt.zst")
package capturefile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

// Text returns the text of the capture at path, decompressed.
func Text(path string) ([]byte, error) {
	var text []byte
	err := each(path, func(r io.Reader) (err error) {
		text, err = io.ReadAll(r)
		return err
	})
	return text, err
}

// each calls fn with the decompressed text of the capture at path; its
// error is returned naming the file.
func each(path string, fn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := decompress.NewReader(f)
	if err == nil {
		defer r.Close()
		err = fn(r)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Read parses the capture at path. The profile is named after the file and
// carries the capture's header metadata.
func Read(path string) (*subsecond.Capture, error) {
	var c *subsecond.Capture
	err := each(path, func(r io.Reader) error {
		sc := parser.NewScanner(r, parser.Options{Strict: true})
		b := subsecond.NewBuilder()
		for sc.Scan() {
			if err := b.Add(sc.Sample()); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		name := filepath.Base(path)
		c = b.Capture(subsecond.Profile{ID: name, Name: name, Meta: sc.Metadata()})
		return nil
	})
	return c, err
}
