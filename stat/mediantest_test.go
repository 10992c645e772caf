package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// MedianGreater against hand counts and against every split of the pooled values enumerated.
func TestMedianGreaterByHand(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		p    float64
	}{
		{[]float64{4, 5, 6}, []float64{1, 2, 3}, 4.0 / 20},   // j = 2, r = 0: the top two both a's, 4 of C(6,3) splits
		{[]float64{9, 8, 7, 1}, []float64{2, 3, 4, 5}, 0},    // one of four low: enumerated
		{[]float64{9, 8, 1, 1}, []float64{2, 3, 4, 5}, 0},    // two of four low: enumerated
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 1},          // a below b: every split
		{[]float64{7, 7.5, 0.5}, []float64{1, 2, 6.5, 8}, 0}, // filled below
	} {
		want := c.p
		if want == 0 {
			want = enumerateMedian(c.a, c.b)
		}
		if got := MedianGreater(c.a, c.b); math.Abs(got-want) > 1e-12 {
			t.Errorf("MedianGreater(%v, %v) = %v, want %v", c.a, c.b, got, want)
		}
	}
	// a minority of a's values as low as b's: the same p as with them high
	hi := MedianGreater([]float64{500, 500, 500, 500, 500, 500, 500, 500}, seq(100))
	lo := MedianGreater([]float64{500, 500, 500, 500, 500, 500, 0, 0}, seq(100))
	if hi != lo || hi >= 1e-4 {
		t.Errorf("two low of eight: p %v, all high: %v; want equal and below 1e-4", lo, hi)
	}
	if got := MedianGreater(nil, seq(3)); got != 1 {
		t.Errorf("empty a: p = %v, want 1", got)
	}
}

// MedianGreater's level: under the null (a and b from one distribution) P(p ≤ α) ≤ α.
func TestMedianGreaterLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 20000
	for _, n1 := range []int{5, 8, 13} {
		hits := 0
		for range trials {
			a, b := make([]float64, n1), make([]float64, 60)
			for i := range a {
				a[i] = rng.ExpFloat64()
			}
			for i := range b {
				b[i] = rng.ExpFloat64()
			}
			if MedianGreater(a, b) <= 0.05 {
				hits++
			}
		}
		// 0.05 plus four standard errors of a proportion of 20000
		if rate := float64(hits) / trials; rate > 0.05+4*math.Sqrt(0.05*0.95/trials) {
			t.Errorf("n1 = %d: P(p ≤ 0.05) = %.4f under the null", n1, rate)
		}
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// enumerateMedian is P(R' ≤ R) over every split of the pooled values (no ties), R the count
// of b's values at or above a's (⌊len(a)/2⌋+1)-th largest.
func enumerateMedian(a, b []float64) float64 {
	m, n := len(a), len(b)
	pool := slices.Concat(a, b)
	count := func(as, bs []float64) int {
		s := slices.Clone(as)
		slices.Sort(s)
		y, r := s[len(s)-(len(s)/2+1)], 0
		for _, x := range bs {
			if x >= y {
				r++
			}
		}
		return r
	}
	r := count(a, b)
	hits, all := 0, 0
	for mask := 0; mask < 1<<(m+n); mask++ {
		if bitsSet(mask) != m {
			continue
		}
		var as, bs []float64
		for i, x := range pool {
			if mask&(1<<i) != 0 {
				as = append(as, x)
			} else {
				bs = append(bs, x)
			}
		}
		all++
		if count(as, bs) <= r {
			hits++
		}
	}
	return float64(hits) / float64(all)
}

// Half of a as low as b is not a median above b: with an even count the lower middle value
// is tested, so two slow of four are no evidence however slow.
func TestMedianGreaterEvenHalf(t *testing.T) {
	half := MedianGreater([]float64{500, 500, 0.5, 1.5}, seq(100))
	if half < 0.05 {
		t.Errorf("two of four above b: p = %v, want ≥ 0.05", half)
	}
	if three := MedianGreater([]float64{500, 500, 500, 1.5}, seq(100)); three >= 1e-3 {
		t.Errorf("three of four above b: p = %v, want < 1e-3", three)
	}
}
