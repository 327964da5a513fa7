// Package symbol names frames as flame graphs and folded stacks show them,
// after FlameGraph's stackcollapse-perf.pl: an offset-free symbol with its
// argument list and quotes dropped and ';' replaced, an [unknown] symbol
// named after its DSO, a perf-map-agent inline chain split into frames,
// optional kernel, JIT and inline annotations, and command names as root
// frames. The folded, flame and heatmap packages all name frames with it.
//
//	symbol.Names("std::vector<int>::push_back(int const&)", "/usr/bin/app", "", 0,
//		subsecond.KindUser, false, symbol.Options{}) // ["std::vector<int>::push_back"]
package symbol

import (
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
)

// Options select the annotations of Names, named after the reference's
// flags: --kernel, --jit, --addrs and --srcline.
type Options struct {
	Kernel  bool // suffix kernel frames with _[k]
	JIT     bool // suffix JIT frames with _[j]
	Addrs   bool // show the address of [unknown] frames: [dso <addr>]
	SrcLine bool // append ":file:line" where perf printed a source line
}

// Comm returns a command name as the root frame of a folded stack: spaces
// become underscores, as stackcollapse-perf.pl writes them.
func Comm(comm string) string {
	return strings.ReplaceAll(comm, " ", "_")
}

// Names returns the names of one frame, root-most first. Kernel and JIT
// annotations follow kind, the frame's class by its DSO (not its address),
// as the reference does. A perf-map-agent frame "A->B->C" (an inlined call
// chain) yields three names, the inlined ones suffixed _[i]. sym is the
// symbol without its offset; src matters only with o.SrcLine, addr only for
// an [unknown] symbol with o.Addrs; java turns on the Java signature tidying
// the reference applies under commands named java*.
func Names(sym, dso, src string, addr uint64, kind subsecond.FrameKind, java bool, o Options) []string {
	if sym == "" {
		sym = " " // as the reference reads "addr  (dso)"
	}
	parts := splitInlined(sym)
	out := make([]string, 0, len(parts))
	for i, f := range parts {
		if f == "[unknown]" {
			f = unknownName(dso, addr, o.Addrs)
		} else {
			f = Tidy(f)
		}
		if java && strings.HasPrefix(f, "L") && strings.Contains(f, "/") {
			f = f[1:]
		}
		switch {
		case i > 0:
			if !strings.Contains(f, "_[i]") {
				f += "_[i]"
			}
		case o.Kernel && (kind == subsecond.KindKernel || isBracketed(dso)):
			f += "_[k]"
		case o.JIT && kind == subsecond.KindJIT:
			if !strings.Contains(f, "_[j]") {
				f += "_[j]"
			}
		}
		if o.SrcLine && i == 0 {
			if s := srcline(src); s != "" {
				f += ":" + s
			}
		}
		out = append(out, f)
	}
	return out
}

// unknownName names an unresolved frame after its DSO's base name, in
// brackets: "[libc.so.6]", "[memfd:jit (deleted)]", "[unknown]" when the DSO
// is unknown too, with the address inside the brackets when addrs is set.
// A DSO is a file name, not a symbol: its parentheses are kept, so the name
// stays balanced (the reference cuts "[app (deleted)]" to "[app "), and
// only what the folded format cannot hold (';' and quotes) is replaced.
func unknownName(dso string, addr uint64, addrs bool) string {
	f := "unknown"
	if dso != "[unknown]" && dso != "" {
		f = dso[strings.LastIndexByte(dso, '/')+1:]
	}
	if addrs {
		f += " <" + strconv.FormatUint(addr, 16) + ">"
	}
	return "[" + stripQuotes(strings.ReplaceAll(f, ";", ":")) + "]"
}

// Tidy applies the reference's generic clean-up to a symbol: ';' becomes
// ':', an argument list is cut at its first '(' outside template arguments
// unless the name is a Go method ("pkg.(*T).M") or the '(' opens
// "(anonymous namespace)", and quote characters are removed.
func Tidy(f string) string {
	f = strings.ReplaceAll(f, ";", ":")
	if !isGoMethod(f) {
		f = f[:argsStart(f)]
	}
	return stripQuotes(f)
}

// stripQuotes removes quote characters, as the reference does.
func stripQuotes(f string) string {
	if !strings.ContainsAny(f, `"'`) {
		return f
	}
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' {
			return -1
		}
		return r
	}, f)
}

// splitInlined splits a perf-map-agent inlined chain "A->B->C" into its
// parts; the "->" of operator-> is not a separator.
func splitInlined(sym string) []string {
	if !strings.Contains(sym, "->") {
		return []string{sym}
	}
	var parts []string
	start := 0
	for i := 0; i+1 < len(sym); i++ {
		if sym[i] == '-' && sym[i+1] == '>' && !strings.HasSuffix(sym[:i], "operator") {
			parts = append(parts, sym[start:i])
			start = i + 2
			i++
		}
	}
	return append(parts, sym[start:])
}

// argsStart returns where f's argument list begins: the first '(' outside
// template arguments (<…>) that does not open "(anonymous namespace)", or
// len(f). The '<' and '>' of operator names (operator<<, operator->) do not
// count as brackets.
func argsStart(f string) int {
	depth := 0
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '<':
			if isOperator(f, i) {
				continue
			}
			depth++
		case '>':
			if isOperator(f, i) {
				continue
			}
			if depth > 0 {
				depth--
			}
		case '(':
			if depth == 0 && !strings.HasPrefix(f[i:], "(anonymous namespace)") {
				return i
			}
		}
	}
	return len(f)
}

// isOperator reports whether the '<' or '>' at f[i] belongs to an operator
// name: operator<, operator<<=, operator->, operator<=>.
func isOperator(f string, i int) bool {
	j := i
	for j > 0 && strings.IndexByte("<>=-", f[j-1]) >= 0 && i-j < 3 {
		j--
	}
	return strings.HasSuffix(f[:j], "operator")
}

func isGoMethod(f string) bool {
	i := strings.Index(f, ".(")
	j := strings.LastIndex(f, ").")
	return i >= 0 && j >= i+2
}

// isBracketed reports whether dso is a bracketed name other than [unknown]
// ([vdso], [vsyscall]): kernel-provided code the reference annotates as
// kernel although it runs in user mode.
func isBracketed(dso string) bool {
	return strings.HasPrefix(dso, "[") && !strings.Contains(dso, "unknown")
}

// srcline tidies a source line as the reference does: bracketed parts
// ("[kernel.kallsyms][ffffffff8110]", "libc.so.6[27b25]") are removed.
func srcline(s string) string {
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			break
		}
		s = s[:i] + s[i+j+1:]
	}
	return strings.TrimSpace(s)
}
