package main

import (
	"flag"
	"strings"
)

// parseFlags parses a command's args with fs. A request for help (-h,
// -help or --help among the flags) prints fs.Usage on standard output and
// returns flag.ErrHelp, which the binary exits 0 on; any other flag error
// and its usage go to standard error. When e.parsed is set (tests), it is
// called with the parsed set and its error ends the command.
func parseFlags(fs *flag.FlagSet, e env, args []string) error {
	if wantsHelp(fs, args) {
		fs.SetOutput(e.stdout)
	} else {
		fs.SetOutput(e.stderr)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if e.parsed != nil {
		return e.parsed(fs)
	}
	return nil
}

// wantsHelp reports whether fs.Parse(args) would stop at a help flag: one
// of -h, -help, --help (undefined in fs) before the first argument that
// is not a flag. Values of non-boolean flags given as a separate argument
// are skipped as Parse skips them.
func wantsHelp(fs *flag.FlagSet, args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return false
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if k := strings.IndexByte(name, '='); k >= 0 {
			name = name[:k]
		} else if f := fs.Lookup(name); f != nil && !isBool(f) {
			i++ // the next argument is the flag's value
		}
		if (name == "h" || name == "help") && fs.Lookup(name) == nil {
			return true
		}
	}
	return false
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
