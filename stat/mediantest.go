package stat

import (
	"math"
	"slices"
)

// MedianGreater is the one-sided p of the exact test that the median of a is above the
// distribution of b (a control quantile test: Mathisen 1943, Gastwirth 1968). With j =
// ⌊len(a)/2⌋+1, a strict majority of a, and y the j-th largest of a (the median, or with an
// even count the lower of the two middle values, so that a's median is at least y), r counts
// the values of b at or above y; under the null every split of the pooled values into a and
// b is equally likely, and r or fewer values of b reach a's j-th largest exactly when at
// least j of the top j+r pooled values are a's, so p = P(H ≥ j) with H hypergeometric: j+r
// draws from len(a)+len(b) holding len(a). Ties with y count against a, which is
// conservative. Unlike the rank sum, a minority of a's values (fewer than half) as low as
// b's leaves p unchanged. 1 when either side is empty.
func MedianGreater(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	j := n1/2 + 1 // a strict majority
	s := slices.Clone(a)
	slices.Sort(s)
	y := s[n1-j]
	r := 0
	for _, x := range b {
		if x >= y {
			r++
		}
	}
	m := j + r
	p := 0.0
	for k := j; k <= min(n1, m); k++ {
		p += math.Exp(lchoose(n1, k) + lchoose(n2, m-k) - lchoose(n1+n2, m))
	}
	return math.Min(1, p)
}
