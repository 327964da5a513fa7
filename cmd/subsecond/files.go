package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// expandFiles turns the capture arguments of import and serve into files: a directory stands for
// the regular files in it (not its subdirectories or hidden files), and a
// pattern the shell left alone ("captures/*.zst", quoted) for the files it
// matches. The files of one directory or pattern come in the order they
// were written (modification time, then name), which for rolling captures
// is the order they were recorded. "-" and plain files pass as they are.
func expandFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		switch {
		case err == nil && fi.IsDir():
			ents, err := os.ReadDir(a)
			if err != nil {
				return nil, err
			}
			var files []string
			for _, e := range ents {
				if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
					files = append(files, filepath.Join(a, e.Name()))
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("directory %s holds no files", a)
			}
			out = append(out, byTime(files)...)
		case err != nil && strings.ContainsAny(a, "*?["):
			files, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("pattern %q: %w", a, gerr)
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no files match %q", a)
			}
			out = append(out, byTime(files)...)
		default:
			out = append(out, a) // importOne reports a missing file
		}
	}
	return out, nil
}

// byTime sorts files by modification time, then name.
func byTime(files []string) []string {
	mod := make(map[string]time.Time, len(files))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			mod[f] = fi.ModTime()
		}
	}
	slices.SortStableFunc(files, func(a, b string) int {
		if c := mod[a].Compare(mod[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return files
}
