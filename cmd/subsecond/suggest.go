package main

import "sort"

// suggest returns the name among names closest to word by edit distance,
// or "" when none is close enough to be what was meant: at most two edits,
// and fewer edits than word has letters. Ties go to the first name in
// sorted order, so that the suggestion does not depend on map order.
func suggest(word string, names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	best, bestD := "", 3
	for _, n := range sorted {
		if d := editDistance(word, n); d < bestD && d < len([]rune(word)) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance returns the Levenshtein distance between a and b: the
// fewest single-rune insertions, deletions and substitutions that turn a
// into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
