package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

// expandFiles turns the capture arguments of import and serve into files: a directory stands for
// the regular files in it (not its subdirectories or hidden files), and a
// pattern the shell left alone ("captures/*.zst", quoted) for the files it
// matches. The files of one directory or pattern come in the order they
// were recorded (see byTime). "-" and plain files pass as they are.
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

// byTime sorts files in the order they were recorded: by the wall-clock
// time of each capture's first sample, as its header gives it (realtime
// timestamps, perf's reference time or tod field, else "# captured on"; see
// subsecond.Anchor), then by name. The captures whose time their first
// peekBytes do not give (perf.data files, captures without a wall clock)
// follow, by name: perf's own names (perf.data.<YYYYMMDDhhmmss…>) sort in
// time order. A file's modification time is not used: a copy (cp, scp,
// rsync without -t) rewrites it.
func byTime(files []string) []string {
	start := make(map[string]int64, len(files))
	for _, f := range files {
		if t, ok := recordedAt(f); ok {
			start[f] = t
		}
	}
	slices.SortStableFunc(files, func(a, b string) int {
		ta, oka := start[a]
		tb, okb := start[b]
		switch {
		case oka && okb:
			return cmp.Or(cmp.Compare(ta, tb), cmp.Compare(a, b))
		case oka != okb: // a capture with a time comes first
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	return files
}

// peekBytes bounds how much of a capture's text recordedAt reads to find
// its first sample: perf script's header is a few kilobytes.
const peekBytes = 1 << 20

// recordedAt returns the wall-clock time, in Unix nanoseconds, of the first
// sample of the capture in file (plain or compressed perf script text),
// when its first peekBytes tell it.
func recordedAt(file string) (int64, bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	rc, err := decompress.NewReader(f)
	if err != nil {
		return 0, false
	}
	defer rc.Close()
	sc := parser.NewScanner(io.LimitReader(rc, peekBytes), parser.Options{})
	if !sc.Scan() {
		return 0, false
	}
	t := sc.Sample().Time
	w := subsecond.Anchor(sc.Metadata(), t)
	if !w.Known() {
		return 0, false
	}
	return w.Wall(t), true
}

// eachFile calls fn with each of names opened in turn ("-" for standard
// input), closing it after; an error names the command (cmd) and the file.
func eachFile(e env, cmd string, names []string, fn func(name string, r io.Reader) error) error {
	for _, name := range names {
		if name == "-" {
			if err := fn(name, e.stdin); err != nil {
				return fmt.Errorf("%s: %s: %w", cmd, name, err)
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		err = fn(name, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", cmd, name, err)
		}
	}
	return nil
}
