package bench

import (
	"context"
	"testing"

	"servebench/record"
)

// distOf's median is type 7 (the mean of the two middle values of an even count), checked
// against values worked by hand; its input is left in its order.
func TestDistOf(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want record.Dist
	}{
		{nil, record.Dist{}},
		{[]int{7}, record.Dist{Mean: 7, P50: 7, Max: 7}},
		{[]int{3, 1, 2}, record.Dist{Mean: 2, P50: 2, Max: 3}},
		{[]int{4, 1, 3, 2}, record.Dist{Mean: 2.5, P50: 2.5, Max: 4}},
		{[]int{10, 1, 1, 1}, record.Dist{Mean: 3.25, P50: 1, Max: 10}},
	} {
		in := append([]int(nil), c.xs...)
		if got := distOf(c.xs); got != c.want {
			t.Errorf("distOf(%v) = %+v, want %+v", in, got, c.want)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Errorf("distOf reordered its input: %v, was %v", c.xs, in)
				break
			}
		}
	}
}

// TestUpfrontParts: a run builds the parts that fit in 1,024 prompts before its first
// request (at least one), unless its context sets another bound (WithUpfrontPrompts, which
// internal/cli's --repeat 100000000 tests set to 64).
func TestUpfrontParts(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		p     plan
		limit context.Context
		want  int
	}{
		{plan{warm: 4, measured: 28, parts: 100000000}, ctx, 32},
		{plan{warm: 0, measured: 1000, parts: 3}, ctx, 1},
		{plan{warm: 0, measured: 5000, parts: 3}, ctx, 1},
		{plan{warm: 2, measured: 10, parts: 5}, ctx, 5},
		{plan{warm: 4, measured: 28, parts: 100000000}, WithUpfrontPrompts(ctx, 64), 2},
		{plan{warm: 4, measured: 28, parts: 100000000}, WithUpfrontPrompts(ctx, 0), 32},
	} {
		if got := c.p.upfrontParts(upfrontPrompts(c.limit)); got != c.want {
			t.Errorf("%+v: %d parts up front, want %d", c.p, got, c.want)
		}
	}
}
