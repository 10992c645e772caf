package stat

import (
	"cmp"
	"math"
	"slices"
)

// PettittDown is Pettitt's (1979) rank test for one change point, one-sided: that the first
// values of xs are larger than the rest. For each split k, U_k = Σ_{i≤k} Σ_{j>k} sgn(x_i − x_j)
// (the Mann–Whitney statistic of the first k against the rest, centred); the change is at the
// k in [lo, hi] with the largest U_k, and p ≈ exp(−6 U² / (n³ + n²)) is its significance
// with the noise taken from the data's own ranks. Restricting k makes p conservative. k is 0
// and p 1 when xs has fewer than two values or no split in range has U_k > 0.
func PettittDown(xs []float64, lo, hi int) (k int, p float64) {
	n := len(xs)
	lo, hi = max(lo, 1), min(hi, n-1)
	if n < 2 || lo > hi {
		return 0, 1
	}
	r, _ := midRanks(xs)
	best, sum := 0.0, 0.0
	for i := 0; i < hi; i++ {
		sum += r[i]
		// U_k = 2 Σ_{i≤k} r_i − k(n+1)
		if u := 2*sum - float64(i+1)*float64(n+1); i+1 >= lo && u > best {
			best, k = u, i+1
		}
	}
	if k == 0 {
		return 0, 1
	}
	nf := float64(n)
	return k, min(1, math.Exp(-6*best*best/(nf*nf*nf+nf*nf)))
}

// midRanks is each value's rank among xs (1-based, ties given their mean rank), and the tie
// term Σ (t³ − t) over groups of t equal values that rank tests' variances subtract.
func midRanks(xs []float64) (r []float64, ties float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	r = make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for m := i; m < j; m++ {
			r[idx[m]] = float64(i+j+1) / 2
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return r, ties
}
