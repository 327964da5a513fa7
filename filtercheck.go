package subsecond

import (
	"slices"
	"strconv"
)

// Check reports a filter that cannot match anything in c because it names
// only CPUs, processes or threads the capture does not have, or a command
// it does not run: an error naming the parameter and what the capture has
// ("cpu: the capture has no CPU 96; its CPUs are 0-95"), wrapping
// ErrInvalid. A list that names some ids the capture has passes. The views
// (package engine) check their filter with it before computing, so the
// CLI says so and the API answers 400 instead of drawing an empty view.
func (f Filter) Check(c *Capture) error {
	if len(f.CPUs)+len(f.PIDs)+len(f.TIDs) == 0 && f.Comm == "" {
		return nil
	}
	ix := Derived(c, presentKey{}, func() *present { return newPresent(c) })
	if len(f.CPUs) > 0 && !anyIn(f.CPUs, ix.cpus) {
		if len(ix.cpus) == 0 {
			return Invalidf("cpu", "the capture records no CPU numbers")
		}
		what := "CPU " + FormatIDList(f.CPUs)
		if len(f.CPUs) > 1 {
			what = "CPUs " + FormatIDList(f.CPUs)
		}
		return Invalidf("cpu", "the capture has no %s; its CPUs are %s", what, FormatIDList(ix.cpus))
	}
	if len(f.PIDs) > 0 && !anyIn(f.PIDs, ix.pids) {
		if len(ix.pids) == 0 {
			return Invalidf("pid", "the capture records no process ids (perf script printed thread ids alone; filter with tid)")
		}
		return Invalidf("pid", "the capture has no process %s (it has %s)", FormatIDList(f.PIDs), count(len(ix.pids), "process", "processes"))
	}
	if len(f.TIDs) > 0 && !anyIn(f.TIDs, ix.tids) {
		if len(ix.tids) == 0 {
			return Invalidf("tid", "the capture records no thread ids")
		}
		return Invalidf("tid", "the capture has no thread %s (it has %s)", FormatIDList(f.TIDs), count(len(ix.tids), "thread", "threads"))
	}
	if f.Comm != "" && !ix.comms[f.Comm] {
		return Invalidf("comm", "the capture has no command named %q (it has %s; comm_regex matches part of a name)", f.Comm, count(len(ix.comms), "command", "commands"))
	}
	return nil
}

// present is what a capture's samples hold: their CPUs, processes and
// threads (sorted, distinct, without Unknown) and command names.
type present struct {
	cpus, pids, tids []int32
	comms            map[string]bool
}

type presentKey struct{}

// Bytes returns the memory p holds; the command names are the capture's
// own strings, and a map entry is counted as 48 bytes.
func (p *present) Bytes() int64 {
	return SliceBytes(p.cpus) + SliceBytes(p.pids) + SliceBytes(p.tids) + 48*int64(len(p.comms))
}

func newPresent(c *Capture) *present {
	s := &c.Samples
	p := &present{cpus: distinct(s.CPU), pids: distinct(s.PID), tids: distinct(s.TID), comms: map[string]bool{}}
	seen := make([]bool, len(c.Strings))
	for _, k := range s.Comm {
		if !seen[k] {
			seen[k] = true
			p.comms[c.Strings[k]] = true
		}
	}
	return p
}

// distinct returns the sorted distinct ids of col, without Unknown.
func distinct(col []int32) []int32 {
	set := map[int32]struct{}{}
	var last int32 = Unknown
	for _, id := range col {
		if id != last && id != Unknown {
			set[id] = struct{}{}
			last = id
		}
	}
	out := make([]int32, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// anyIn reports whether some id of want (sorted) is in have (sorted).
func anyIn(want, have []int32) bool {
	for _, id := range want {
		if _, ok := slices.BinarySearch(have, id); ok {
			return true
		}
	}
	return false
}

// count writes n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
