// Package probe holds what the hash tables with open addressing and linear
// probing share (the interner's node table, the import's stack and frame
// tables): growing by doubling and putting every entry back.
package probe

import "math/bits"

// Grow returns a table of twice as many slots as old, and at least least
// (a power of two), with every slot of old that used reports in use put
// back where linear probing from hash>>shift finds it, and that shift: 64
// less the log2 of the table's size, so that a 64-bit hash's top bits
// choose the slot.
func Grow[S any](old []S, least int, used func(*S) bool, hash func(*S) uint64) ([]S, uint8) {
	size := max(least, 2*len(old))
	slots := Make[S](size)
	shift := uint8(64 - bits.Len(uint(size-1)))
	mask := uint64(size - 1)
	for k := range old {
		s := &old[k]
		if !used(s) {
			continue
		}
		i := hash(s) >> shift
		for used(&slots[i]) {
			i = (i + 1) & mask
		}
		slots[i] = *s
	}
	return slots, shift
}

// Make returns n zero slots for a table that is read before it is written
// (a probe, a direct-mapped cache), having written them. Go does not write
// a large slice that it takes fresh from the operating system; a read is
// then the first touch of each of its pages, which maps the kernel's
// shared zero page, and the write that follows faults again to replace it,
// flushing the page's old mapping from the TLB of every CPU the process
// runs on (an inter-processor interrupt each). Written first, a page
// faults once. On the import of the real 27 s capture, samples under
// such second faults were 1.8% and 7.6% of two profiles (a flush costs
// as much as the other CPUs are running the process's threads), nine
// tenths of them in tables made here.
func Make[S any](n int) []S {
	s := make([]S, n)
	clear(s) // not elided: the compiler does not know the memory is zero
	return s
}
