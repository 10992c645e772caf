package stat

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/aclements/go-moremath/stats"
)

// Student's t and the power of a two-sided t test, for compare's intervals and its "runs
// needed" figures.

// TCDF is the CDF of Student's t with df degrees of freedom at x; df ≤ 0 or +Inf means the
// standard normal.
func TCDF(x, df float64) float64 {
	if df <= 0 || math.IsInf(df, 1) {
		return stats.StdNormal.CDF(x)
	}
	return stats.TDist{V: df}.CDF(x)
}

// TQuantile is the q-quantile (0 < q < 1) of Student's t with df degrees of freedom (df ≤ 0 or
// +Inf: the standard normal), by bisection of TCDF: t quantiles are needed a handful of times
// per comparison, so a closed-form approximation is not worth its error.
func TQuantile(q, df float64) float64 {
	if df <= 0 || math.IsInf(df, 1) {
		return stats.StdNormal.InvCDF(q)
	}
	key := [2]float64{q, df}
	if v, ok := tQuantiles.Load(key); ok {
		return v.(float64)
	}
	v := tQuantile(q, df)
	if cacheRoom(&tQuantileN) {
		tQuantiles.Store(key, v)
	}
	return v
}

// tQuantiles holds TQuantile by (q, df): a comparison asks for the same few (a level, a
// count of runs) at every row and in every step of RunsNeeded's bisection, and each answer
// costs about 64 evaluations of the t CDF. A value is a pure function of its key, so the
// cache changes no result.
var (
	tQuantiles sync.Map
	tQuantileN atomic.Int64
)

// maxCached bounds each of this file's caches: the keys asked for in practice are a few
// levels by a few counts of runs; fractional degrees of freedom could make them many.
const maxCached = 4096

// cacheRoom reports whether a cache counted by n may take one more entry, and counts it.
func cacheRoom(n *atomic.Int64) bool { return n.Add(1) <= maxCached }

