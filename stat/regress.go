package stat

import "math"

// Adjusted is a series with the part its covariates explain taken out.
type Adjusted struct {
	// Xs is y − Σ_j b_j (x_j − mean x_j): the series at its covariates' means, so its level
	// and relative changes read like y's.
	Xs []float64
	// Used are the indices of the covariates kept (one with no spread, or one that adds
	// nothing to those before it, is dropped); Coef their least-squares coefficients.
	Used []int
	Coef []float64
	// Share is the part of each kept covariate in y's change from the first to the last
	// third of the series: b_j·(median of x_j's last third − median of its first third).
	Share []float64
}

// Adjust regresses y on the covariates by ordinary least squares with an intercept and
// returns y less the fitted effect of the covariates (Adjusted). At most maxCov covariates
// are used, in the order given, so that the residuals keep enough degrees of freedom to be
// tested; a covariate whose coefficient of variation is below 1e-3 (a fixed length), or of
// another length than y (nil: left out by the caller), is skipped. With none left, Xs is y.
func Adjust(y []float64, covs [][]float64, maxCov int) Adjusted {
	return adjust(y, covs, maxCov, false)
}

// AdjustByChanges is Adjust with the coefficients fitted to the series' changes from one
// point to the next (first differences, each about its mean) instead of their levels: a
// covariate then takes part of y's course only as far as its ups and downs track y's, point
// by point. Fitted to levels, a covariate whose random walk happened to rise with a step in
// y takes the step: in the virtual-time matrix a server throttled ×1.5 midway in an open
// loop had its TTFT rise of 187% "explained" by the arrivals its windows drew. A step or a
// trend is one change, or a shift of every change's mean, and moves the fit little; a
// covariate that drives y moves it at every point.
func AdjustByChanges(y []float64, covs [][]float64, maxCov int) Adjusted {
	return adjust(y, covs, maxCov, true)
}

func adjust(y []float64, covs [][]float64, maxCov int, byChanges bool) Adjusted {
	n := len(y)
	out := Adjusted{Xs: append([]float64(nil), y...)}
	var cols [][]float64
	for j, c := range covs {
		if len(cols) >= maxCov {
			break
		}
		if len(c) != n {
			continue
		}
		m := Mean(c)
		if sd := math.Sqrt(popVariance(c)); sd == 0 || sd < 1e-3*math.Abs(m) {
			continue
		}
		cc := make([]float64, n)
		for i, v := range c {
			cc[i] = v - m
		}
		if collinear(cc, cols) {
			continue // a mix's prompt and output means move together: one of them says it all
		}
		cols = append(cols, cc)
		out.Used = append(out.Used, j)
	}
	if len(cols) == 0 || n <= len(cols)+2 {
		out.Used = nil
		return out
	}
	fit := LeastSquares
	if byChanges {
		fit = fitChanges
	}
	b, ok := fit(y, cols)
	if !ok {
		out.Used = nil
		return out
	}
	third := max(1, n/3)
	for j, c := range cols {
		for i := range out.Xs {
			out.Xs[i] -= b[j] * c[i]
		}
		out.Coef = append(out.Coef, b[j])
		out.Share = append(out.Share, b[j]*(Median(c[n-third:])-Median(c[:third])))
	}
	return out
}

// fitChanges is LeastSquares of y's first differences on the columns', each centred.
func fitChanges(y []float64, cols [][]float64) ([]float64, bool) {
	n := len(y)
	if n-1 <= len(cols)+2 {
		return nil, false
	}
	diff := func(xs []float64) []float64 {
		d := make([]float64, n-1)
		for i := range d {
			d[i] = xs[i+1] - xs[i]
		}
		m := Mean(d)
		for i := range d {
			d[i] -= m
		}
		return d
	}
	dc := make([][]float64, len(cols))
	for j, c := range cols {
		dc[j] = diff(c)
	}
	return LeastSquares(diff(y), dc)
}

// LeastSquares is the ordinary least-squares coefficients of y on cols, columns already
// centred (each about its mean, or about its group's means for a fit within groups), so
// that the intercept is ȳ and drops out; false when the columns are (nearly) collinear.
//
// It solves the normal equations G·b = Xᵀy, G = XᵀX, by Gaussian elimination in column
// order without row exchanges: G is symmetric positive semi-definite, so the k-th pivot is
// what is left of column k's sum of squares once the columns before it are taken out, its
// sum of squares times 1 − R²ₖ (R²ₖ of column k on the columns before it). A pivot of at
// most singularTol of the column's own sum of squares (a column all but a combination of
// the others, or one with no spread) makes the fit singular. For two columns this is
// det G > singularTol·G₀₀·G₁₁, the test Cramer's rule needs.
func LeastSquares(y []float64, cols [][]float64) ([]float64, bool) {
	k := len(cols)
	if k == 0 {
		return nil, false
	}
	a := make([][]float64, k)
	for i := range k {
		a[i] = make([]float64, k+1)
		for j := range k {
			a[i][j] = dot(cols[i], cols[j])
		}
		a[i][k] = dot(cols[i], y)
	}
	for c := range k {
		if diag := dot(cols[c], cols[c]); !(a[c][c] > singularTol*diag) {
			return nil, false
		}
		for r := range k {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	b := make([]float64, k)
	for i := range k {
		b[i] = a[i][k] / a[i][i]
	}
	return b, true
}

// singularTol is the least share of a column's sum of squares that the columns before it
// must leave unexplained (1 − R²) for LeastSquares to solve, and for Adjust to keep it.
const singularTol = 1e-9

// collinear reports whether c (centred) is nearly a combination of cols: what is left of it
// after Gram–Schmidt against them holds at most singularTol of its sum of squares.
func collinear(c []float64, cols [][]float64) bool {
	r := append([]float64(nil), c...)
	var basis [][]float64
	for _, b := range cols {
		v := append([]float64(nil), b...)
		for _, q := range basis {
			project(v, q)
		}
		if dot(v, v) > 0 {
			basis = append(basis, v)
		}
	}
	for _, q := range basis {
		project(r, q)
	}
	return dot(r, r) <= singularTol*dot(c, c)
}

// project removes from v its component along q.
func project(v, q []float64) {
	f := dot(v, q) / dot(q, q)
	for i := range v {
		v[i] -= f * q[i]
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
