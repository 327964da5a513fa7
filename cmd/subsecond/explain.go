package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/explain"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/web"
)

// explainStore is what explain reads from the local database: the
// night's captures and summaries, its markers and its series.
type explainStore struct {
	night
	s *store.Store
}

func (e explainStore) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	return e.s.Markers(ctx, host, from, to)
}

func (e explainStore) Series(ctx context.Context, host, name string, from, to int64) ([]subsecond.Series, error) {
	return e.s.Series(ctx, host, name, from, to)
}

// runExplain implements `subsecond explain --host H [--match REGEX]
// [--before 10s] [--controls N] [--seed N] [--session N] [--format
// text|json]`: what is unusual in the windows before the host's markers,
// against control windows of the same sessions, ranked by q.
func runExplain(ctx context.Context, e env) error {
	v := newHostFlags("explain", e, query.ViewExplain)
	format := v.fs.String("format", "text", "output format: text or json (the API's /api/hosts/HOST/explain)")
	limit := v.fs.Int("limit", 20, "how many findings to print, most significant first")
	v.fs.Usage = func() {
		fmt.Fprintln(v.fs.Output(), `Usage: subsecond explain --host HOST [--match REGEX] [--before 10s] [--controls 200] [--seed 1] [--session N] [--format text|json]

Ranks what is unusual in the windows before the host's markers (those whose
text matches --match; all by default), against control windows of the same
recording sessions with no marker within a minute: commands, command +
function, stack prefixes, a command on one CPU, a core pegged in the
kernel, and the host's series where 'subsecond record' stored them. Each
finding has its share before the markers and elsewhere, in how many of the
windows it stood out, a permutation test's p over the windows and
Benjamini–Hochberg's q across every feature tested (docs/explain.md).

Flags:`)
		v.fs.PrintDefaults()
	}
	q, err := v.parseHost(e.args)
	if err != nil {
		return err
	}
	if err := checkFormat("explain", *format, "text", "json"); err != nil {
		return err
	}
	opt, err := explain.OptionsOf(q)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	opt.Limit = max(*limit, 1)
	s, err := openExisting(ctx, e, *v.db)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := explain.Explain(ctx, explainStore{newNight(s), s}, *v.host, opt)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	if *format == "json" {
		return json.NewEncoder(e.stdout).Encode(rep) // as the API sends it
	}
	w := bufio.NewWriter(termWriter(e.stdout))
	which := "every marker"
	if rep.Match != "" {
		which = "the markers matching " + rep.Match
	}
	fmt.Fprintf(w, "%s: %s of %s before %s, against %s (of %d), seed %d\n",
		rep.Host, plural(len(rep.Windows), "window"), query.DisplayDuration(rep.Before), which, plural(len(rep.Controls), "control window"), rep.Available, rep.Seed)
	perms := fmt.Sprintf("up to %d random relabelings (each feature's stop at its %dth as extreme as observed)", rep.Permutations, explain.Exceedances)
	if rep.Exact {
		perms = "every relabeling"
	}
	fmt.Fprintf(w, "%d features tested; q is Benjamini–Hochberg's over them, p from %s of the windows (smallest possible %s)\n\n",
		rep.Tested, perms, web.FormatQ(rep.MinP))
	for i, f := range rep.Findings {
		fmt.Fprintf(w, "%2d. %s\n    %s before, %s elsewhere (%s); stood out before %d of %d; q %s, p %s\n",
			i+1, clip(f.Feature.String(), stackWidth), web.FormatValue(f.BeforeShare, f.Unit), web.FormatValue(f.ControlShare, f.Unit),
			web.FormatRatio(f.Ratio), f.StoodOut, f.Of, web.FormatQ(f.Q), web.FormatQ(f.P))
		if len(f.Also) > 0 {
			var also []string
			for _, a := range f.Also[:min(len(f.Also), 4)] {
				also = append(also, a.String())
			}
			if len(f.Also) > 4 {
				also = append(also, fmt.Sprintf("%d more", len(f.Also)-4))
			}
			fmt.Fprintf(w, "    the same in every window: %s\n", clip(strings.Join(also, " · "), stackWidth))
		}
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "no feature was tested: the windows hold too few samples")
	}
	fmt.Fprintln(w, "\nWindows before the markers:")
	for _, win := range rep.Windows {
		fmt.Fprintf(w, "  %s to %s  %d samples\n", wallTime(win.From), wallTime(win.To), win.Samples)
		for _, m := range win.Markers {
			fmt.Fprintf(w, "    ▼ %s  %s\n", wallTime(m.Time), clip(m.Text, stackWidth))
		}
	}
	return w.Flush()
}

// plural writes n and its noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
