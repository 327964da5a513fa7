package heatmap

import (
	"fmt"
	"net/url"

	"github.com/subsecond/subsecond"
)

// Bucket limits of the cores map, in nanoseconds.
const (
	MinBucket     = int64(1e6)
	MaxBucket     = int64(60e9)
	DefaultBucket = int64(100e6)
)

// ParseBucket reads the "bucket" parameter (seconds; default 0.1). Errors
// wrap subsecond.ErrInvalid.
func ParseBucket(v url.Values) (int64, error) {
	s := v.Get("bucket")
	if s == "" {
		return DefaultBucket, nil
	}
	b, err := subsecond.ParseSeconds("bucket", s)
	if err != nil {
		return 0, err
	}
	return b, checkBucket(b)
}

func checkBucket(b int64) error {
	if b < MinBucket || b > MaxBucket {
		return fmt.Errorf("bucket: %s s is out of range 0.001..60: %w", subsecond.FormatSeconds(b), subsecond.ErrInvalid)
	}
	return nil
}

// Cores is the cores map: one row per CPU, one column per bucket of Bucket
// nanoseconds from T0. Samples[i][b] counts the samples of CPU CPUs[i] in
// [T0 + b·Bucket, T0 + (b+1)·Bucket) that pass the filter. Busy[i][b] is the
// bucket's non-idle samples that pass the filter (idle ones never count,
// whatever the filter's Idle) divided by Expected, clamped to 1.
//
// Expected is the number of samples one CPU yields per bucket at the
// profile's sampling rate (FrequencyHz × Bucket). When the rate is unknown it
// is the largest per-CPU bucket count of samples that pass the filter, idle
// included. CPUs lists every CPU seen in the capture (any event), restricted
// to the filter's CPU set; samples without a CPU are left out.
type Cores struct {
	T0       int64       `json:"t0_ns"`
	Bucket   int64       `json:"bucket_ns"`
	Buckets  int         `json:"buckets"`
	CPUs     []int32     `json:"cpus"`
	Samples  [][]int64   `json:"samples"`
	Busy     [][]float64 `json:"busy"`
	Expected float64     `json:"expected"`

	busy [][]int64 // non-idle counts behind Busy
}

// PerCore returns the cores map of c's samples that pass f, in buckets of
// bucket nanoseconds (0: DefaultBucket). Errors wrap subsecond.ErrInvalid
// or subsecond.ErrEmptyRange (no timed samples).
func PerCore(c *subsecond.Capture, f subsecond.Filter, bucket int64) (*Cores, error) {
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
	if v, ok := cr.sparse[cpu]; ok && cpu >= 0 {
		return v
	}
	return -1
}

func perCore(c *subsecond.Capture, f subsecond.Filter, bucket int64) (*Cores, *cpuRows, error) {
	if bucket == 0 {
		bucket = DefaultBucket
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
	// the rare huge id goes through a map.
	const dense = 1 << 14
	row := make([]int32, dense)
	for i := range row {
		row[i] = -1
	}
	sparse := map[int32]int32{}
	var inSet map[int32]bool
	if len(f.CPUs) > 0 {
		inSet = map[int32]bool{}
		for _, id := range f.CPUs {
			inSet[id] = true
		}
	}
	seen := make([]bool, dense)
	seenBig := map[int32]bool{}
	for _, cpu := range c.Samples.CPU {
		if cpu >= 0 && cpu < dense {
			seen[cpu] = true
		} else if cpu >= dense {
			seenBig[cpu] = true
		}
	}
	var cpus []int32
	for id, ok := range seen {
		if ok && (inSet == nil || inSet[int32(id)]) {
			row[id] = int32(len(cpus))
			cpus = append(cpus, int32(id))
		}
	}
	for _, id := range sortedKeys(seenBig) {
		if inSet == nil || inSet[id] {
			sparse[id] = int32(len(cpus))
			cpus = append(cpus, id)
		}
	}
	if int64(len(cpus))*nb > MaxCells {
		return nil, nil, fmt.Errorf("bucket: %d CPUs × %d buckets of %s s exceed %d cells; use wider buckets: %w",
			len(cpus), nb, subsecond.FormatSeconds(bucket), MaxCells, subsecond.ErrInvalid)
	}
	rows := &cpuRows{dense: row, sparse: sparse}
	k := &Cores{T0: t0, Bucket: bucket, Buckets: int(nb), CPUs: cpus}
	k.Samples = grid(len(cpus), int(nb))
	k.busy = grid(len(cpus), int(nb))

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
		if !idle {
			k.busy[r][b]++
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
	k.Busy = make([][]float64, len(cpus))
	flat := make([]float64, len(cpus)*int(nb))
	for r := range k.Busy {
		k.Busy[r] = flat[r*int(nb) : (r+1)*int(nb) : (r+1)*int(nb)]
		for b, n := range k.busy[r] {
			if k.Expected > 0 {
				k.Busy[r][b] = min(1, float64(n)/k.Expected)
			}
		}
	}
	return k, rows, nil
}

func grid(rows, cols int) [][]int64 {
	flat := make([]int64, rows*cols)
	g := make([][]int64, rows)
	for r := range g {
		g[r] = flat[r*cols : (r+1)*cols : (r+1)*cols]
	}
	return g
}

func sortedKeys(m map[int32]bool) []int32 {
	ks := make([]int32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
