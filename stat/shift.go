package stat

import (
	"math"
	"slices"
)

// Shift is a test for one step change in a series' level at an unknown point, the shape a
// trend test is weakest against: throttling that begins part-way, a throughput step.
// Mann–Kendall counts only the pairs that straddle the step, and 16 windows with a step
// after the fourth gave p = 0.03 for a 2× slow-down.
type Shift struct {
	At int     // first index of the second segment
	D  float64 // median(second) − median(first)
	Z  float64
	P  float64 // two-sided, Bonferroni over the splits tried; 1 when untestable
	// Separation is the least exact one-sided rank-sum p (RankSumExact), over the splits
	// tried, that the second segment lies beyond the first in D's direction: how cleanly
	// some split separates the series in rank order, whatever the noise estimate. The split
	// with the largest z need not be it: medians barely move when the split slides into
	// the step's far side. 1 when untestable.
	Separation float64
}

// ShiftTest finds the split (each side at least max(3, n/5) points) with the largest standardised
// difference of segment medians and tests it.
//
// The noise is the median absolute successive difference, σ̂ = median|x_i − x_{i−1}|/0.954
// (for normal noise median|Δ| = 0.6745·√2·σ), which one step moves little as it is one
// difference of n − 1; a segment median's standard error is 1.2533·σ/√m (the median's
// asymptotic efficiency). Serial correlation ρ, estimated from the residuals about the two
// segment medians (less its short-series bias, clipped to [0, 0.9]), widens both: the level
// noise is σ̂/√(1 − ρ) and a mean of m correlated points has (1 + ρ)/(1 − ρ) times the
// variance; and the noise is at least the residuals' interquartile range/1.349, which
// catches spiky noise whose successive differences are mostly small. p is two-sided from the normal, times the number of splits tried (Bonferroni).
// σ̂ is floored at 0.1% of the series' median so that a noiseless series cannot make any
// difference infinitely significant.
func ShiftTest(xs []float64) Shift {
	n := len(xs)
	sh := Shift{P: 1, Separation: 1}
	if n < 6 {
		return sh
	}
	diffs := make([]float64, n-1)
	for i := 1; i < n; i++ {
		diffs[i-1] = math.Abs(xs[i] - xs[i-1])
	}
	sigma := max(Median(diffs)/0.954, 1e-3*math.Abs(Median(xs)))
	if sigma == 0 {
		return sh
	}
	best := 0.0
	seg := max(3, n/5) // short segments: a median of 3 is the least that one spike cannot move
	for k := seg; k <= n-seg; k++ {
		d := Median(xs[k:]) - Median(xs[:k])
		z := d / (1.2533 * sigma * math.Sqrt(1/float64(k)+1/float64(n-k)))
		if math.Abs(z) > math.Abs(best) {
			best, sh.At, sh.D = z, k, d
		}
	}
	if sh.At == 0 {
		return sh
	}
	left, right := Median(xs[:sh.At]), Median(xs[sh.At:])
	res := slices.Clone(xs)
	for i := range res {
		if i < sh.At {
			res[i] -= left
		} else {
			res[i] -= right
		}
	}
	rho := 0.0
	if r, ok := lag1(res); ok {
		rho = min(max(unbias(r, n), 0), 0.9)
	}
	// spiky noise (a few slow windows) leaves successive differences small but moves the
	// median of a short segment: the residuals' spread bounds the noise from below
	sr := shiftSorted(res)
	iqr := shiftQuantile(sr, 0.75) - shiftQuantile(sr, 0.25)
	scale := max(1, iqr/1.349/(sigma/math.Sqrt(1-rho)))
	sh.Z = best * math.Sqrt(1-rho) / math.Sqrt((1+rho)/(1-rho)) / scale
	sh.P = min(1, float64(n-2*seg+1)*math.Erfc(math.Abs(sh.Z)/math.Sqrt2))
	for k := seg; k <= n-seg; k++ {
		p := RankSumExact(xs[k:], xs[:k])
		if sh.D < 0 {
			p = RankSumExact(xs[:k], xs[k:])
		}
		sh.Separation = min(sh.Separation, p)
	}
	return sh
}

func shiftSorted(xs []float64) []float64 { return slices.Sorted(slices.Values(xs)) }

// shiftQuantile is Quantile of sorted s with q in [0, 1]; 0 for no values.
func shiftQuantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return Quantile(s, q*100)
}
