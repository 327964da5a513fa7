package probe

import (
	"math/rand/v2"
	"testing"
)

type slot struct {
	key uint64 // 0: free
	val int
}

// TestGrow: every entry of a table grown again and again is found by
// probing from its hash's top bits, and the free slots are the rest.
func TestGrow(t *testing.T) {
	used := func(s *slot) bool { return s.key != 0 }
	hash := func(s *slot) uint64 { return s.key * 0x9E3779B97F4A7C15 }
	var slots []slot
	var shift uint8
	want := map[uint64]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 5000 {
		if 2*(n+1) > len(slots) {
			slots, shift = Grow(slots, 16, used, hash)
			if len(slots)&(len(slots)-1) != 0 || len(slots) < 16 || 1<<(64-shift) != len(slots) {
				t.Fatalf("after %d entries: %d slots, shift %d", n, len(slots), shift)
			}
		}
		k := r.Uint64() | 1
		want[k] = n
		e := slot{key: k, val: n}
		mask := uint64(len(slots) - 1)
		i := hash(&e) >> shift
		for used(&slots[i]) {
			i = (i + 1) & mask
		}
		slots[i] = e
	}
	found := 0
	for _, s := range slots {
		if s.key == 0 {
			continue
		}
		found++
		mask := uint64(len(slots) - 1)
		i := hash(&s) >> shift
		for slots[i].key != s.key {
			if slots[i].key == 0 {
				t.Fatalf("key %x not found by probing from its hash", s.key)
			}
			i = (i + 1) & mask
		}
		if want[s.key] != s.val {
			t.Errorf("key %x holds %d; want %d", s.key, s.val, want[s.key])
		}
	}
	if found != len(want) {
		t.Errorf("%d entries in the table; want %d", found, len(want))
	}
}

// TestMake: the slots are n, and zero, whatever the heap held before.
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 1 << 17} {
		for range 3 {
			s := Make[slot](n)
			if len(s) != n {
				t.Fatalf("len(Make(%d)) = %d; want %d", n, len(s), n)
			}
			for i := range s {
				if s[i] != (slot{}) {
					t.Fatalf("Make(%d)[%d] = %v; want zero", n, i, s[i])
				}
				s[i] = slot{key: uint64(i) + 1, val: i} // garbage for the next round
			}
		}
	}
}
