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
	slots := make([]S, size)
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
