package stat

import (
	"math"
	"slices"
)

// RankSumGreater is the one-sided p of the Wilcoxon–Mann–Whitney rank-sum test that the
// values of a tend to be larger than those of b: the normal approximation of U with the
// correction for ties and for continuity (Hollander & Wolfe 1999, 4.1). 1 when either
// side is empty.
func RankSumGreater(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type v struct {
		x     float64
		first bool
	}
	all := make([]v, 0, n1+n2)
	for _, x := range a {
		all = append(all, v{x, true})
	}
	for _, x := range b {
		all = append(all, v{x, false})
	}
	slices.SortFunc(all, func(p, q v) int {
		switch {
		case p.x < q.x:
			return -1
		case p.x > q.x:
			return 1
		}
		return 0
	})
	n := float64(n1 + n2)
	var r1, tie float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		t := float64(j - i)
		tie += t*t*t - t
		i = j
	}
	u := r1 - float64(n1*(n1+1))/2
	mu := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2) / 12 * (n + 1 - tie/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (u - mu - 0.5) / sd
	return 0.5 * math.Erfc(z/math.Sqrt2)
}
