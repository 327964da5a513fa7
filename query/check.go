package query

import (
	"math/bits"
	"slices"
	"strconv"

	"github.com/subsecond/subsecond"
)

// Check reports a filter that cannot match anything in c because it names
// only CPUs, processes or threads the capture does not have, or a command
// it does not run: an error naming the parameter and what the capture has
// ("cpu: the capture has no CPU 96; its CPUs are 0-95"), wrapping
// ErrInvalid. A list that names some ids the capture has passes. The views
// (package engine) check their filter with it before computing, so the
// CLI says so and the API answers 400 instead of drawing an empty view.
func (f Filter) Check(c *subsecond.Capture) error {
	if len(f.CPUs) > 0 {
		cpus := SeenCPUs(c)
		switch {
		case len(cpus) == 0:
			return Invalidf("cpu", "the capture records no CPU numbers")
		case !anyIn(f.CPUs, cpus):
			what := "CPU " + FormatIDList(f.CPUs)
			if len(f.CPUs) > 1 {
				what = "CPUs " + FormatIDList(f.CPUs)
			}
			return Invalidf("cpu", "the capture has no %s; its CPUs are %s", what, FormatIDList(cpus))
		}
	}
	if len(f.PIDs) > 0 {
		pids := seenIDs(c, idPID)
		switch {
		case len(pids) == 0:
			return Invalidf("pid", "the capture records no process ids (perf script printed thread ids alone; filter with tid)")
		case !anyIn(f.PIDs, pids):
			return Invalidf("pid", "the capture has no process %s (it has %s)", FormatIDList(f.PIDs), count(len(pids), "process", "processes"))
		}
	}
	if len(f.TIDs) > 0 {
		tids := seenIDs(c, idTID)
		switch {
		case len(tids) == 0:
			return Invalidf("tid", "the capture records no thread ids")
		case !anyIn(f.TIDs, tids):
			return Invalidf("tid", "the capture has no thread %s (it has %s)", FormatIDList(f.TIDs), count(len(tids), "thread", "threads"))
		}
	}
	if f.Comm != "" {
		if comms := seenComms(c); !comms[f.Comm] {
			return Invalidf("comm", "the capture has no command named %q (it has %s; comm_regex matches part of a name)", f.Comm, count(len(comms), "command", "commands"))
		}
	}
	return nil
}

// SeenCPUs returns the distinct CPU numbers of c's samples, sorted,
// without Unknown. It is built once per capture and shared by the views
// that need it (the cores map's rows, the filter check).
func SeenCPUs(c *subsecond.Capture) []int32 { return seenIDs(c, idCPU) }

// idColumn names one of a capture's id columns.
type idColumn int

const (
	idCPU idColumn = iota
	idPID
	idTID
)

type seenKey struct{ col idColumn }

// idList is the distinct ids of a column, as seenIDs keeps them.
type idList []int32

// Bytes returns the memory l holds (Sized).
func (l idList) Bytes() int64 { return subsecond.SliceBytes(l) }

// seenIDs returns the distinct ids of c's column col, sorted, without
// Unknown, computed once per capture and column: a filter on CPUs checks
// them without waiting for the process and thread ids.
func seenIDs(c *subsecond.Capture, col idColumn) []int32 {
	return subsecond.Derived(c, seenKey{col}, func() idList {
		s := &c.Samples
		return distinct([...][]int32{idCPU: s.CPU, idPID: s.PID, idTID: s.TID}[col])
	})
}

type commsKey struct{}

// commSet is the command names of a capture's samples.
type commSet map[string]bool

// Bytes returns the memory s holds (Sized): the names are the capture's
// own strings, and a map entry is counted as 48 bytes.
func (s commSet) Bytes() int64 { return 48 * int64(len(s)) }

// seenComms returns the command names of c's samples, computed once per
// capture.
func seenComms(c *subsecond.Capture) commSet {
	return subsecond.Derived(c, commsKey{}, func() commSet {
		comms := commSet{}
		seen := make([]bool, len(c.Strings))
		for _, k := range c.Samples.Comm {
			if !seen[k] {
				seen[k] = true
				comms[c.Strings[k]] = true
			}
		}
		return comms
	})
}

// denseIDs bounds the ids distinct marks in a bitset: Linux's largest
// pid_max (2^22), above every CPU number, process and thread id perf prints
// for a Linux host.
const denseIDs = 1 << 22

// distinct returns the sorted distinct ids of col, without Unknown. The
// first filtered request on a capture waits for it, so it makes one pass
// to size a bitset and one to mark it, with no hashing per sample (a map
// took 10-40 ms on a 564,480-sample capture); ids outside [0, denseIDs), in
// no capture from Linux, go to a map.
func distinct(col []int32) []int32 {
	hi := int32(-1)
	for _, id := range col {
		if id < denseIDs {
			hi = max(hi, id)
		}
	}
	set := make([]uint64, hi/64+1)
	var other map[int32]struct{}
	for _, id := range col {
		switch {
		case id >= 0 && id < denseIDs:
			set[id/64] |= 1 << (id % 64)
		case id != subsecond.Unknown:
			if other == nil {
				other = map[int32]struct{}{}
			}
			other[id] = struct{}{}
		}
	}
	n := len(other)
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	out := make([]int32, 0, n)
	for i, w := range set {
		for ; w != 0; w &= w - 1 {
			out = append(out, int32(i*64+bits.TrailingZeros64(w)))
		}
	}
	if other != nil {
		for id := range other {
			out = append(out, id)
		}
		slices.Sort(out)
	}
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

// CheckHost reports whether h can name a host (see subsecond.HostProblem):
// the error is a *ParamError for host.
func CheckHost(h string) error {
	if p := subsecond.HostProblem(h); p != "" {
		return Invalidf("host", "%s", p)
	}
	return nil
}
