// Package suggest finds the name a mistyped one was meant to be ("--concurency": did you
// mean --concurrency?).
package suggest

import "strings"

// Nearest returns the name among names closest to typed within maxEdits edits, counting a
// name that typed (3 characters or more) begins as one edit away ("conc" for
// "concurrency"); the alphabetically first of equally close names; "" when none is close.
func Nearest(typed string, names []string, maxEdits int) string {
	best, bestD := "", maxEdits+1
	for _, n := range names {
		d := Distance(typed, n)
		if len(typed) >= 3 && strings.HasPrefix(n, typed) {
			d = min(d, 1)
		}
		if d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, counted in bytes (the names are
// ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
