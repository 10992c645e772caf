package stat

import (
	"math"
	"slices"
)

// Mean is the arithmetic mean of xs; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the middle of xs (the mean of the two middle values for an even count); it
// sorts a copy, leaving xs alone. 0 for none: callers that must tell "none" apart check the
// length first.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return MedianSorted(slices.Sorted(slices.Values(xs)))
}

// MedianSorted is Median of an already sorted slice.
func MedianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RelChange is |b − a| relative to scale, made safe: 0 when both are 0, and scale falling
// back to max(|a|, |b|) when it is 0, so a zero median never gives an infinite change.
func RelChange(a, b, scale float64) float64 {
	d := b - a
	if d < 0 {
		d = -d
	}
	if d == 0 {
		return 0
	}
	if scale < 0 {
		scale = -scale
	}
	if scale == 0 {
		scale = max(absf(a), absf(b))
	}
	return d / scale
}

func absf(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// MedianCI is the distribution-free 95% interval of the median of sorted values (Conover,
// Practical Nonparametric Statistics, 3rd ed., §3.2): the order statistics x(k) and
// x(n+1−k), k the largest rank with P(Binomial(n, ½) < k) ≤ 2.5%, so that the interval
// holds the population median with probability at least 95% whatever the distribution.
// ok is false below 6 values, where even [x(1), x(n)] covers less than 95%.
func MedianCI(sorted []float64) (lo, hi float64, ok bool) {
	n := len(sorted)
	if n < 6 {
		return 0, 0, false
	}
	// cdf accumulates P(B ≤ i) while it stays within 2.5%: the rank k = i+1 then has
	// P(B < k) ≤ 2.5%
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	ln2n := float64(n) * math.Ln2
	lgn := lg(float64(n) + 1)
	cdf, k := 0.0, 0
	for i := 0; i < n/2; i++ {
		cdf += math.Exp(lgn - lg(float64(i)+1) - lg(float64(n-i)+1) - ln2n)
		if cdf > 0.025 {
			break
		}
		k = i + 1
	}
	if k == 0 {
		return 0, 0, false
	}
	return sorted[k-1], sorted[n-k], true
}
