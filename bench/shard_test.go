package bench

import (
	"fmt"
	"testing"
)

func TestShareSplitsExactly(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, x := range []int{0, 1, 2, 5, 16, 200} {
			sum := 0
			for i := range n {
				sum += shard{i, n}.share(x)
			}
			if sum != x {
				t.Errorf("n=%d x=%d: shares add up to %d", n, x, sum)
			}
		}
	}
	s := shard{1, 3}
	if got := []int{s.id(0), s.id(1), s.id(2)}; fmt.Sprint(got) != "[1 4 7]" {
		t.Errorf("shard 1/3 ids %v", got)
	}
}
