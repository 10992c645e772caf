package stat

import (
	"math"
	"testing"
)

// RankSumExact against hand counts and against every ordering enumerated.
func TestRankSumExactByHand(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		p    float64
	}{
		{[]float64{3}, []float64{1, 2}, 1.0 / 3},                            // U = 2: 1 of 3 orderings
		{[]float64{4, 5, 6}, []float64{1, 2, 3}, 1.0 / 20},                  // complete separation: 1 of C(6,3)
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 1},                         // U = 0: every ordering
		{[]float64{19.56, 18.18, 66.54}, []float64{61.49, 66.51, 20.96}, 0}, // filled below
	} {
		want := c.p
		if want == 0 {
			want = enumerateU(c.a, c.b)
		}
		if got := RankSumExact(c.a, c.b); math.Abs(got-want) > 1e-12 {
			t.Errorf("RankSumExact(%v, %v) = %v, want %v", c.a, c.b, got, want)
		}
	}
}

// enumerateU is P(U' ≥ U) over every assignment of the pooled ranks to a (no ties).
func enumerateU(a, b []float64) float64 {
	m, n := len(a), len(b)
	u := 0
	for _, x := range a {
		for _, y := range b {
			if x > y {
				u++
			}
		}
	}
	hits, all := 0, 0
	for mask := 0; mask < 1<<(m+n); mask++ {
		if bitsSet(mask) != m {
			continue
		}
		all++
		k, as := 0, 0 // a's pairs: each a beats the b's below it
		for i := 0; i < m+n; i++ {
			if mask&(1<<i) != 0 {
				k += i - as
				as++
			}
		}
		if k >= u {
			hits++
		}
	}
	return float64(hits) / float64(all)
}

func bitsSet(x int) int {
	c := 0
	for ; x > 0; x &= x - 1 {
		c++
	}
	return c
}
