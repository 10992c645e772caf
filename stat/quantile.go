package stat

import (
	"math"
	"slices"
)

// Quantile is the p-th percentile (p in [0, 100]) of sorted values by linear interpolation
// between closest ranks: Hyndman and Fan's type 7, numpy's default ("linear"), so the p50 of
// [1, 2, 3, 4] is 2.5. NaN for no values. This is servebench's one quantile: every figure
// and every method that takes a percentile of observations computes it here.
func Quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return QuantileAt(len(sorted), p, func(i int) float64 { return sorted[i] })
}

// QuantileAt is Quantile over n > 0 sorted values that at reads by rank, for a distribution
// that is not one slice (several runs' values merged in rank order). It reads at most two
// ranks.
func QuantileAt(n int, p float64, at func(int) float64) float64 {
	if n == 1 {
		return at(0)
	}
	h := p / 100 * float64(n-1) // numpy divides q by 100 first, then multiplies
	if h <= 0 {
		return at(0)
	}
	if h >= float64(n-1) {
		return at(n - 1)
	}
	lo := int(math.Floor(h))
	return lerp(at(lo), at(lo+1), h-float64(lo))
}

// lerp interpolates from a to b by t in [0,1] as numpy's _lerp does (from b backwards when
// t ≥ 0.5), so results match numpy to the last bit, not only to rounding.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

// SelectQuantile is Quantile of unsorted xs, which it reorders: a selection in linear time,
// not a sort, for callers that take a percentile of tens of thousands of values hundreds of
// times (a bootstrap). The result is Quantile's to the last bit. NaN for no values.
func SelectQuantile(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	k := min(max(int(math.Floor(p/100*float64(n-1))), 0), n-1)
	nth(xs, k)
	// QuantileAt reads rank k and, when it interpolates, rank k+1: after nth, the values right
	// of k are all ≥ xs[k], so the smallest of them is rank k+1.
	return QuantileAt(n, p, func(i int) float64 {
		if i <= k {
			return xs[k]
		}
		return slices.Min(xs[k+1:])
	})
}

// nth puts the k-th smallest of xs at xs[k], smaller ones before and larger after, and returns
// it: Floyd and Rivest's SELECT (Communications of the ACM 18(3), 1975, Algorithm 489). Above
// 600 values it first selects, recursively, within a sample around where the k-th should lie,
// so that the pivot it partitions the whole range around falls close to it: about 1.5·n
// comparisons where a middle pivot (Hoare's selection, which this replaced) took 3.4·n and
// more, the bulk of compare's within-run bootstrap of ITL percentiles.
func nth(xs []float64, k int) float64 {
	selectRange(xs, 0, len(xs)-1, k)
	return xs[k]
}

// selectRange is nth within xs[left:right+1].
func selectRange(a []float64, left, right, k int) {
	for right > left {
		if right-left > 600 {
			// a sample of s values around k's place, chosen so that its selection brackets
			// the k-th of the range with high probability
			n := float64(right - left + 1)
			i := float64(k - left + 1)
			z := math.Log(n)
			s := 0.5 * math.Exp(2*z/3)
			sd := 0.5 * math.Sqrt(z*s*(n-s)/n)
			if i < n/2 {
				sd = -sd
			}
			lo := max(left, int(float64(k)-i*s/n+sd))
			hi := min(right, int(float64(k)+(n-i)*s/n+sd))
			selectRange(a, lo, hi, k)
		}
		// partition [left, right] around t = a[k], with a[left] ≤ t and a[right] ≥ t as
		// sentinels for the scans
		t := a[k]
		i, j := left, right
		a[left], a[k] = a[k], a[left]
		if a[right] > t {
			a[right], a[left] = a[left], a[right]
		}
		for i < j {
			a[i], a[j] = a[j], a[i]
			i++
			j--
			for a[i] < t {
				i++
			}
			for a[j] > t {
				j--
			}
		}
		if a[left] == t {
			a[left], a[j] = a[j], a[left]
		} else {
			j++
			a[j], a[right] = a[right], a[j]
		}
		// t is now at j, everything before it ≤ t and after it ≥ t
		if j <= k {
			left = j + 1
		}
		if k <= j {
			right = j - 1
		}
	}
}
