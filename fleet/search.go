package fleet

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// Search ranks the hosts opt selects (see Map) by the share of the names
// opt.Kind and opt.Match select over [From, To): the matched names'
// samples, summed as in Map, over all samples. Hosts without a matched
// sample are left out; Spark holds the share per column of Map. A search
// without opt.Match is an error wrapping subsecond.ErrInvalid.
func Search(ctx context.Context, src Source, opt Options) (*SearchResult, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.Match == nil {
		return nil, query.Invalidf("match", "a search needs an expression to match")
	}
	hosts, err := selectHosts(ctx, src, &opt)
	if err != nil {
		return nil, err
	}
	matched, names, err := matchedSlots(ctx, src, &opt)
	if err != nil {
		return nil, err
	}
	w := opt.bucketWidth()
	res := &SearchResult{From: opt.From, To: opt.To, Bucket: w, Kind: opt.Kind, Match: opt.Match.String(),
		Names: names[:min(len(names), subsecond.MaxIndexNames)], Hosts: []Hit{}, ByPeak: []int{}}
	for i := range hosts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := &hosts[i]
		s := seriesOf(h, &opt, matched)
		if s.matched == 0 {
			continue
		}
		hit := Hit{Host: h.name, Labels: h.labels, Samples: s.samples, Matched: s.matched,
			Share: float64(s.matched) / float64(s.samples), Spark: s.values()}
		hit.Peak, hit.PeakAt = peak(hit.Spark, opt.From, w)
		res.Hosts = append(res.Hosts, hit)
	}
	slices.SortFunc(res.Hosts, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(b.Peak, a.Peak), strings.Compare(a.Host, b.Host))
	})
	for i := range res.Hosts {
		res.ByPeak = append(res.ByPeak, i)
	}
	slices.SortStableFunc(res.ByPeak, func(a, b int) int { return cmp.Compare(res.Hosts[b].Peak, res.Hosts[a].Peak) })
	return res, nil
}
