package fleetgen

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/parser"
)

// TestTextMatchesIndex parses captures' perf script text and counts, from
// the parsed samples alone, what the in-memory index holds for them: each
// slot's samples, busy and system ones, PeakCore, and every name's count.
func TestTextMatchesIndex(t *testing.T) {
	f := Fleet{Hosts: 4, Leak: 4, Seed: 3}
	src := f.Source()
	caps := f.Captures()
	ics, err := src.IndexedCaptures(context.Background(), math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if len(ics) != len(caps) {
		t.Fatalf("%d indexed captures; want %d", len(ics), len(caps))
	}
	all, err := src.NameCounts(context.Background(), subsecond.NameFunction, regexp.MustCompile(""), math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 7, len(caps) - 1} {
		c := caps[k]
		var buf bytes.Buffer
		if err := f.Write(&buf, c); err != nil {
			t.Fatal(err)
		}
		sc := parser.NewScanner(&buf, parser.Options{Strict: true})
		var slots []subsecond.SlotTotals
		funcs := map[string][]int64{}
		type cs struct{ cpu, sec int64 }
		perSec := map[cs]*subsecond.Counts{}
		var t0 int64
		for sc.Scan() {
			s := sc.Sample()
			if t0 == 0 {
				t0 = subsecond.FloorSecond(s.Time)
			}
			slot := int((s.Time - t0) / subsecond.IndexSlot)
			for len(slots) <= slot {
				slots = append(slots, subsecond.SlotTotals{})
			}
			idle := subsecond.IsIdleComm(s.Comm) && slices.ContainsFunc(s.Frames, func(fr subsecond.Frame) bool { return subsecond.IsIdleFunc(fr.Symbol) })
			sys := !idle && s.Frames[0].Kind == subsecond.KindKernel
			slots[slot].Count(!idle, sys)
			k := cs{int64(s.CPU), (s.Time - t0) / 1e9}
			if perSec[k] == nil {
				perSec[k] = new(subsecond.Counts)
			}
			perSec[k].Count(!idle, sys)
			seen := map[string]bool{}
			for _, fr := range s.Frames {
				if !seen[fr.Symbol] {
					seen[fr.Symbol] = true
					row := funcs[fr.Symbol]
					for len(row) <= slot {
						row = append(row, 0)
					}
					row[slot]++
					funcs[fr.Symbol] = row
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if md := sc.Metadata(); md.Hostname != c.Host || md.Clock != "realtime" {
			t.Errorf("capture %s: hostname %q, clock %q; want %q, realtime", c.ID, md.Hostname, md.Clock, c.Host)
		}
		for k, n := range perSec {
			if n.Samples >= subsecond.MinPeakSamples {
				sl := &slots[k.sec*1e9/subsecond.IndexSlot]
				sl.PeakCore = max(sl.PeakCore, float64(n.System)/float64(n.Samples))
			}
		}
		ic := ics[k]
		if ic.ID != c.ID || ic.Start != t0 || ic.Boot != c.Boot.UnixNano() {
			t.Errorf("indexed capture %d: %s start %d boot %d; want %s start %d boot %d", k, ic.ID, ic.Start, ic.Boot, c.ID, t0, c.Boot.UnixNano())
		}
		if !slices.Equal(ic.Slots, slots) {
			t.Errorf("capture %s: slots %v; parsed %v", c.ID, ic.Slots, slots)
		}
		got := map[string][]int64{}
		for _, nc := range all {
			if nc.Capture == c.ID {
				got[nc.Name] = nc.Slots
			}
		}
		if len(got) != len(funcs) {
			t.Errorf("capture %s: %d functions indexed; parsed %d", c.ID, len(got), len(funcs))
		}
		for fn, row := range funcs {
			if g := got[fn]; !slices.Equal(g[:len(row)], row) {
				t.Errorf("capture %s, %s: %v; parsed %v", c.ID, fn, g, row)
			}
		}
	}
}

// TestDeterministic checks that a seed gives the same fleet and another
// seed another.
func TestDeterministic(t *testing.T) {
	a, b, c := Fleet{Hosts: 2, Seed: 1}, Fleet{Hosts: 2, Seed: 1}, Fleet{Hosts: 2, Seed: 2}
	var wa, wb, wc bytes.Buffer
	for _, x := range []struct {
		f Fleet
		w *bytes.Buffer
	}{{a, &wa}, {b, &wb}, {c, &wc}} {
		if err := x.f.Write(x.w, x.f.Captures()[3]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(wa.Bytes(), wb.Bytes()) {
		t.Error("the same seed wrote different text")
	}
	if bytes.Equal(wa.Bytes(), wc.Bytes()) {
		t.Error("two seeds wrote the same text")
	}
}

// TestAt checks that a fleet with At records every host from At, each
// booted once at its own time before it.
func TestAt(t *testing.T) {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	f := Fleet{Hosts: 6, Boots: 3, Sessions: 1, PerSession: 3, BootLen: 7 * 24 * time.Hour, At: at, Seed: 4}
	boots := map[string]time.Time{}
	first := map[string]time.Time{}
	for _, c := range f.Captures() {
		if b, ok := boots[c.Host]; ok && !b.Equal(c.Boot) {
			t.Errorf("%s: booted at %s and at %s; want one boot", c.ID, b, c.Boot)
		}
		boots[c.Host] = c.Boot
		if _, ok := first[c.Host]; !ok {
			first[c.Host] = c.Start
		}
		if !c.Boot.Before(at) {
			t.Errorf("%s: booted at %s, not before %s", c.ID, c.Boot, at)
		}
	}
	distinct := map[time.Time]bool{}
	for h, s := range first {
		if !s.Equal(at) {
			t.Errorf("%s: first capture at %s; want %s", h, s, at)
		}
		distinct[boots[h]] = true
	}
	if len(first) != 6 || len(distinct) < 5 {
		t.Errorf("%d hosts with %d distinct boots; want 6 hosts booted at different times", len(first), len(distinct))
	}
}
