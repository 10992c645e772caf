package stat

import (
	"math"
	"sync"
)

// Exact small-sample null distribution of Mann–Kendall's S.
//
// Under the null (no trend, exchangeable points, no ties) every ordering of the n points is
// equally likely, and S = C(n,2) − 2·I where I is the number of inversions (discordant
// pairs) of the ordering. The number of permutations of n with k inversions (the Mahonian
// numbers) follows M(n, k) = Σ_{j=0}^{min(k, n−1)} M(n−1, k−j), so the distribution of I is
// built up one point at a time, as probabilities, in O(n³). The normal approximation is
// too conservative where it matters most: a perfectly monotone series of 7 windows has
// exact two-sided p = 2/7! = 4.0e-4, the normal with continuity correction 2.7e-3 (Kendall
// 1975, table 1), so a 7-window series held to α = 0.001 could never reject.

var mkExact struct {
	sync.Mutex
	dist map[int][]float64 // n → P(I = k), k = 0 … C(n,2)
}

// mkExactMaxN is the largest n whose exact distribution is built; above it the normal
// approximation is within a few per cent of the exact tail.
const mkExactMaxN = 60

// inversionDist is P(I = k) for a random permutation of n.
func inversionDist(n int) []float64 {
	mkExact.Lock()
	defer mkExact.Unlock()
	if d, ok := mkExact.dist[n]; ok {
		return d
	}
	if mkExact.dist == nil {
		mkExact.dist = make(map[int][]float64)
	}
	p := []float64{1}
	for m := 2; m <= n; m++ {
		q := make([]float64, len(p)+m-1)
		// q[k] = (1/m) Σ_{j<m} p[k−j], by a running window sum
		run := 0.0
		for k := range q {
			if k < len(p) {
				run += p[k]
			}
			if k-m >= 0 && k-m < len(p) {
				run -= p[k-m]
			}
			q[k] = run / float64(m)
		}
		p = q
	}
	mkExact.dist[n] = p
	return p
}

// MannKendallExactP is the exact two-sided p of |S| ≥ s for n untied points under the
// null: P(|S| ≥ s). s need not be an integer (a correlation-widened S, see MannKendall).
// It falls back to the normal approximation above mkExactMaxN points.
func MannKendallExactP(n int, s float64) float64 {
	if n < 2 {
		return 1
	}
	s = math.Abs(s)
	if s == 0 {
		return 1
	}
	if n > mkExactMaxN {
		v := float64(n*(n-1)*(2*n+5)) / 18
		return math.Erfc(math.Max(0, s-1) / math.Sqrt(v) / math.Sqrt2)
	}
	d := inversionDist(n)
	pairs := n * (n - 1) / 2
	// S ≥ s ⇔ I ≤ (pairs − s)/2; by symmetry the two-sided p is twice one tail.
	kmax := int(math.Floor((float64(pairs) - s) / 2))
	if kmax < 0 {
		return 0
	}
	tail := 0.0
	for k := 0; k <= kmax && k < len(d); k++ {
		tail += d[k]
	}
	return min(1, 2*tail)
}

// MannKendallMinP is the smallest two-sided p Mann–Kendall can give for n points, 2/n!: a
// series whose least p is not below its α cannot reject, and is "not tested".
func MannKendallMinP(n int) float64 {
	if n < 2 {
		return 1
	}
	lg, _ := math.Lgamma(float64(n + 1))
	return min(1, 2*math.Exp(-lg))
}
