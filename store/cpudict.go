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
	last   byCPU[lastTuple]
	recent []int32 // most recent first
	met    int32   // tuples met so far: the next new one is met
	hit    [2]uint16
	which  []bitTree // [0] for a CPU's first sample, [1] after a miss
}

// lastTuple is a CPU's last tuple, and whether its sample repeated the
// CPU's sample before.
type lastTuple struct {
	t    int32
	same bool
}

func newCPUTuples() *cpuTuples {
	return &cpuTuples{hit: [2]uint16{probInit, probInit}, which: newBitTrees(2), recent: make([]int32, 0, recentTuples)}
}

// get returns cpu's last tuple (−1 for none) and whether it repeated.
func (k *cpuTuples) get(cpu int32) (int32, bool) {
	l, ok := k.last.get(cpu)
	if !ok {
		return -1, false
	}
	return l.t, l.same
}

// rankBesides returns t's rank among the recent tuples other than not
// (which t is not) and its place among them all; −1, −1 when it is not
// one.
func (k *cpuTuples) rankBesides(t, not int32) (rank, at int) {
	for i, r := range k.recent {
		switch r {
		case t:
			return rank, i
		case not:
		default:
			rank++
		}
	}
	return -1, -1
}

// atBesides returns the tuple at rank r among the recent tuples other than
// not and its place among them all; false when there is none.
func (k *cpuTuples) atBesides(r int, not int32) (int32, int, bool) {
	for i, t := range k.recent {
		if t == not {
			continue
		}
		if r == 0 {
			return t, i, true
		}
		r--
	}
	return 0, 0, false
}

// use makes t, at place at among the recent tuples (−1: not among them),
// the most recent tuple.
func (k *cpuTuples) use(t int32, at int) {
	if at < 0 {
		if len(k.recent) < recentTuples {
			k.recent = append(k.recent, 0)
		}
		at = len(k.recent) - 1
	}
	copy(k.recent[1:at+1], k.recent[:at])
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
				k.last.set(cpu[i], lastTuple{t, true})
				continue
			}
			e.bit(p, 1)
		}
		at := -1
		switch r, i := k.rankBesides(t, last); {
		case t == k.met:
			e.symbol(&k.which[b2i(last >= 0)], 0)
			k.met++
		case r >= 0:
			e.symbol(&k.which[b2i(last >= 0)], 1+r)
			at = i
		default:
			e.symbol(&k.which[b2i(last >= 0)], tupleEscape)
			e.direct(uint64(t), width)
		}
		k.use(t, at)
		k.last.set(cpu[i], lastTuple{t, false})
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
			k.last.set(cpu[i], lastTuple{last, true})
			continue
		}
		var t int32
		at := -1
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
			if t, at, ok = k.atBesides(s-1, last); !ok {
				return false
			}
		}
		if int(t) >= tuples || d.bad {
			return false
		}
		idx[i] = uint32(t)
		k.use(t, at)
		k.last.set(cpu[i], lastTuple{t, false})
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
