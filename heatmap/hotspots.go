package heatmap

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/symbol"
)

// HotOptions tune Hotspots. Zero fields take the query table's defaults
// (query.Default), and the table checks each (query.Check).
type HotOptions struct {
	// Measure is what must stay at or above Threshold: the busy fraction
	// (MeasureBusy, the default) or the system fraction (MeasureSystem,
	// the busy samples whose leaf frame is in the kernel).
	Measure   Measure
	Threshold float64 // fraction that counts as hot, (0, 1]; the table's threshold
	Min       int64   // shortest episode, ns; the table's min
	Bucket    int64   // cores-map resolution, ns; default query.DefaultBucket
	Cells     int     // how many hottest heatmap cells to list; the table's cells
	Limit     int     // how many episodes to list, best first; the table's limit, negative for all
	// Range, when set, is where to look: episodes lie within the cores-map
	// buckets that lie wholly inside it, and cells within it (the last
	// bucket and cell count as inside when Range reaches past the last
	// sample). Each episode's Usual still compares with the whole capture.
	// The zero Range is the whole capture.
	Range subsecond.Range
}

// Spot, Cell and Report are the root package's hot-spot nouns, which the
// server and the CLI write as JSON alike.
type (
	Spot   = subsecond.Hotspot
	Cell   = subsecond.HotCell
	Report = subsecond.HotspotReport
)

// smooth is the longest window over which Hotspots averages busy fractions.
const smooth = int64(1e9)

// Hotspots finds, per CPU, the contiguous windows where the measured
// fraction (busy, or system with opt.Measure MeasureSystem) stays at or
// above opt.Threshold for at least opt.Min, at the resolution of the cores
// map's buckets. "Stays" is measured over min(opt.Min, 1 s): a bucket is hot
// when some window of that length containing it has a mean fraction ≥
// Threshold, so one bucket that sampling jitter left a sample short (at
// 49 Hz a 0.1 s bucket holds 4 or 5 samples) does not split an episode;
// edge buckets more than one sample short of the threshold are then
// trimmed.
//
// Within each window, a command whose measured samples alone keep the CPU
// that hot for opt.Min forms an episode of its own (a process pegging the
// core), so an episode starts and ends with the process, not with whatever
// ran before or after it; the rest of the window, where it still lasts
// opt.Min, is an episode with a mix of commands.
//
// With opt.Range, only episodes and cells within that range are listed
// (see HotOptions.Range), and the report gives the range.
//
// Episodes are scored as subsecond.Hotspot says and listed highest score
// first. The filter applies as everywhere; idle samples never count as
// busy. When the filter narrows what counts (anything but cpu, event and
// idle), the CPUs that have episodes without it but none with it are
// listed in Report.Hidden and named in Report.Note: a filter such as
// only=kernel never hides a pegged core silently. Errors wrap
// subsecond.ErrInvalid, subsecond.ErrEmptyRange or subsecond.ErrNoTime.
func Hotspots(c *subsecond.Capture, f query.Filter, opt HotOptions) (*Report, error) {
	d := query.Default()
	opt.Measure = cmp.Or(opt.Measure, Measure(d.Measure))
	opt.Threshold = cmp.Or(opt.Threshold, d.Threshold)
	opt.Min = cmp.Or(opt.Min, d.Min)
	opt.Bucket = cmp.Or(opt.Bucket, query.DefaultBucket)
	opt.Cells = cmp.Or(opt.Cells, d.Cells)
	opt.Limit = cmp.Or(opt.Limit, d.Limit)
	if err := query.CheckEach("measure", string(opt.Measure), "threshold", opt.Threshold, "min", opt.Min, "cells", opt.Cells); err != nil {
		return nil, err
	}
	k, rows, err := perCore(c, f, opt.Bucket)
	if err != nil {
		return nil, err
	}
	m, err := f.Compile(c)
	if err != nil {
		return nil, err
	}
	_, last, err := Span(c)
	if err != nil {
		return nil, err
	}
	rep := &Report{T0: k.T0, Measure: string(opt.Measure), Threshold: opt.Threshold, Min: opt.Min, Spots: []Spot{}, Cells: []Cell{}}
	if opt.Range.Start > k.T0 || opt.Range.End != 0 && opt.Range.End <= last {
		rep.Start, rep.End = opt.Range.Start, opt.Range.End
	}
	if k.Expected > 0 {
		h := newHunt(c, m, k, rows, opt, last)
		h.episodes()
		if narrow := narrowing(f); narrow != "" {
			if err := h.hidden(f, opt, rep, narrow); err != nil {
				return nil, err
			}
		}
		h.split()
		rep.Spots, rep.Found = h.describe(opt.Limit)
	}

	g, err := Offset(c, f, Options{})
	if err != nil {
		return nil, err
	}
	for col := range g.Counts {
		for row, n := range g.Counts[col] {
			if n == 0 {
				continue
			}
			if r := g.CellRange(col, row); inside(r, opt.Range, last) {
				rep.Cells = append(rep.Cells, Cell{Col: col, Row: row, Start: r.Start, End: r.End, Count: n})
			}
		}
	}
	sort.SliceStable(rep.Cells, func(i, j int) bool { return rep.Cells[i].Count > rep.Cells[j].Count })
	rep.Cells = rep.Cells[:min(len(rep.Cells), opt.Cells)]
	return rep, nil
}

