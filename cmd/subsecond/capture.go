package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
)

// viewFlags are the flags the analysis commands (heatmap, cpus,
// flamegraph, hotspots) share: the query parameters their view reads,
// named, checked and described exactly as the URL parameters
// (query.ParamsFor), and --db.
type viewFlags struct {
	fs     *flag.FlagSet
	params map[string]*paramValue
	db     *string
	e      env
	// host, when set to a flag's value, names a host whose views replace
	// the FILE|ID argument when the flag is given.
	host *string
}

// paramValue is one query parameter given as a flag; query.Parse checks it.
// A boolean parameter may be given bare (--idle, meaning idle=1); a
// TypeLabels one may be repeated (--label zone=a --label rack=7), each
// value kept in vals.
type paramValue struct {
	p    query.Param
	val  string
	vals []string
}

func (p *paramValue) String() string { return p.val }
func (p *paramValue) Set(s string) error {
	if p.p.Type == query.TypeBool && s == "true" {
		s = "1"
	} else if p.p.Type == query.TypeBool && s == "false" {
		s = "0"
	}
	p.val = s
	if p.p.Type == query.TypeLabels {
		p.vals = append(p.vals, s)
	}
	return nil
}
func (p *paramValue) IsBoolFlag() bool { return p.p.Type == query.TypeBool }

// newViewFlags returns a flag set for command name with a flag for each
// query parameter that view reads, described for view, and --db.
func newViewFlags(name string, e env, view query.View) *viewFlags {
	v := &viewFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError), params: map[string]*paramValue{}, e: e}
	for _, p := range query.ParamsFor(view) {
		pv := &paramValue{p: p}
		v.params[p.Name] = pv
		v.fs.Var(pv, p.Name, p.UsageFor(view))
	}
	v.db = dbFlag(v.fs)
	return v
}

// newHostFlags returns a flag set for the host command name: --host, a
// flag for each query parameter that view reads, and --db.
func newHostFlags(name string, e env, view query.View) *viewFlags {
	v := newViewFlags(name, e, view)
	v.host = v.fs.String("host", "", "the host (see 'subsecond hosts')")
	return v
}

// add adds flags for the query parameters named, beside those of the view.
func (v *viewFlags) add(names ...string) {
	for _, name := range names {
		p, ok := query.LookupParam(name)
		if !ok {
			panic("add: no query parameter " + name)
		}
		pv := &paramValue{p: p}
		v.params[p.Name] = pv
		v.fs.Var(pv, p.Name, p.Usage())
	}
}

// only refuses the flags set that view does not read: what they would do
// has no meaning with how the command was asked (why).
func (v *viewFlags) only(view query.View, why string) error {
	for _, p := range query.Params() {
		if pv := v.params[p.Name]; pv != nil && pv.val != "" && p.Views&view == 0 {
			return fmt.Errorf("%s: --%s is not used %s", v.fs.Name(), p.Name, why)
		}
	}
	return nil
}

// textFlags are the output flags of a host view printed as rows of text
// (timeline, state): --format text or json, and --width.
type textFlags struct {
	format *string
	width  *int
}

// textOutput adds v's --format (text, or json as api answers) and
// --width flags.
func (v *viewFlags) textOutput(api string) textFlags {
	return textFlags{
		width:  v.fs.Int("width", 120, "text: characters per row; buckets are merged to fit"),
		format: v.fs.String("format", "text", "output format: text or json (the API's "+api+")"),
	}
}

// openHost parses args for a host view (parseHost), checks t's flags and
// opens the database, which must exist.
func (v *viewFlags) openHost(ctx context.Context, args []string, t textFlags) (*query.Query, *store.Store, error) {
	q, err := v.parseHost(args)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFormat(v.fs.Name(), *t.format, "text", "json"); err != nil {
		return nil, nil, err
	}
	if *t.width < 10 {
		return nil, nil, fmt.Errorf("%s: --width %d: want at least 10", v.fs.Name(), *t.width)
	}
	s, err := openExisting(ctx, v.e, *v.db)
	if err != nil {
		return nil, nil, err
	}
	return q, s, nil
}

// parseHost parses args for a command about a host, which takes --host and
// no argument, and returns the query the flags give.
func (v *viewFlags) parseHost(args []string) (*query.Query, error) {
	if err := parseFlags(v.fs, v.e, args); err != nil {
		return nil, err
	}
	if *v.host == "" {
		v.fs.Usage()
		return nil, fmt.Errorf("%s: --host is required", v.fs.Name())
	}
	if err := query.CheckHost(*v.host); err != nil {
		return nil, fmt.Errorf("%s: %w", v.fs.Name(), err)
	}
	if err := checkArgs(v.fs, 0, 0, ""); err != nil {
		return nil, err
	}
	return v.query()
}

