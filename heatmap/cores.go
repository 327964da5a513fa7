package heatmap

import (
	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

func checkBucket(b int64) error { return query.CheckParam("bucket", b) }

// Measure names the fraction that shades a cores-map cell and that hot
// spots must keep above their threshold: the "measure" query parameter
// (query.Query.Measure).
type Measure string

// Measures of the cores map and hot spots.
const (
	MeasureBusy   Measure = "busy"   // Cores.Busy; the web page also tints it by Cores.System
	MeasureSystem Measure = "system" // Cores.System
)

// Cells are the cells of a cores map, a capture's (Cores) or a host's
// night's (timeline.Grid): one row per CPU, CPUs in increasing order, and
// Buckets columns of Bucket nanoseconds. Samples, Busy and System are
// indexed [row][bucket]: Samples counts samples, and Busy and System are
// the busy and system fractions in [0, 1], as a sample's classes define
// them (subsecond.Classes), of what the map holding the cells says.
type Cells struct {
	Bucket  int64       `json:"bucket_ns"`
	Buckets int         `json:"buckets"`
	CPUs    []int32     `json:"cpus"`
	Samples [][]int64   `json:"samples"`
	Busy    [][]float64 `json:"busy"`
	System  [][]float64 `json:"system"`
}

// Fractions returns the cells' fractions for m: Busy or System.
func (k *Cells) Fractions(m Measure) [][]float64 {
	if m == MeasureSystem {
		return k.System
	}
	return k.Busy
}

// Cores is a capture's cores map: its Cells, one column per bucket of
// Bucket nanoseconds from T0. Samples[i][b] counts the samples of CPU
// CPUs[i] in [T0 + b·Bucket, T0 + (b+1)·Bucket) that pass the filter.
// Busy[i][b] is the bucket's busy samples that pass the filter (idle ones
// never count, whatever the filter's Idle) divided by Expected, clamped to
// 1. System[i][b] is the part of those busy samples that are system time
// (their leaf frame, the first of the leaf-first stack, is a kernel frame),
// divided by Expected and clamped to 1: %sys as top shows it. Busy − System
// is user time.
//
// Expected is the number of samples one CPU yields per bucket at the
// profile's sampling rate (FrequencyHz × Bucket). When the rate is unknown it
// is the largest per-CPU bucket count of samples that pass the filter, idle
// included. CPUs lists every CPU seen in the capture (any event), restricted
// to the filter's CPU set; samples without a CPU are left out.
type Cores struct {
	T0 int64 `json:"t0_ns"`
	Cells
	Expected float64 `json:"expected"`

	busy [][]int64 // non-idle counts behind Busy
	sys  [][]int64 // non-idle, kernel-leaf counts behind System
}

// bucketRange returns the span of bucket b.
func (k *Cores) bucketRange(b int) subsecond.Range {
	start := k.T0 + int64(b)*k.Bucket
	return subsecond.Range{Start: start, End: start + k.Bucket}
}

// PerCore returns the cores map of c's samples that pass f, in buckets of
// bucket nanoseconds (0: query.DefaultBucket). Errors wrap subsecond.ErrInvalid
// or subsecond.ErrEmptyRange (no timed samples).
func PerCore(c *subsecond.Capture, f query.Filter, bucket int64) (*Cores, error) {
	k, _, err := perCore(c, f, bucket)
	return k, err
}

// cpuRows maps CPU ids to cores-map rows: small ids through a slice, the
// rare huge id through a map.
type cpuRows struct {
	dense  []int32
	sparse map[int32]int32
}

// row returns cpu's row, or -1 when it has none.
func (cr *cpuRows) row(cpu int32) int32 {
	if cpu >= 0 && int(cpu) < len(cr.dense) {
		return cr.dense[cpu]
	}
	if cpu < 0 || len(cr.sparse) == 0 {
		return -1
	}
	if v, ok := cr.sparse[cpu]; ok {
		return v
	}
	return -1
}

func perCore(c *subsecond.Capture, f query.Filter, bucket int64) (*Cores, *cpuRows, error) {
	if bucket == 0 {
		bucket = query.DefaultBucket
	}
	if err := checkBucket(bucket); err != nil {
		return nil, nil, err
	}
	m, err := f.Compile(c)
	if err != nil {
		return nil, nil, err
	}
	t0, last, err := Span(c)
	if err != nil {
		return nil, nil, err
	}
	nb := (last-t0)/bucket + 1

	// Rows: every CPU seen, in the filter's set. Small ids index a slice;
	// the rare huge id goes through a map, consulted only for such ids.
	seen := query.SeenCPUs(c)
	dense := int32(0)
	if n := len(seen); n > 0 {
		dense = min(seen[n-1]+1, maxDenseCPU)
	}
	row := make([]int32, dense)
	for i := range row {
		row[i] = -1
	}
	sparse := map[int32]int32{}
	var inSet map[int32]bool
	if len(f.CPUs) > 0 {
		inSet = make(map[int32]bool, len(f.CPUs))
		for _, id := range f.CPUs {
			inSet[id] = true
		}
	}
	var cpus []int32
	for _, id := range seen {
		if inSet != nil && !inSet[id] {
			continue
		}
		if id < dense {
			row[id] = int32(len(cpus))
		} else {
			sparse[id] = int32(len(cpus))
		}
		cpus = append(cpus, id)
	}
	if int64(len(cpus))*nb > MaxCells {
		return nil, nil, query.Invalidf("bucket", "%d CPUs × %d buckets of %s s exceed %d cells; use wider buckets",
			len(cpus), nb, query.FormatSeconds(bucket), MaxCells)
	}
	rows := &cpuRows{dense: row, sparse: sparse}
	k := &Cores{T0: t0, Cells: Cells{Bucket: bucket, Buckets: int(nb), CPUs: cpus}}
	k.Samples = grid(len(cpus), int(nb))
	k.busy = grid(len(cpus), int(nb))
	k.sys = grid(len(cpus), int(nb))
	cl := subsecond.ClassesOf(c)

	k.Expected = c.Profile.FrequencyHz * float64(bucket) / 1e9
	var all [][]int64 // idle included, to scale Busy when the rate is unknown
	if k.Expected <= 0 {
		all = grid(len(cpus), int(nb))
	}
	lo, hi := c.Window(subsecond.Range{Start: t0, End: last + 1})
	s := &c.Samples
	for i := lo; i < hi; i++ {
		r := rows.row(s.CPU[i])
		if r < 0 {
			continue
		}
		pass, idle := m.Test(i)
		if !pass {
			continue
		}
		b := (s.Time[i] - t0) / bucket
		if busy, sys := cl.Nodes[s.Stack[i]].Time(idle); busy {
			k.busy[r][b]++
			if sys {
				k.sys[r][b]++
			}
		}
		if !idle || f.Idle {
			k.Samples[r][b]++
		}
		if all != nil {
			all[r][b]++
		}
	}

	for _, rowN := range all {
		for _, n := range rowN {
			k.Expected = max(k.Expected, float64(n))
		}
	}
	k.Busy = fractions(k.busy, k.Expected)
	k.System = fractions(k.sys, k.Expected)
	return k, rows, nil
}

// fractions returns counts over expected, clamped to 1 (all 0 when expected
// is not positive).
func fractions(counts [][]int64, expected float64) [][]float64 {
	out := make([][]float64, len(counts))
	if len(counts) == 0 {
		return out
	}
	nb := len(counts[0])
	flat := make([]float64, len(counts)*nb)
	for r := range out {
		out[r] = flat[r*nb : (r+1)*nb : (r+1)*nb]
		if expected <= 0 {
			continue
		}
		for b, n := range counts[r] {
			out[r][b] = min(1, float64(n)/expected)
		}
	}
	return out
}

// maxDenseCPU bounds the CPU ids a cores map finds rows for by slice.
const maxDenseCPU = 1 << 14

func grid(rows, cols int) [][]int64 {
	flat := make([]int64, rows*cols)
	g := make([][]int64, rows)
	for r := range g {
		g[r] = flat[r*cols : (r+1)*cols : (r+1)*cols]
	}
	return g
}
