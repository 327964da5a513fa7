package store

import "math/bits"

// The per-sample indexes of a CPUDict part (a dictionary of tuples, see
// dictPart) are range coded, each in the context of its sample's CPU: a
// CPU runs the same thread for milliseconds at a time, so its next
// sample's thread is most often its last one's. Per sample:
//
//	a bit: the same tuple as the CPU's sample before in the chunk (not
//	       coded for a CPU's first sample); its model's context is whether
//	       the CPU's sample before was the same as its own before
//	else a symbol below 64 (a bit tree, its context whether the CPU had a
//	       sample before): 0 for a tuple not met before in the chunk (the
//	       next of the dictionary, which is in order of first appearance),
//	       1+r for the tuple at rank r < 62 of the chunk's most recently
//	       met tuples (by the samples that did not repeat their CPU's;
//	       the CPU's own last left out), 63 for another, whose dictionary
//	       index follows in bits.Len(tuples-1) bits.
//
// On the real 27 s capture (47,290 samples; 1,506 tuples over 28 chunks)
// the indexes take 13.5 KB, where as uvarints they made most of the 28.8 KB
// that zstd made of the chunks' thread parts; the chunks shrink from
// 103,329 to 97,605 bytes. A flag for "the same as the CPU's before"
// costs most of it (0.95 bits a sample here: 64% repeat); its context
// could also be the time since the CPU's sample before, which measured no
// better. Moving a repeated tuple to the front of the recent ones too
// would save 0.2% of those bytes but made loading the bundled capture
// (564,480 samples) take 35 ms instead of 26.

// recentTuples is the length of the list of most recently met tuples: a
// tuple's rank costs at most that many steps to find or move.
const recentTuples = 62

// tupleEscape is the symbol of a tuple met before but not among the
// recent ones.
const tupleEscape = recentTuples + 1

// cpuTuples holds the state the coder and decoder of CPUDict indexes share:
// each CPU's last tuple and whether it repeated, and the recent tuples.
type cpuTuples struct {
	last   []int32 // by CPU below maxDirectCPU: its last tuple + 1, 0 for none
	same   []bool  // by CPU below maxDirectCPU: its last sample repeated the one before
	other  map[int32]int32
	osame  map[int32]bool
	recent []int32 // most recent first
	met    int32   // tuples met so far: the next new one is met
	hit    [2]uint16
	which  []bitTree // [0] for a CPU's first sample, [1] after a miss
}

func newCPUTuples() *cpuTuples {
	return &cpuTuples{hit: [2]uint16{probInit, probInit}, which: newBitTrees(2), recent: make([]int32, 0, recentTuples)}
}

// get returns cpu's last tuple (−1 for none) and whether it repeated.
func (k *cpuTuples) get(cpu int32) (int32, bool) {
	if cpu >= 0 && cpu < maxDirectCPU {
		if int(cpu) >= len(k.last) {
			return -1, false
		}
		return k.last[cpu] - 1, k.same[cpu]
	}
	t, ok := k.other[cpu]
	if !ok {
		return -1, false
	}
	return t, k.osame[cpu]
}

func (k *cpuTuples) set(cpu, t int32, same bool) {
	if cpu >= 0 && cpu < maxDirectCPU {
		if int(cpu) >= len(k.last) {
			n := max(int(cpu)+1, 2*len(k.last))
			k.last = append(k.last, make([]int32, n-len(k.last))...)
			k.same = append(k.same, make([]bool, n-len(k.same))...)
		}
		k.last[cpu], k.same[cpu] = t+1, same
		return
	}
	if k.other == nil {
		k.other, k.osame = map[int32]int32{}, map[int32]bool{}
	}
	k.other[cpu], k.osame[cpu] = t, same
}

// rank returns t's rank among the recent tuples, −1 when it is not one.
func (k *cpuTuples) rank(t int32) int {
	for i, r := range k.recent {
		if r == t {
			return i
		}
	}
	return -1
}

// rankBesides returns t's rank among the recent tuples other than not
// (which t is not), −1 when it is not one.
func (k *cpuTuples) rankBesides(t, not int32) int {
	n := 0
	for _, r := range k.recent {
		switch r {
		case t:
			return n
		case not:
		default:
			n++
		}
	}
	return -1
}

// atBesides returns the tuple at rank r among the recent tuples other than
// not; false when there is none.
func (k *cpuTuples) atBesides(r int, not int32) (int32, bool) {
	for _, t := range k.recent {
		if t == not {
			continue
		}
		if r == 0 {
			return t, true
		}
		r--
	}
	return 0, false
}

// use makes t, at rank r (−1: not among them), the most recent tuple.
func (k *cpuTuples) use(t int32, r int) {
	if r < 0 {
		if len(k.recent) < recentTuples {
			k.recent = append(k.recent, 0)
		}
		r = len(k.recent) - 1
	}
	copy(k.recent[1:r+1], k.recent[:r])
	k.recent[0] = t
}

// encodeCPUTuples returns idx (each sample's tuple, new ones in order of
// first appearance) range coded in the context of each sample's CPU.
func encodeCPUTuples(idx []uint32, cpu []int32, tuples int) []byte {
	k := newCPUTuples()
	e := newRangeEncoder()
	width := bits.Len(uint(max(tuples-1, 0)))
	for i, v := range idx {
		t := int32(v)
		last, same := k.get(cpu[i])
		if last >= 0 {
			p := &k.hit[b2i(same)]
			if t == last {
				e.bit(p, 0)
				k.set(cpu[i], t, true)
				continue
			}
			e.bit(p, 1)
		}
		switch {
		case t == k.met:
			e.symbol(&k.which[b2i(last >= 0)], 0)
			k.met++
		default:
			if r := k.rankBesides(t, last); r >= 0 && r < recentTuples {
				e.symbol(&k.which[b2i(last >= 0)], 1+r)
			} else {
				e.symbol(&k.which[b2i(last >= 0)], tupleEscape)
				e.direct(uint64(t), width)
			}
		}
		k.use(t, k.rank(t))
		k.set(cpu[i], t, false)
	}
	return e.bytes()
}

// decodeCPUTuples reads what encodeCPUTuples wrote into idx, given the
// samples' CPUs; false when b is not such a coding of tuples tuples.
func decodeCPUTuples(b []byte, idx []uint32, cpu []int32, tuples int) bool {
	k := newCPUTuples()
	d := newRangeDecoder(b)
	width := bits.Len(uint(max(tuples-1, 0)))
	for i := range idx {
		last, same := k.get(cpu[i])
		if last >= 0 && d.bit(&k.hit[b2i(same)]) == 0 {
			idx[i] = uint32(last)
			k.set(cpu[i], last, true)
			continue
		}
		var t int32
		switch s := d.symbol(&k.which[b2i(last >= 0)]); {
		case s == 0:
			t = k.met
			k.met++
		case s == tupleEscape:
			v := d.direct(width)
			if v >= uint64(k.met) { // a tuple met before
				return false
			}
			t = int32(v)
		default:
			var ok bool
			if t, ok = k.atBesides(s-1, last); !ok {
				return false
			}
		}
		if int(t) >= tuples || d.bad {
			return false
		}
		idx[i] = uint32(t)
		k.use(t, k.rank(t))
		k.set(cpu[i], t, false)
	}
	return int(k.met) == tuples && d.done()
}

// b2i is 1 for true, else 0.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
