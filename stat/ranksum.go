package stat

import (
	"math"
	"slices"
	"sync"
)

// RankSumGreater is the one-sided p of the Wilcoxon–Mann–Whitney rank-sum test that the
// values of a tend to be larger than those of b: the normal approximation of U with the
// correction for ties and for continuity (Hollander & Wolfe 1999, 4.1). 1 when either
// side is empty.
func RankSumGreater(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	r, tie := midRanks(slices.Concat(a, b))
	var r1 float64
	for _, x := range r[:n1] {
		r1 += x
	}
	n := float64(n1 + n2)
	u := r1 - float64(n1*(n1+1))/2
	mu := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2) / 12 * (n + 1 - tie/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (u - mu - 0.5) / sd
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// RankSumExact is the one-sided p of the Mann–Whitney test that the values of a tend to be
// larger than those of b, from U's exact null distribution (every split of the pooled ranks
// equally likely; Mann & Whitney 1947): U counts the pairs with a's value larger, a tie one
// half, and p = P(U' ≥ U). With ties the no-ties distribution is used, which is slightly
// conservative. 1 when either side is empty; above 60 values in all, RankSumGreater's
// normal approximation.
func RankSumExact(a, b []float64) float64 {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 1
	}
	if m+n > 60 {
		return RankSumGreater(a, b)
	}
	u := 0.0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	total, tail := 0.0, 0.0
	for k, c := range uNull(m, n) {
		total += c
		if float64(k) >= u-1e-9 {
			tail += c
		}
	}
	return tail / total
}

// uNulls holds U's null distribution by sample sizes ([2]int{m, n} → []float64): it depends on
// m and n only, and the steadiness checks ask for the same few sizes thousands of times.
var uNulls sync.Map

// uNull is N(m, n, k) over k = 0…m·n: the orderings of m values of a and n of b with k pairs
// where a's is larger. The caller must not modify it.
func uNull(m, n int) []float64 {
	if d, ok := uNulls.Load([2]int{m, n}); ok {
		return d.([]float64)
	}
	// N(i, j, k) over j: the largest value is b's (it beats no a: N(i, j−1, k)) or a's (it
	// beats all j: N(i−1, j, k−j)). f holds N(·, j−1, ·), g N(·, j, ·); C(m+n, m) orderings
	// in all. Two buffers, swapped: row i of N(·, j, ·) is written for k ≤ i·j, every entry
	// that is nonzero in N(·, j−2, ·), and read beyond i·(j−1) only where it is still zero.
	w := m*n + 1
	fb, gb := make([]float64, (m+1)*w), make([]float64, (m+1)*w)
	row := func(b []float64, i int) []float64 { return b[i*w : (i+1)*w] }
	for i := 0; i <= m; i++ {
		fb[i*w] = 1 // j = 0: no b values, no pairs
	}
	for j := 1; j <= n; j++ {
		for i := 0; i <= m; i++ {
			f, g := row(fb, i), row(gb, i)
			for k := 0; k <= i*j; k++ {
				// the largest of the i+j values is b's (it beats no a) or a's (it beats all j b's)
				v := f[k]
				if i > 0 && k >= j {
					v += gb[(i-1)*w+k-j]
				}
				g[k] = v
			}
		}
		fb, gb = gb, fb
	}
	d, _ := uNulls.LoadOrStore([2]int{m, n}, row(fb, m))
	return d.([]float64)
}
