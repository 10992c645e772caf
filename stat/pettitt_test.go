package stat

import (
	"math/rand/v2"
	"testing"
)

func TestPettittDown(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(n int, level float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level * (1 + 0.1*rng.NormFloat64())
		}
		return xs
	}
	// 15 requests 40% slower, then 45 at the warm level: the split is found near 15
	xs := append(noise(15, 1.4), noise(45, 1)...)
	k, p := PettittDown(xs, 5, 30)
	if k < 12 || k > 18 || p > 1e-4 {
		t.Errorf("a step after 15 of 60: k %d, p %.3g", k, p)
	}
	// no change: not significant
	if k, p := PettittDown(noise(60, 1), 5, 30); p < 0.01 {
		t.Errorf("flat noise: k %d, p %.3g", k, p)
	}
	// faster first: the one-sided test does not see it
	if k, p := PettittDown(append(noise(15, 0.6), noise(45, 1)...), 5, 30); p < 0.5 {
		t.Errorf("a faster start: k %d, p %.3g", k, p)
	}
	if k, p := PettittDown([]float64{1}, 1, 1); k != 0 || p != 1 {
		t.Errorf("one value: %d, %g", k, p)
	}
}
