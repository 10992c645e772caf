package stat

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/mathx"
)

// Early stopping for a latency percentile constraint, as MLPerf Inference's LoadGen applies it
// (loadgen/early_stopping.cc; the rule is in MLPerf's inference policies): a run of n queries
// of which t exceeded the latency limit shows, with confidence c, that the p-th percentile is
// within the limit when n ≥ h + t, h the smallest count with
//
//	I(p − d; h, t + 1) ≤ 1 − c
//
// where I is the regularized incomplete beta function, p the percentile as a fraction (0.99),
// d a tolerance (0 in MLPerf's LLM rules) and c the confidence (0.99). I(p; h, t+1) is the
// chance that, were exactly a share 1 − p of queries over the limit, at most t of h + t
// would be: the binomial tail P(Bin(h + t, 1 − p) ≤ t).
//
// At p = 0.99 the required n is 459, 662, 838, 1,307, 2,010, 3,304 and 6,898 for t = 0, 1,
// 2, 5, 10, 20 and 50 (earlystop_test.go checks these against MLPerf's figures).

// EarlyStopConfidence is MLPerf's confidence for early stopping (c = 0.99).
const EarlyStopConfidence = 0.99

// maxEarlyStop bounds the search: a rule that needs more queries than this is reported as
// needing this many (more than any run would send).
const maxEarlyStop = 1 << 30

// BetaInc is the regularized incomplete beta function I_x(a, b) (go-moremath's mathx.BetaInc).
// Where its continued fraction does not converge (a or b in the many thousands) and a and b
// are integers, it is computed from the identity I_x(a, b) = P(Bin(a + b − 1, x) ≥ a) instead.
func BetaInc(x, a, b float64) (v float64) {
	defer func() {
		if recover() != nil {
			v = binomTailBeta(x, a, b)
		}
	}()
	return mathx.BetaInc(x, a, b)
}

// binomTailBeta is I_x(a, b) for integer a, b as 1 − P(Bin(a+b−1, x) ≤ a−1), summed in log
// space from the smaller side so that no term underflows before it matters.
func binomTailBeta(x, a, b float64) float64 {
	n, k := int(a+b-1), int(a)
	// P(Bin(n, x) ≥ k) = P(Bin(n, 1−x) ≤ n−k): sum the n−k+1 = b terms of the lower tail
	q := 1 - x
	sum := 0.0
	for j := 0; j <= n-k; j++ {
		sum += math.Exp(lchoose(n, j) + float64(j)*math.Log(q) + float64(n-j)*math.Log(x))
	}
	return math.Min(1, sum)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// EarlyStopMin is the fewest queries a run with t over the limit needs to show, with
// confidence c, that its p-th percentile (a fraction, 0.99) meets the limit, with tolerance d:
// h + t for the smallest h with I(p − d; h, t + 1) ≤ 1 − c. I falls as h grows, so h is found
// by doubling then bisection.
func EarlyStopMin(t int, p, d, c float64) int {
	x := p - d
	if t < 0 || x <= 0 || x >= 1 || c <= 0 || c >= 1 {
		return maxEarlyStop
	}
	ok := func(h int) bool { return BetaInc(x, float64(h), float64(t+1)) <= 1-c }
	hi := 1
	for !ok(hi) {
		if hi >= maxEarlyStop/2 {
			return maxEarlyStop
		}
		hi *= 2
	}
	lo := hi/2 + 1
	if hi == 1 {
		lo = 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi + t
}

// NearestRank is the p-th percentile (0 < p ≤ 100) of xs by the nearest-rank rule MLPerf's
// LoadGen uses: the value at rank ⌈p/100 · n⌉ of the sorted values (no interpolation, so it is
// always an observed value). ok is false for an empty set. xs is not modified.
func NearestRank(xs []float64, p float64) (float64, bool) {
	if len(xs) == 0 || p <= 0 || p > 100 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(xs))
	r := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(r, 1), len(s))-1], true
}
