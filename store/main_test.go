package store_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes what the package's benchmarks wrote to a temporary
// directory of their own (benchFile's generated capture, 847 MB): it
// outlived each run, and a day of benchmarks filled the disk.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchPath != "" && os.Getenv("SUBSECOND_BENCH_CAPTURE") == "" {
		os.RemoveAll(filepath.Dir(benchPath))
	}
	os.Exit(code)
}
