package stat

import "math"

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson is the Wilson score interval of a proportion, k successes in n trials, at the normal
// quantile z (Z95 for 95%): E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22 (1927). Unlike the Wald interval p ± z·√(p(1−p)/n) it stays
// inside [0, 1] and keeps close to its nominal coverage at small n and near 0 or 1 (Brown, Cai
// and DasGupta, "Interval estimation for a binomial proportion", Statistical Science 16, 2001).
// ok is false when n < 1.
func Wilson(k, n int, z float64) (lo, hi float64, ok bool) {
	if n < 1 || k < 0 || k > n {
		return 0, 0, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	mid := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(0, mid-half), min(1, mid+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi, true
}

// NewcombeDiff is the interval of the difference of two proportions, k2/n2 − k1/n1, by
// Newcombe's hybrid score method (method 10 of R. G. Newcombe, "Interval estimation for the
// difference between independent proportions: comparison of eleven methods", Statistics in
// Medicine 17, 1998), built from each side's Wilson interval at z. ok is false when a side
// has no trial.
func NewcombeDiff(k1, n1, k2, n2 int, z float64) (d, lo, hi float64, ok bool) {
	l1, u1, ok1 := Wilson(k1, n1, z)
	l2, u2, ok2 := Wilson(k2, n2, z)
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	d = p2 - p1
	lo = d - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = d + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return d, lo, hi, true
}
