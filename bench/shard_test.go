package bench

import (
	"fmt"
	"slices"
	"testing"

	"servebench/runspec"
	"servebench/workload"
)

func TestShareSplitsExactly(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, x := range []int{0, 1, 2, 5, 16, 200} {
			sum := 0
			for i := range n {
				sum += shard{Shard: runspec.Shard{I: i, N: n}}.share(x)
			}
			if sum != x {
				t.Errorf("n=%d x=%d: shares add up to %d", n, x, sum)
			}
		}
	}
	s := shard{Shard: runspec.Shard{I: 1, N: 3}}
	if got := []int{s.id(0), s.id(1), s.id(2)}; fmt.Sprint(got) != "[1 4 7]" {
		t.Errorf("shard 1/3 ids %v", got)
	}
}

// TestShardBySession: a replayed trace's sessions are split whole, each to the shard of its
// first turn, so that no shard sends a turn whose previous turn another process sends; rows of
// no session stay k mod n, and the shards together send every row exactly once.
func TestShardBySession(t *testing.T) {
	// rows 0..9: a session 0 → 3 → 7, a session 1 → 2 → 8 → 9, rows 4, 5, 6 of no session
	follows := make([]*workload.Follow, 10)
	for _, e := range [][2]int{{3, 0}, {7, 3}, {2, 1}, {8, 2}, {9, 8}} {
		follows[e[0]] = &workload.Follow{Prev: e[1]}
	}
	want := map[int]string{0: "[0 3 4 6 7]", 1: "[1 2 5 8 9]"}
	seen := map[int]int{}
	for i := range 2 {
		s := shard{Shard: runspec.Shard{I: i, N: 2}}.bySession(follows)
		if got := fmt.Sprint(s.ids); got != want[i] {
			t.Errorf("shard %d/2 sends rows %s, want %s", i, got, want[i])
		}
		for j := range len(s.ids) {
			seen[s.id(j)]++
		}
		for k, f := range follows { // every later turn's previous turn is this shard's own
			if f != nil && slices.Contains(s.ids, k) && !slices.Contains(s.ids, f.Prev) {
				t.Errorf("shard %d/2 sends row %d without the turn it follows, row %d", i, k, f.Prev)
			}
		}
		// warmup 3 and 5 measured of the whole run: this shard's share of each
		if w, r := s.share(3), s.share(8)-s.share(3); i == 0 && (w != 1 || r != 4) || i == 1 && (w != 2 || r != 1) {
			t.Errorf("shard %d/2: warmup %d, measured %d", i, w, r)
		}
		// past its rows a shard's ids go past the trace, never onto another shard's
		if a, b := s.id(len(s.ids)), s.id(len(s.ids)+1); a < 10 || b <= a || (a-10)%2 != i {
			t.Errorf("shard %d/2 past its rows: ids %d, %d", i, a, b)
		}
	}
	for k := range 10 {
		if seen[k] != 1 {
			t.Errorf("row %d sent %d times by the shards", k, seen[k])
		}
	}
	if s := (shard{Shard: runspec.Shard{I: 1, N: 2}}).bySession(nil); s.ids != nil || s.id(2) != 5 {
		t.Errorf("a trace without sessions is split k mod n: ids %v, id(2) = %d", s.ids, s.id(2))
	}
}
