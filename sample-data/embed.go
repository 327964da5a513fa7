package sampledata

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Bundled file names, as they sit in sample-data/.
const (
	IncidentFile = "incident-96cpu-120s.perf.txt.zst"
	RealFile     = "real-mixed-2cpu-5s.perf.txt.gz"
)

var (
	//go:embed incident-96cpu-120s.perf.txt.zst
	incidentZst []byte
	//go:embed incident-96cpu-120s.perf.txt.truth.json
	incidentTruth []byte
	//go:embed real-mixed-2cpu-5s.perf.txt.gz
	realGz []byte
)

// Incident returns the text of the bundled incident capture: Generate with
// DefaultConfig, 96 CPUs for 120 s with CPU 39 pegged by the kubelet. It is
// decompressed as it is read; the caller closes it.
func Incident() (io.ReadCloser, error) {
	d, err := zstd.NewReader(bytes.NewReader(incidentZst), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("bundled incident: %w", err)
	}
	return zstdReadCloser{d}, nil
}

// IncidentCompressed returns the bundled incident as stored: zstd-compressed
// perf script text, for importers that detect compression themselves.
func IncidentCompressed() io.Reader { return bytes.NewReader(incidentZst) }

// IncidentTruth returns the ground truth written beside the bundled incident.
func IncidentTruth() (Truth, error) {
	var t Truth
	if err := json.Unmarshal(incidentTruth, &t); err != nil {
		return Truth{}, fmt.Errorf("bundled incident truth: %w", err)
	}
	return t, nil
}

// Real returns the text of the bundled real capture: `perf script --header`
// of `perf record -F 499 -a -g` over a five-second mixed workload on a
// 2-CPU machine. The caller closes it.
func Real() (io.ReadCloser, error) {
	r, err := gzip.NewReader(bytes.NewReader(realGz))
	if err != nil {
		return nil, fmt.Errorf("bundled real capture: %w", err)
	}
	return r, nil
}

type zstdReadCloser struct{ *zstd.Decoder }

func (z zstdReadCloser) Close() error {
	z.Decoder.Close()
	return nil
}
