package stat

import (
	"math"
	"slices"
)

// Trend is the result of a Mann–Kendall test of a series in index order.
type Trend struct {
	N int     // points tested
	S float64 // Σ_{i<j} mkSign(x_j − x_i)
	// Inflation is the factor n/n* by which serial correlation widened Var(S) (1: none).
	Inflation float64
	Z         float64 // (S ∓ 1)/√(Var(S)·Inflation), continuity-corrected
	// P is two-sided: exact (MannKendallExactP of S/√Inflation) for up to 60 untied points,
	// else from the normal; 1 when there is no trend to test.
	P     float64
	Exact bool // P is from the exact null distribution
	// Slope is Sen's slope: the median of (x_j − x_i)/(j − i) over all pairs, per index step.
	Slope float64
}

// MannKendall tests xs (in time order, equally spaced) for a monotone trend.
//
// S = Σ_{i<j} mkSign(x_j − x_i) has, without trend and for independent points, mean 0 and
// variance n(n−1)(2n+5)/18 less Σ t(t−1)(2t+5)/18 over groups of t tied values (Kendall
// 1975); Z = (S − sign S)/√Var is nearly normal from n ≈ 8 (and usable from 4).
//
// Windows of a benchmark run are not independent: a queue that is long in one window is
// long in the next. Positive serial correlation makes the plain test reject far more often
// than its α (Hamed & Rao 1998 measure 2–3× at ρ1 = 0.3). Following Yue & Wang (2004), the
// series is detrended by Sen's slope, its lag-1 autocorrelation ρ1 estimated (less its short-series bias), and Var(S)
// multiplied by the AR(1) effective-size factor n/n* = 1 + 2 Σ_{k=1}^{n−1} (1 − k/n) ρ1^k.
// The widening is scaled by the residuals' share of the series' variance (see the code).
// Only positive ρ1 widens the variance (a negative one would narrow it on little evidence);
// ρ1 is capped at 0.9.
func MannKendall(xs []float64) Trend {
	n := len(xs)
	t := Trend{N: n, P: 1, Inflation: 1}
	if n < 3 {
		return t
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			t.S += mkSign(xs[j] - xs[i])
		}
	}
	t.Slope = SenSlope(xs)
	v := float64(n*(n-1)*(2*n+5)) / 18
	sorted := slices.Sorted(slices.Values(xs))
	ties := false
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		k := float64(j - i)
		ties = ties || k > 1
		v -= k * (k - 1) * (2*k + 5) / 18
		i = j
	}
	if v <= 0 || t.S == 0 {
		return t
	}
	res := detrend(xs, t.Slope)
	if r, ok := lag1(res); ok {
		// The correction is for correlated noise; where the residuals about Sen's line are a
		// small share q of the series' variance, the series is mostly trend and their
		// smoothness says nothing about the noise (a queue growing by 70 requests per window,
		// ±5, had residual ρ1 ≈ 0.9 and an inflation of 10 that made it insignificant). The
		// inflation is scaled by q: 1 + (n/n* − 1)·q.
		q := min(1, popVariance(res)/popVariance(xs))
		t.Inflation = 1 + (arInflation(unbias(r, n), n)-1)*q
	}
	t.Z = (t.S - mkSign(t.S)) / math.Sqrt(v*t.Inflation)
	t.P = math.Erfc(math.Abs(t.Z) / math.Sqrt2)
	if !ties && n <= mkExactMaxN {
		// The exact tail of S shrunk by the correlation's widening: the normal is too
		// conservative for the 5–20 windows a run has (see mkexact.go).
		t.P, t.Exact = MannKendallExactP(n, math.Abs(t.S)/math.Sqrt(t.Inflation)), true
	}
	return t
}

// SenSlope is the median of the pairwise slopes (x_j − x_i)/(j − i) (Sen 1968): a trend's
// size per index step that one outlier cannot move. 0 for fewer than two points.
func SenSlope(xs []float64) float64 {
	var s []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			s = append(s, (xs[j]-xs[i])/float64(j-i))
		}
	}
	if len(s) == 0 {
		return 0
	}
	return Median(s)
}

// detrend removes slope·i from each point.
func detrend(xs []float64, slope float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x - slope*float64(i)
	}
	return out
}

// lag1 is the lag-1 sample autocorrelation of xs; false when xs has no variance.
func lag1(xs []float64) (float64, bool) {
	m := Mean(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i > 0 {
			num += (x - m) * (xs[i-1] - m)
		}
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}

// unbias corrects the lag-1 estimate's downward bias on a short series, E[ρ̂] ≈ ρ − (1 + 3ρ)/n
// for AR(1) (Marriott & Pope 1954): without it, 20 windows at ρ = 0.5 still alarm at 12%
// for α = 5%.
func unbias(r float64, n int) float64 {
	if n < 10 { // the correction itself is too noisy below this
		return r
	}
	return (float64(n)*r + 1) / float64(n-3)
}

// arInflation is n/n* for an AR(1) series of lag-1 correlation rho (Yue & Wang 2004, eq. 7
// with ρ_k = ρ1^k), for ρ1 clipped to [0, 0.9].
func arInflation(rho float64, n int) float64 {
	rho = min(max(rho, 0), 0.9)
	f, pk := 1.0, 1.0
	for k := 1; k < n; k++ {
		pk *= rho
		f += 2 * (1 - float64(k)/float64(n)) * pk
	}
	return f
}

func mkSign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// variance is the population variance of xs (0 for fewer than two).
func popVariance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m, v := Mean(xs), 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return v / float64(len(xs))
}
