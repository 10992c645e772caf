package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Wilson's interval against published values: Newcombe (1998), Table I's 81 of 263 is
// 0.2553 to 0.3662; Brown, Cai and DasGupta's edge cases (0 and n successes).
func TestWilsonKnownValues(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
		{29, 29, 0.8830, 1},
	} {
		lo, hi, ok := Wilson(tc.k, tc.n, Z95)
		if !ok || math.Abs(lo-tc.lo) > 6e-5 || math.Abs(hi-tc.hi) > 6e-5 {
			t.Errorf("Wilson(%d, %d) = %.4f–%.4f, want %.4f–%.4f", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if _, _, ok := Wilson(0, 0, Z95); ok {
		t.Error("Wilson of no trial must be undefined")
	}
}

// Newcombe's worked example (1998, Table II, method 10): 56/70 − 48/80 = 0.2000, interval
// 0.0524 to 0.3339.
func TestNewcombeDiffKnownValue(t *testing.T) {
	d, lo, hi, ok := NewcombeDiff(48, 80, 56, 70, Z95)
	if !ok || math.Abs(d-0.2) > 1e-9 || math.Abs(lo-0.0524) > 6e-5 || math.Abs(hi-0.3339) > 6e-5 {
		t.Errorf("NewcombeDiff = %.4f [%.4f, %.4f], want 0.2000 [0.0524, 0.3339]", d, lo, hi)
	}
}

// Coverage by simulation: over 4,000 binomial draws at each (p, n) the 95% Wilson interval
// holds p 93-97% of the time, and the difference interval of two equal shares excludes 0
// (a false "changed") at most 6% of the time, about half of that on each side.
func TestWilsonCoverage(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine, many times the time under it")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	draw := func(p float64, n int) int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	const trials = 4000
	for _, tc := range []struct {
		p float64
		n int
	}{{0.8, 100}, {0.8, 500}, {0.1, 500}, {0.5, 50}} {
		in, alarms := 0, 0
		for range trials {
			k := draw(tc.p, tc.n)
			if lo, hi, _ := Wilson(k, tc.n, Z95); lo <= tc.p && tc.p <= hi {
				in++
			}
			if _, lo, hi, _ := NewcombeDiff(k, tc.n, draw(tc.p, tc.n), tc.n, Z95); lo > 0 || hi < 0 {
				alarms++
			}
		}
		cov, fa := float64(in)/trials, float64(alarms)/trials
		t.Logf("p %.2f n %d: coverage %.3f, A/A difference excluding 0 %.3f", tc.p, tc.n, cov, fa)
		if cov < 0.93 || cov > 0.975 || fa > 0.06 {
			t.Errorf("p %.2f n %d: coverage %.3f (want 0.93-0.975), false alarms %.3f (want ≤ 0.06)", tc.p, tc.n, cov, fa)
		}
	}
}
