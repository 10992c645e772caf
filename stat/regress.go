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
// tested; a covariate whose coefficient of variation is below 1e-3 (a fixed length) is left
// out. With none left, Xs is y.
func Adjust(y []float64, covs [][]float64, maxCov int) Adjusted {
	n := len(y)
	out := Adjusted{Xs: append([]float64(nil), y...)}
	var cols [][]float64
	for j, c := range covs {
		if len(cols) >= maxCov || len(c) != n {
			break
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
	b, ok := leastSquares(y, cols)
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

// leastSquares solves the normal equations for centred columns (the intercept is then
// ȳ and drops out) by Gaussian elimination with partial pivoting; false when they are
// singular (one column a combination of others).
func leastSquares(y []float64, cols [][]float64) ([]float64, bool) {
	k := len(cols)
	a := make([][]float64, k)
	for i := range k {
		a[i] = make([]float64, k+1)
		for j := range k {
			for t := range y {
				a[i][j] += cols[i][t] * cols[j][t]
			}
		}
		for t := range y {
			a[i][k] += cols[i][t] * y[t]
		}
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12*math.Abs(a[c][c]+1e-300) || a[p][c] == 0 {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
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

// collinear reports whether c (centred) is, to 1e-6 of its norm, a combination of cols:
// what is left of it after Gram–Schmidt against them.
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
	return dot(r, r) <= 1e-12*dot(c, c)
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