// tQuantile is TQuantile's bisection of TCDF.
func tQuantile(q, df float64) float64 {
	lo, hi := -1.0, 1.0
	for TCDF(lo, df) > q {
		lo *= 2
	}
	for TCDF(hi, df) < q {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TPower is the chance that a two-sided t test at level alpha with df degrees of freedom
// rejects "no difference" when the true difference is effect and the estimate's standard
// error is se — the exact power under normal errors (the noncentral t):
//
//	P(|Z + λ| > t* · S),  λ = effect/se,  S = √(χ²_df / df),  t* = t_{1−α/2, df}
//
// integrated over S numerically (the normal approximation Φ(λ − t*) overstates the power at
// few degrees of freedom: 80% by it is about 75% at 5 runs per side). df ≤ 0 or +Inf: S = 1.
func TPower(effect, se, alpha, df float64) float64 {
	if se <= 0 {
		if effect != 0 {
			return 1
		}
		return alpha
	}
	lam := math.Abs(effect) / se
	tc := TQuantile(1-alpha/2, df)
	rej := func(s float64) float64 {
		return stats.StdNormal.CDF(lam-tc*s) + stats.StdNormal.CDF(-lam-tc*s)
	}
	return overS(rej, df)
}

// overS is the mean of f(S) over S = √(χ²_df / df), integrated on TPower's grid (capped at
// 1); f(1) where df ≤ 0 or +Inf (S = 1) or the grid holds no mass.
func overS(f func(float64) float64, df float64) float64 {
	if df <= 0 || math.IsInf(df, 1) {
		return f(1)
	}
	g := sGrid(df)
	var p float64
	for i, s := range g.s {
		p += g.f[i] * f(s) * g.h
	}
	if g.mass <= 0 {
		return f(1)
	}
	return math.Min(1, p/g.mass)
}

// grid is the density of S = √(χ²_df/df) on TPower's grid: the midpoints s, the density f at
// each, the step h and the total mass Σ f·h.
type grid struct {
	s, f    []float64
	h, mass float64
}

// sGrids holds the grid by degrees of freedom (float64 → *grid): it depends on df alone, and
// RunsNeeded asks for the same few df at every row, each grid costing two logarithms and an
// exponential a step. TPower sums over it in the order it did without the cache, so its
// results are the same to the last bit.
var (
	sGrids sync.Map
	sGridN atomic.Int64
)

func sGrid(df float64) *grid {
	if g, ok := sGrids.Load(df); ok {
		return g.(*grid)
	}
	// density of S = √(χ²_df/df): 2·df·s·f_χ²(df·s²), on a grid wide enough for df = 1
	lg, _ := math.Lgamma(df / 2)
	logc := math.Log(2*df) - df/2*math.Ln2 - lg
	// S has mean ≈ 1 and spread ≈ 1/√(2·df): 400 steps over ±10 spreads (from 0 at small df)
	const steps = 400
	w := 10 / math.Sqrt(2*df)
	lo, hi := math.Max(0, 1-w), 1+w+1/df
	g := &grid{s: make([]float64, steps), f: make([]float64, steps), h: (hi - lo) / steps}
	for i := range steps {
		s := lo + (float64(i)+0.5)*g.h
		v := df * s * s
		g.s[i], g.f[i] = s, math.Exp(logc+math.Log(s)+(df/2-1)*math.Log(v)-v/2)
		g.mass += g.f[i] * g.h
	}
	if cacheRoom(&sGridN) {
		sGrids.Store(df, g)
	}
	return g
}

// RunsNeeded is the fewest runs per side (2 or more) at which a two-sample t test at level
// alpha, on runs whose values have standard deviation sd, detects a true difference effect
// with the given power: se = sd·√(2/n), df = 2n − 2. It has no cap: it returns 0 only when no
// count does (effect 0, or more runs than an int32 holds). The power is the exact one
// (TPower), so the figure is not optimistic for the normal model it assumes.
func RunsNeeded(effect, sd, alpha, power float64) int {
	ok := func(n int) bool { return TPower(effect, sd*math.Sqrt(2/float64(n)), alpha, float64(2*n-2)) >= power }
	if effect == 0 || math.IsNaN(effect) {
		return 0
	}
	return fewestRuns(ok)
}

// fewestRuns is the fewest runs per side, 2 or more, for which ok holds, ok growing with n
// (the standard error shrinks and t* falls): doubled, then bisected; 0 when more runs than
// an int32 holds would be needed.
func fewestRuns(ok func(int) bool) int {
	hi := 2
	for !ok(hi) {
		if hi > math.MaxInt32/2 {
			return 0
		}
		hi *= 2
	}
	lo := max(2, hi/2)
	for lo < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// RelHalfWidth is the half-width of the 1 − alpha interval of the geometric mean of values
// (all > 0), as a share of it: exp(t_{1−α/2, k−1} · s/√k) − 1 with s the standard deviation
// of log values and k their count — how well k runs pin a figure down. +Inf for fewer than 2
// values or any value ≤ 0.
func RelHalfWidth(values []float64, alpha float64) float64 {
	k := len(values)
	if k < 2 {
		return math.Inf(1)
	}
	var sum, ss float64
	for _, v := range values {
		if !(v > 0) {
			return math.Inf(1)
		}
		sum += math.Log(v)
	}
	m := sum / float64(k)
	for _, v := range values {
		ss += (math.Log(v) - m) * (math.Log(v) - m)
	}
	sd := math.Sqrt(ss / float64(k-1))
	return math.Expm1(TQuantile(1-alpha/2, float64(k-1)) * sd / math.Sqrt(float64(k)))
}

// EquivPower is the chance that the two one-sided tests at level alpha each (the 1 − 2·alpha
// interval inside ±margin) show equivalence when the true difference is 0 and the estimate's
// standard error is se, under normal errors with df degrees of freedom:
//
//	P(|Z| < (margin − t* · se · S) / se),  S = √(χ²_df / df),  t* = t_{1−α, df}
//
// integrated over S as TPower is. df ≤ 0 or +Inf: S = 1.
func EquivPower(margin, se, alpha, df float64) float64 {
	if se <= 0 {
		if margin > 0 {
			return 1
		}
		return 0
	}
	tc := TQuantile(1-alpha, df)
	pass := func(s float64) float64 {
		if h := (margin - tc*se*s) / se; h > 0 {
			return 2*stats.StdNormal.CDF(h) - 1
		}
		return 0
	}
	return overS(pass, df)
}

// EquivRuns is the fewest runs per side (2 or more) at which runs whose values have standard
// deviation sd, of two servers that do not differ, show equivalence within ±margin with the
// given power (EquivPower; se = sd·√(2/n), df = 2n − 2): what a verdict that could not tell
// "no change" needs. Like RunsNeeded it has no cap: it returns 0 only when no count does
// (margin 0, or more runs than an int32 holds).
func EquivRuns(margin, sd, alpha, power float64) int {
	ok := func(n int) bool {
		return EquivPower(margin, sd*math.Sqrt(2/float64(n)), alpha, float64(2*n-2)) >= power
	}
	if !(margin > 0) {
		return 0
	}
	return fewestRuns(ok)
}
