package fleetgen

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/subsecond/subsecond"
)

// Source is the fleet index of a generated fleet, in memory: a
// fleet.Source computed from the generated samples as the store's index
// counts them (slots of subsecond.IndexSlot from each capture's T0,
// PeakCore over the CPUs' seconds, commands, functions by symbol once per
// sample and call edges "caller;callee").
type Source struct {
	caps    []subsecond.IndexedCapture // by host, then Start
	counts  [][]subsecond.NameCount    // per capture, its names' per-slot counts
	labels  map[string][]subsecond.Label
	markers map[string][]subsecond.Marker
}

// Source returns the fleet's index.
func (f Fleet) Source() *Source {
	f = f.defaults()
	sts, dict := f.compiled()
	src := &Source{labels: map[string][]subsecond.Label{}, markers: map[string][]subsecond.Marker{}}
	slots := int((f.Length.Nanoseconds() + subsecond.IndexSlot - 1) / subsecond.IndexSlot)
	perSlot := int(subsecond.IndexSlot / 1e9) // seconds
	N := len(dict.names)
	for h := range f.Hosts {
		p := f.plan(h)
		for _, c := range p.caps {
			ic := subsecond.IndexedCapture{ID: c.ID, Host: c.Host, Start: c.Start.UnixNano(), Boot: c.Boot.UnixNano(),
				Kernel: "6.8.0-fleet", CPUs: f.CPUs, Slots: make([]subsecond.SlotTotals, slots)}
			counts := make([]int64, N*slots)
			// Per CPU and second of the capture: samples and system ones.
			secs := slots * perSlot
			cpuN := make([]int64, f.CPUs*secs)
			cpuSys := make([]int64, f.CPUs*secs)
			f.samples(&p, c, func(s sample) {
				st := &sts[s.stack]
				d := s.t - ic.Start
				slot, sec := int(d/subsecond.IndexSlot), int(d/1e9)
				ic.Slots[slot].Count(!st.idle, st.system)
				for _, id := range st.names {
					counts[int(id)*slots+slot]++
				}
				cpuN[s.cpu*secs+sec]++
				if st.system {
					cpuSys[s.cpu*secs+sec]++
				}
			})
			for sec := range secs {
				for cpu := range f.CPUs {
					if n := cpuN[cpu*secs+sec]; n >= subsecond.MinPeakSamples {
						sl := &ic.Slots[sec/perSlot]
						sl.PeakCore = max(sl.PeakCore, float64(cpuSys[cpu*secs+sec])/float64(n))
					}
				}
			}
			var ncs []subsecond.NameCount
			for id := range N {
				row := counts[id*slots : (id+1)*slots]
				if slices.ContainsFunc(row, func(v int64) bool { return v != 0 }) {
					nc := dict.names[id]
					nc.Capture, nc.Slots = c.ID, row
					ncs = append(ncs, nc)
				}
			}
			src.caps = append(src.caps, ic)
			src.counts = append(src.counts, ncs)
			// The labels set, and those a store derives from the header
			// Write prints (os release, nrcpus avail), sorted by key.
			ls := append([]subsecond.Label{{Key: subsecond.LabelCPUs, Value: strconv.Itoa(f.CPUs)},
				{Key: subsecond.LabelKernel, Value: ic.Kernel}}, c.Labels...)
			slices.SortFunc(ls, func(a, b subsecond.Label) int { return cmp.Compare(a.Key, b.Key) })
			src.labels[c.Host] = ls
		}
		src.markers[HostName(h)] = p.markers
	}
	return src
}

// inRange reports whether c has a slot starting in [from, to).
func inRange(c *subsecond.IndexedCapture, from, to int64) bool {
	s := c.Start // the first slot starting at or after from
	if from > c.Start {
		s += (from - c.Start + subsecond.IndexSlot - 1) / subsecond.IndexSlot * subsecond.IndexSlot
	}
	return s < c.Start+int64(len(c.Slots))*subsecond.IndexSlot && s < to
}

// IndexedCaptures returns the captures with a slot starting in [from, to),
// by host and then Start.
func (s *Source) IndexedCaptures(ctx context.Context, from, to int64) ([]subsecond.IndexedCapture, error) {
	var out []subsecond.IndexedCapture
	for i := range s.caps {
		if inRange(&s.caps[i], from, to) {
			out = append(out, s.caps[i])
		}
	}
	return out, ctx.Err()
}

// NameCounts returns the per-slot counts of the names of kind matching
// match in the captures with a slot in [from, to); more than subsecond.MaxIndexNames
// names is an error wrapping subsecond.ErrTooLarge.
func (s *Source) NameCounts(ctx context.Context, kind subsecond.NameKind, match *regexp.Regexp, from, to int64) ([]subsecond.NameCount, error) {
	var out []subsecond.NameCount
	names := map[string]bool{}
	for i := range s.caps {
		if !inRange(&s.caps[i], from, to) {
			continue
		}
		for _, nc := range s.counts[i] {
			if nc.Kind == kind && match.MatchString(nc.Name) {
				names[nc.Name] = true
				out = append(out, nc)
			}
		}
	}
	if len(names) > subsecond.MaxIndexNames {
		return nil, fmt.Errorf("%d names match %s, more than %d: %w", len(names), match, subsecond.MaxIndexNames, subsecond.ErrTooLarge)
	}
	return out, ctx.Err()
}

// NameTotals returns the names q selects, with their totals per capture
// over the slots starting in [q.From, q.To) (see fleet.Source).
func (s *Source) NameTotals(ctx context.Context, q subsecond.TotalsQuery) ([]subsecond.NameCount, error) {
	var out []subsecond.NameCount
	type key struct {
		kind subsecond.NameKind
		name string
	}
	total := map[key]int64{}
	for i := range s.caps {
		c := &s.caps[i]
		if !inRange(c, q.From, q.To) || q.Captures != nil && !q.Captures[c.ID] {
			continue
		}
		for _, nc := range s.counts[i] {
			if q.Kind != 0 && nc.Kind != q.Kind || q.Match != nil && !q.Match.MatchString(nc.Name) {
				continue
			}
			var n int64
			for k, v := range nc.Slots {
				if at := c.Start + int64(k)*subsecond.IndexSlot; at >= q.From && at < q.To {
					n += v
				}
			}
			if n > 0 {
				out = append(out, subsecond.NameCount{Capture: nc.Capture, Kind: nc.Kind, Name: nc.Name, Slots: []int64{n}})
				total[key{nc.Kind, nc.Name}] += n
			}
		}
	}
	var keys []key
	for k, n := range total {
		if n >= q.Min {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(total[b], total[a]), cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
	if q.Limit > 0 && len(keys) > q.Limit {
		keys = keys[:q.Limit]
	}
	kept := make(map[key]bool, len(keys))
	for _, k := range keys {
		kept[k] = true
	}
	out = slices.DeleteFunc(out, func(nc subsecond.NameCount) bool { return !kept[key{nc.Kind, nc.Name}] })
	slices.SortFunc(out, func(a, b subsecond.NameCount) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Capture, b.Capture))
	})
	return out, ctx.Err()
}

// HostLabels returns every host's labels, set and derived.
func (s *Source) HostLabels(ctx context.Context) (map[string][]subsecond.Label, error) {
	return s.labels, ctx.Err()
}

// Markers returns host's markers in [from, to), in time order.
func (s *Source) Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error) {
	var out []subsecond.Marker
	for _, m := range s.markers[host] {
		if m.Time >= from && m.Time < to {
			out = append(out, m)
		}
	}
	return out, ctx.Err()
}