// inside reports whether span lies within r for a search of r (see
// HotOptions.Range): the zero r holds everything, and a span reaching past
// last, the last sample, counts as inside an r that does too.
func inside(span, r subsecond.Range, last int64) bool {
	if r == (subsecond.Range{}) {
		return true
	}
	return span.Start >= r.Start && (span.End <= r.End || r.End > last)
}

// span is a run of buckets [lo, hi) of one cores-map row; comm is the
// command that pegs it, or -1 for a mix.
type span struct {
	row, lo, hi int
	comm        int64
}

// commCount is one command's count, in short lists searched linearly:
// a CPU runs few commands.
type commCount struct {
	comm uint32
	n    int64   // busy samples
	m    int64   // measured samples: busy ones, or those with a kernel leaf
	per  []int64 // measured samples per bucket of an episode
}

func find(list []commCount, comm uint32) int {
	for i := range list {
		if list[i].comm == comm {
			return i
		}
	}
	return -1
}

// hunt holds the state of one Hotspots run.
type hunt struct {
	c    *subsecond.Capture
	m    *query.Match
	k    *Cores
	rows *cpuRows
	nb   int
	sys  bool              // the measure is system time
	node []subsecond.Class // per stack node: subsecond.ClassesOf

	detector
	blo, bhi int   // the buckets where episodes are looked for (HotOptions.Range)
	last     int64 // the time of the capture's last sample

	eps     []span
	spots   []span
	inEp    []int32       // busy samples inside an episode, by index
	inEpRow []int32       // their rows
	rowComm [][]commCount // measured samples (m) per command per row, whole capture
	lo, hi  int           // sample window
}

// newHunt prepares a search of k for opt; last is the time of c's last
// sample.
func newHunt(c *subsecond.Capture, m *query.Match, k *Cores, rows *cpuRows, opt HotOptions, last int64) *hunt {
	h := &hunt{c: c, m: m, k: k, rows: rows, nb: k.Buckets, sys: opt.Measure == MeasureSystem, node: subsecond.ClassesOf(c).Nodes, last: last}
	h.bhi = h.nb
	for h.blo < h.nb && !inside(k.bucketRange(h.blo), opt.Range, last) {
		h.blo++
	}
	for h.bhi > h.blo && !inside(k.bucketRange(h.bhi-1), opt.Range, last) {
		h.bhi--
	}
	h.detector = newDetector(k.Expected, opt.Bucket, opt.Threshold, opt.Min)
	h.lo, h.hi = c.Window(subsecond.Range{Start: k.T0, End: k.T0 + int64(k.Buckets)*k.Bucket})
	return h
}

// detector finds episodes in one CPU's measured counts per bucket: a
// bucket is hot when some window of win buckets holding it has need
// measured samples, edge buckets short of edge are trimmed, and a run
// lasts at least minLen buckets (see Hotspots).
type detector struct {
	win, minLen int
	need, edge  float64
}

