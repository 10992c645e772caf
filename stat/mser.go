package stat

// MSER is the Marginal Standard Error Rule (White 1997) for the end of an initial transient:
// the truncation d that minimises
//
//	MSER(d) = Σ_{i>d} (y_i − ȳ_d)² / (n − d)²
//
// over the series y of batch means of `batch` consecutive observations (MSER-5 is batch = 5,
// White, Cobb & Spratt 2000). It returns the number of original observations to drop and
// ok = false when the minimum lies at half the batches, the furthest truncation the rule
// considers, which White et al. read as "the series has not reached a steady state".
func MSER(xs []float64, batch int) (drop int, ok bool) {
	batch = max(batch, 1)
	nb := len(xs) / batch
	if nb < 2 {
		return 0, false
	}
	y := make([]float64, nb)
	for i := range nb {
		y[i] = Mean(xs[i*batch : (i+1)*batch])
	}
	best, bestD := 0.0, -1
	// suffix sums let each d cost O(1): Σ y and Σ y² over y[d:]
	var s, s2 float64
	sum, sum2 := make([]float64, nb+1), make([]float64, nb+1)
	for i := nb - 1; i >= 0; i-- {
		s += y[i]
		s2 += y[i] * y[i]
		sum[i], sum2[i] = s, s2
	}
	for d := 0; d <= nb/2; d++ {
		m := float64(nb - d)
		ss := sum2[d] - sum[d]*sum[d]/m // Σ (y − ȳ)², never below 0 in exact arithmetic
		v := max(ss, 0) / (m * m)
		if bestD < 0 || v < best {
			best, bestD = v, d
		}
	}
	return bestD * batch, bestD < nb/2
}