// query returns the query the flags set give, its error naming the command.
func (v *viewFlags) query() (*query.Query, error) {
	q, err := query.Parse(v.values())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.fs.Name(), err)
	}
	return q, nil
}

// values returns the flags that were set as URL query values.
func (v *viewFlags) values() url.Values {
	q := url.Values{}
	for k, p := range v.params {
		switch {
		case p.vals != nil:
			q[k] = p.vals
		case p.val != "":
			q.Set(k, p.val)
		}
	}
	return q
}

// parse parses args, requires exactly one FILE|ID argument (or none when
// the host flag names a host) and returns the query the flags give.
func (v *viewFlags) parse(args []string) (*query.Query, error) {
	if err := parseFlags(v.fs, v.e, args); err != nil {
		return nil, err
	}
	if v.host == nil || *v.host == "" {
		if err := checkArgs(v.fs, 1, 1, "one capture FILE or stored profile ID"); err != nil {
			return nil, err
		}
	}
	return v.query()
}

// load returns the capture the command's argument names, refusing a filter
// that cannot match anything in it (query.Filter.Check) with an error
// naming the flag.
func (v *viewFlags) load(ctx context.Context, q *query.Query) (*subsecond.Capture, error) {
	c, err := loadCapture(ctx, v.e, v.fs.Arg(0), *v.db)
	if err != nil {
		return nil, err
	}
	if err := q.Filter.Check(c); err != nil {
		return nil, err
	}
	return c, nil
}

// usage sets the flag set's usage text.
func (v *viewFlags) usage(synopsis, text string) {
	v.fs.Usage = func() {
		fmt.Fprintf(v.fs.Output(), "Usage: subsecond %s\n\n%s\n\nFILE is a perf script capture on disk (plain, gzip or zstd; - for standard\ninput), analysed without storing it; ID is a stored profile (see 'subsecond list').\n\nFlags:\n", synopsis, text)
		v.fs.PrintDefaults()
	}
}

// loadCapture returns the capture arg names: a file on disk (or - for
// stdin; a perf.data file through perf script, see openInput) is parsed
// into memory; anything else is looked up as the ID of a stored profile in
// the database.
func loadCapture(ctx context.Context, e env, arg, db string) (*subsecond.Capture, error) {
	if st, err := os.Stat(arg); arg == "-" || err == nil && !st.IsDir() {
		in, err := openInput(ctx, e, arg)
		if err != nil {
			return nil, err
		}
		defer in.Close()
		return readCapture(ctx, e, in, in.name)
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; a view reads one capture (import a directory with 'subsecond import %s', then view its profiles by ID)", arg, arg)
	}
	if strings.ContainsAny(arg, `/\.`) {
		return nil, fmt.Errorf("%s: no such file (and not a profile ID)", arg)
	}
	s, err := openExisting(ctx, e, db)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Capture(ctx, arg) // its errors name the profile
}

// readCapture parses perf script text (plain, gzip or zstd) from r into a
// Capture, reporting skipped records on e.stderr.
func readCapture(ctx context.Context, e env, r io.Reader, name string) (*subsecond.Capture, error) {
	dr, err := decompress.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer dr.Close()
	sc := parser.NewScanner(dr, parser.Options{})
	b := subsecond.NewBuilder()
	for n := 0; sc.Scan(); n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := b.Add(sc.Sample()); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	nw, ws := sc.Warnings()
	if nw > 0 {
		out := termWriter(e.stderr)
		fmt.Fprintf(out, "subsecond: %s: skipped %d malformed records\n", name, nw)
		for _, w := range ws {
			fmt.Fprintf(out, "  line %d: %s\n", w.Line, clip(w.Message, stackWidth))
		}
	}
	c := b.Capture(subsecond.Profile{Name: filepath.Base(name), FileName: name, Meta: sc.Metadata(), Warnings: nw, WarningList: ws})
	if c.Profile.Samples == 0 {
		return nil, fmt.Errorf("%s: no samples: %w", name, subsecond.ErrEmptyRange)
	}
	return c, nil
}

// shades are the text renderings' five levels, empty to full.
const shades = " ░▒▓█"

// shade returns the character for v of max: blank for 0, else one of the
// four filled levels.
func shade(v, top float64) rune {
	levels := []rune(shades)
	if v <= 0 || top <= 0 {
		return levels[0]
	}
	i := int(v/top*4 + 0.999999)
	return levels[min(max(i, 1), 4)]
}