// newDetector returns the detector of episodes at or above threshold for
// at least minDur ns, in buckets of bucket ns in which a CPU yields
// expected samples.
func newDetector(expected float64, bucket int64, threshold float64, minDur int64) detector {
	d := detector{win: max(1, int((min(minDur, smooth)+bucket-1)/bucket)), minLen: int((minDur + bucket - 1) / bucket)}
	d.need = threshold * expected * float64(d.win) // measured samples a window needs
	d.edge = threshold * (expected - 1)            // measured samples an edge bucket needs
	return d
}

// Episodes returns the runs [lo, hi) of buckets of measured, one CPU's
// measured samples per bucket of bucket ns in which it yields expected
// samples, that Hotspots would find at threshold lasting at least minDur
// ns: the capture's own detection, for counts gathered elsewhere (a
// host's night across the captures of a recording).
func Episodes(measured []int64, expected float64, bucket int64, threshold float64, minDur int64) [][2]int {
	return newDetector(expected, bucket, threshold, minDur).detect(measured)
}

// detect returns the runs of busy (measured counts per bucket) that
// qualify.
func (h detector) detect(busy []int64) [][2]int {
	nb := len(busy)
	if nb < h.win {
		return nil
	}
	hot := make([]int, nb+1) // difference array of qualifying windows
	var sum int64
	for b := 0; b < nb; b++ {
		sum += busy[b]
		if b >= h.win {
			sum -= busy[b-h.win]
		}
		if b >= h.win-1 && float64(sum) >= h.need-1e-9 {
			hot[b-h.win+1]++
			hot[b+1]--
		}
	}
	var out [][2]int
	run := 0
	start := -1
	for b := 0; b <= nb; b++ {
		if b < nb {
			run += hot[b]
		}
		if b < nb && run > 0 {
			if start < 0 {
				start = b
			}
			continue
		}
		if start < 0 {
			continue
		}
		lo, hi := start, b
		start = -1
		for hi-lo > h.win && float64(busy[lo]) < h.edge {
			lo++
		}
		for hi-lo > h.win && float64(busy[hi-1]) < h.edge {
			hi--
		}
		if hi-lo >= h.minLen {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// episodes finds the hot windows of every CPU.
func (h *hunt) episodes() {
	counts := h.k.busy
	if h.sys {
		counts = h.k.sys
	}
	for r := range h.k.CPUs {
		for _, e := range h.detect(counts[r][h.blo:h.bhi]) {
			h.eps = append(h.eps, span{row: r, lo: h.blo + e[0], hi: h.blo + e[1], comm: -1})
		}
	}
}

// each calls fn for every busy sample that passes the filter in a bucket
// marked in at (row-major, -1 unmarked), with the mark.
func (h *hunt) each(at []int32, fn func(i int, row int32, mark int32)) {
	s := &h.c.Samples
	for i := h.lo; i < h.hi; i++ {
		r := h.rows.row(s.CPU[i])
		if r < 0 {
			continue
		}
		b := int((s.Time[i] - h.k.T0) / h.k.Bucket)
		mark := at[int(r)*h.nb+b]
		if pass, idle := h.m.Test(i); pass && !idle {
			fn(i, r, mark)
		}
	}
}

// measured reports whether busy sample i counts for the measure: every
// busy sample for busy, the system ones for system.
func (h *hunt) measured(i int) bool {
	return !h.sys || h.system(i)
}

// system reports whether busy sample i is system time.
func (h *hunt) system(i int) bool {
	_, sys := h.node[h.c.Samples.Stack[i]].Time(false)
	return sys
}

// index returns, for every cores-map cell (row·nb + bucket), the index of
// the span in spans that covers it, or -1.
func (h *hunt) index(spans []span) []int32 {
	at := make([]int32, len(h.k.CPUs)*h.nb)
	for i := range at {
		at[i] = -1
	}
	for i, sp := range spans {
		for b := sp.lo; b < sp.hi; b++ {
			at[sp.row*h.nb+b] = int32(i)
		}
	}
	return at
}

// split turns each busy window into per-command episodes and mixed rest.
func (h *hunt) split() {
	at := h.index(h.eps)
	perEp := make([][]commCount, len(h.eps))
	h.rowComm = make([][]commCount, len(h.k.CPUs))
	comms := h.c.Samples.Comm
	h.each(at, func(i int, r int32, e int32) {
		cm := comms[i]
		rc := h.rowComm[r]
		j := find(rc, cm)
		if j < 0 {
			h.rowComm[r] = append(rc, commCount{comm: cm})
			j = len(rc)
		}
		h.rowComm[r][j].n++
		measured := h.measured(i)
		if measured {
			h.rowComm[r][j].m++
		}
		if e < 0 {
			return
		}
		h.inEp = append(h.inEp, int32(i))
		h.inEpRow = append(h.inEpRow, r)
		if !measured {
			return
		}
		ep := &h.eps[e]
		list := perEp[e]
		j = find(list, cm)
		if j < 0 {
			perEp[e] = append(list, commCount{comm: cm, per: make([]int64, ep.hi-ep.lo)})
			j = len(list)
		}
		perEp[e][j].per[int((h.c.Samples.Time[i]-h.k.T0)/h.k.Bucket)-ep.lo]++
	})
	for e, ep := range h.eps {
		taken := make([]bool, ep.hi-ep.lo)
		for _, cc := range perEp[e] {
			for _, run := range h.detect(cc.per) {
				free := true
				for b := run[0]; b < run[1]; b++ {
					free = free && !taken[b]
				}
				if !free {
					continue
				}
				for b := run[0]; b < run[1]; b++ {
					taken[b] = true
				}
				h.spots = append(h.spots, span{row: ep.row, lo: ep.lo + run[0], hi: ep.lo + run[1], comm: int64(cc.comm)})
			}
		}
		for b := 0; b < len(taken); {
			if taken[b] {
				b++
				continue
			}
			s := b
			for b < len(taken) && !taken[b] {
				b++
			}
			if b-s >= h.minLen {
				h.spots = append(h.spots, span{row: ep.row, lo: ep.lo + s, hi: ep.lo + b, comm: -1})
			}
		}
	}
}

// describe counts what ran in each spot and returns the best limit of
// them (all when limit < 0), highest Score first, with how many there
// were. Commands are counted for every spot, for the score; stacks only
// for the spots returned.
func (h *hunt) describe(limit int) ([]Spot, int) {
	at := h.index(h.spots)
	s := &h.c.Samples
	spotOf := make([]int32, len(h.inEp)) // spot of each busy sample, -1 none
	type stat struct {
		n, sys int64 // busy samples, and those with a kernel leaf
		comms  []commCount
		top    commCount
	}
	stats := make([]stat, len(h.spots))
	for k, i := range h.inEp {
		sp := at[int(h.inEpRow[k])*h.nb+int((s.Time[i]-h.k.T0)/h.k.Bucket)]
		spotOf[k] = sp
		if sp < 0 {
			continue
		}
		st := &stats[sp]
		st.n++
		if h.system(int(i)) {
			st.sys++
		}
		j := find(st.comms, s.Comm[i])
		if j < 0 {
			st.comms = append(st.comms, commCount{comm: s.Comm[i]})
			j = len(st.comms) - 1
		}
		st.comms[j].n++
		if h.measured(int(i)) {
			st.comms[j].m++
		}
	}

	type ranked struct {
		spot Spot
		idx  int
	}
	all := make([]ranked, 0, len(h.spots))
	for i, sp := range h.spots {
		st := &stats[i]
		if st.n == 0 {
			continue
		}
		capacity := h.k.Expected * float64(sp.hi-sp.lo) // samples the CPU yields in the spot
		spot := Spot{
			CPU:     h.k.CPUs[sp.row],
			Start:   h.k.T0 + int64(sp.lo)*h.k.Bucket,
			End:     h.k.T0 + int64(sp.hi)*h.k.Bucket,
			Samples: st.n,
			Busy:    min(1, float64(st.n)/capacity),
			System:  min(1, float64(st.sys)/capacity),
		}
		spot.User = max(0, spot.Busy-spot.System)
		measured := st.n
		if h.sys {
			measured = st.sys
		}
		top := st.comms[0]
		for _, cc := range st.comms {
			if cc.n > top.n || cc.n == top.n && h.c.Strings[cc.comm] < h.c.Strings[top.comm] {
				top = cc
			}
		}
		st.top = top
		spot.Comm, spot.CommShare = h.c.Strings[top.comm], float64(top.n)/float64(st.n)
		// How usual is this command on this CPU outside the spot: its
		// share of the measured samples there, with one second of the
		// CPU's samples counted as another command's, so that a short
		// outside does not make a command look usual.
		var rowMeasured, commOutside int64
		for _, cc := range h.rowComm[sp.row] {
			rowMeasured += cc.m
			if cc.comm == top.comm {
				commOutside = cc.m - top.m
			}
		}
		if commOutside > 0 {
			perSecond := h.k.Expected * float64(smooth) / float64(h.k.Bucket)
			spot.Usual = float64(commOutside) / (float64(rowMeasured-measured) + perSecond)
		}
		share := 0.0 // Comm's share of the episode's measured samples
		if measured > 0 {
			share = float64(top.m) / float64(measured)
		}
		spot.Score = float64(measured) * max(0, share-spot.Usual)
		all = append(all, ranked{spot, i})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := &all[i].spot, &all[j].spot
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.CPU < b.CPU
	})
	found := len(all)
	if limit >= 0 && len(all) > limit {
		all = all[:limit]
	}

	// Stacks of the spots kept: comm<<32 | stack node → samples.
	keep := make([]int32, len(h.spots))
	for i := range keep {
		keep[i] = -1
	}
	for r, a := range all {
		keep[a.idx] = int32(r)
	}
	nodes := make([]map[uint64]int64, len(all))
	for k, i := range h.inEp {
		sp := spotOf[k]
		if sp < 0 || keep[sp] < 0 {
			continue
		}
		r := keep[sp]
		if nodes[r] == nil {
			nodes[r] = map[uint64]int64{}
		}
		nodes[r][uint64(s.Comm[i])<<32|uint64(uint32(s.Stack[i]))]++
	}
	names := newNamer(h.c, h.m)
	tree := newScratch(len(h.c.Nodes))
	out := make([]Spot, len(all))
	for r, a := range all {
		spot := a.spot
		st := &stats[a.idx]
		java := strings.HasPrefix(spot.Comm, "java")
		fn := map[string]int64{}
		tree.reset()
		for key, n := range nodes[r] {
			node := int32(uint32(key))
			if leaf := names.leaf(node, java); leaf != "" {
				fn[leaf] += n
			}
			if uint32(key>>32) == st.top.comm {
				tree.add(h.c, node, n)
			}
		}
		var best int64
		for name, n := range fn {
			if n > best || n == best && name < spot.Function {
				spot.Function, best = name, n
			}
		}
		spot.FunctionShare = float64(best) / float64(st.n)
		path, under := tree.heaviest()
		parts := []string{symbol.Comm(spot.Comm)}
		for _, node := range path {
			parts = append(parts, names.frame(node, java)...)
		}
		spot.Stack, spot.StackShare = strings.Join(parts, ";"), float64(under)/float64(st.n)
		out[r] = spot
	}
	return out, found
}

// namer names stack nodes' frames as flame graphs do, caching per node.
type namer struct {
	c      *subsecond.Capture
	m      *query.Match
	frames [2]map[int32][]string
	leaves [2]map[int32]string
}

func newNamer(c *subsecond.Capture, m *query.Match) *namer {
	return &namer{c: c, m: m, frames: [2]map[int32][]string{{}, {}}, leaves: [2]map[int32]string{{}, {}}}
}

func idx(java bool) int {
	if java {
		return 1
	}
	return 0
}

// frame returns the names of node's own frame, none when the filter's
// Only hides it.
func (nm *namer) frame(node int32, java bool) []string {
	j := idx(java)
	if v, ok := nm.frames[j][node]; ok {
		return v
	}
	fr := nm.c.Nodes[node].Frame
	var v []string
	if nm.m.KeepFrame(fr) {
		rec := &nm.c.Frames[fr]
		v = symbol.Names(nm.c.Strings[rec.Symbol], nm.c.Strings[rec.DSO], "", 0, subsecond.KindUnknown, java, symbol.Options{})
	}
	nm.frames[j][node] = v
	return v
}

// leaf returns the self function of a sample with stack node: the last
// name of its leaf-most shown frame, "" for none.
func (nm *namer) leaf(node int32, java bool) string {
	j := idx(java)
	if v, ok := nm.leaves[j][node]; ok {
		return v
	}
	v := ""
	for n := node; n > 0; n = nm.c.Nodes[n].Parent {
		if names := nm.frame(n, java); len(names) > 0 {
			v = names[len(names)-1]
			break
		}
	}
	nm.leaves[j][node] = v
	return v
}

// scratch is a reusable subtree of the stack prefix tree: totals per node
// and child lists, reset by undoing only the touched nodes.
type scratch struct {
	total      []int64
	first, sib []int32
	touched    []int32
}

func newScratch(n int) *scratch {
	s := &scratch{total: make([]int64, n), first: make([]int32, n), sib: make([]int32, n)}
	for i := range s.first {
		s.first[i], s.sib[i] = -1, -1
	}
	return s
}

func (s *scratch) reset() {
	for _, n := range s.touched {
		s.total[n], s.first[n], s.sib[n] = 0, -1, -1
	}
	s.total[0], s.first[0] = 0, -1
	s.touched = s.touched[:0]
}

// add counts n samples at node and its ancestors.
func (s *scratch) add(c *subsecond.Capture, node int32, n int64) {
	for ; node > 0; node = c.Nodes[node].Parent {
		if s.total[node] == 0 {
			s.touched = append(s.touched, node)
			p := c.Nodes[node].Parent
			s.sib[node], s.first[p] = s.first[p], node
		}
		s.total[node] += n
	}
	s.total[0] += n
}

// heaviest descends from the root into the heaviest child while some
// child outweighs the node's self samples; it returns the path and the
// samples under its last node.
func (s *scratch) heaviest() ([]int32, int64) {
	var path []int32
	node := int32(0)
	for {
		best, kids := int32(-1), int64(0)
		for ch := s.first[node]; ch >= 0; ch = s.sib[ch] {
			kids += s.total[ch]
			if best < 0 || s.total[ch] > s.total[best] || s.total[ch] == s.total[best] && ch < best {
				best = ch
			}
		}
		if best < 0 || s.total[best] <= s.total[node]-kids {
			return path, s.total[node]
		}
		path = append(path, best)
		node = best
	}
}

// narrowing returns the criteria of f that narrow which samples count on a
// CPU, as URL parameters ("only=kernel comm=dd"): all but cpu, event and
// idle. It returns "" when there are none.
func narrowing(f query.Filter) string {
	v := f.Values()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if k != "cpu" && k != "event" && k != "idle" {
			parts = append(parts, k+"="+v.Get(k))
		}
	}
	return strings.Join(parts, " ")
}

// hidden finds the CPUs that have episodes without the narrowing criteria
// of f but none with them, and lists them in rep.
func (h *hunt) hidden(f query.Filter, opt HotOptions, rep *Report, narrow string) error {
	wide := query.Filter{CPUs: f.CPUs, Event: f.Event, Idle: f.Idle}
	k, rows, err := perCore(h.c, wide, opt.Bucket)
	if err != nil {
		return err
	}
	m, err := wide.Compile(h.c)
	if err != nil {
		return err
	}
	w := newHunt(h.c, m, k, rows, opt, h.last)
	w.episodes()
	found := map[int32]bool{}
	for _, e := range h.eps {
		found[h.k.CPUs[e.row]] = true
	}
	for _, e := range w.eps {
		if cpu := k.CPUs[e.row]; !found[cpu] {
			found[cpu] = true
			rep.Hidden = append(rep.Hidden, cpu)
		}
	}
	if len(rep.Hidden) == 0 {
		return nil
	}
	slices.Sort(rep.Hidden)
	what := "busy"
	if opt.Measure == MeasureSystem {
		what = "in the kernel"
	}
	cores, verb, cpus, have := "cores", "are", "CPUs", "have"
	if len(rep.Hidden) == 1 {
		cores, verb, cpus, have = "core", "is", "CPU", "has"
	}
	list := make([]string, 0, len(rep.Hidden))
	for i, cpu := range rep.Hidden {
		if i == 10 {
			list = append(list, "…")
			break
		}
		list = append(list, strconv.Itoa(int(cpu)))
	}
	rep.Note = fmt.Sprintf("%d %s %s ≥ %s%% for %s or more %s hidden by %s: %s %s %s hot spots without that filter",
		len(rep.Hidden), cores, what, strconv.FormatFloat(100*opt.Threshold, 'f', -1, 64), query.DisplayDuration(opt.Min),
		verb, narrow, cpus, strings.Join(list, ", "), have)
	return nil
}
