package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/subsecond/subsecond/query"
)

// parseFlags parses a command's args with fs. Flags may come before,
// between or after the arguments (`subsecond import FILE --name x`), as
// git, docker and kubectl take them; after "--" everything is an argument.
// fs.Args() then holds the arguments alone, in order. A request for help
// (-h, -help or --help among the flags) prints fs.Usage on standard output
// and returns flag.ErrHelp, which the binary exits 0 on. Any other flag
// error is returned as one line, with the closest flag when the name is a
// typo of one ("unknown flag --fromat; did you mean --format?"), followed
// by the command's usage lines (see flagError). When e.parsed is set (tests),
// it is called with the parsed set and its error ends the command.
func parseFlags(fs *flag.FlagSet, e env, args []string) error {
	if wantsHelp(fs, args) {
		fs.SetOutput(e.stdout)
	} else {
		// Parse writes its error and the whole usage; flagError says it in
		// one line instead. Usage text asked for later goes to stderr.
		fs.SetOutput(io.Discard)
		defer fs.SetOutput(e.stderr)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return flagError(fs, err)
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

// flagError rewords an error of fs.Parse as usageError does: "NAME:
// unknown flag --fromat; did you mean --format?" or "NAME: invalid value
// …", then the command's usage lines. flag.ErrHelp is returned as is.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown flag --" + name
		if s := suggest(name, names); s != "" {
			msg += "; did you mean --" + s + "?"
		} else {
			msg += "; see 'subsecond " + fs.Name() + " --help'"
		}
		return usageError(fs, "%s", msg)
	}
	return fmt.Errorf("%s: %w\n%s", fs.Name(), err, synopsis(fs))
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// checkArgs refuses, after parseFlags, more than max arguments (max < 0:
// any number) or fewer than min, saying what was wanted (want: "one
// profile ID"), and follows the error with the command's usage lines, as
// git does: every command says so rather than ignoring an argument.
func checkArgs(fs *flag.FlagSet, min, max int, want string) error {
	switch n := fs.NArg(); {
	case max >= 0 && n > max:
		return usageError(fs, "unexpected argument %q", fs.Arg(max))
	case n < min:
		return usageError(fs, "want %s", want)
	}
	return nil
}

// usageError returns the error "NAME: MESSAGE" of fs's command followed,
// on the next lines, by its usage lines (the synopsis its usage text opens
// with).
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	return fmt.Errorf("%s: %s\n%s", fs.Name(), fmt.Sprintf(format, args...), synopsis(fs))
}

// synopsis returns the first paragraph of fs's usage text: "Usage:
// subsecond list [--db PATH] [--format text|json]".
func synopsis(fs *flag.FlagSet) string {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.Usage()
	fs.SetOutput(out)
	s, _, _ := strings.Cut(b.String(), "\n\n")
	return strings.TrimRight(s, "\n")
}

// commandLine writes the command line of subsecond command name with the
// query parameters v as flags, in the table's order for the views of view,
// and the argument arg, quoted for a POSIX shell where it needs to be:
// "subsecond hotspots --only kernel --limit 0 ID".
func commandLine(name string, view query.View, v url.Values, arg string) string {
	words := []string{"subsecond", name}
	for _, p := range query.ParamsFor(view) {
		for _, val := range v[p.Name] {
			switch {
			case val == "":
			case p.Type == query.TypeBool:
				if val == "1" {
					words = append(words, "--"+p.Name)
				}
			default:
				words = append(words, "--"+p.Name, shellQuote(val))
			}
		}
	}
	return strings.Join(append(words, shellQuote(arg)), " ")
}
