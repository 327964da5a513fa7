package main

import (
	"flag"
	"strings"
)

// parseFlags parses a command's args with fs. Flags may come before,
// between or after the arguments (`subsecond import FILE --name x`), as
// git, docker and kubectl take them; after "--" everything is an argument.
// fs.Args() then holds the arguments alone, in order. A request for help
// (-h, -help or --help among the flags) prints fs.Usage on standard output
// and returns flag.ErrHelp, which the binary exits 0 on; any other flag
// error and its usage go to standard error. When e.parsed is set (tests),
// it is called with the parsed set and its error ends the command.
func parseFlags(fs *flag.FlagSet, e env, args []string) error {
	if wantsHelp(fs, args) {
		fs.SetOutput(e.stdout)
	} else {
		fs.SetOutput(e.stderr)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...) // Parse stopped at "--"
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	// Leave the arguments alone in fs.Args(): after "--", Parse takes no flag.
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return err
	}
	if e.parsed != nil {
		return e.parsed(fs)
	}
	return nil
}

// wantsHelp reports whether parseFlags(fs, args) would stop at a help
// flag: one of -h, -help, --help (undefined in fs) before any "--". Values
// of non-boolean flags given as a separate argument are skipped as Parse
// skips them.
func wantsHelp(fs *flag.FlagSet, args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if len(a) < 2 || a[0] != '-' {
			continue // an argument; flags may follow
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
