package compare

import (
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/perf/benchmath"
)

// What a comparison could have detected. A "no significant change" from three noisy runs
// means little; so every metric compared between runs also says the smallest change the test
// would detect with the runs at hand, and how many runs per side would detect a change of
// --threshold.
//
// Method: a simulation of the test itself. The run-to-run spread is taken from both sides'
// run-level values as relative deviations from their side's median. A simulated comparison
// draws nb base and nc candidate values from those deviations (with replacement), multiplies
// the candidate's by 1+δ, and runs the same Mann–Whitney U test at the same α; the power at
// δ is the share of powerSims simulated comparisons that find a significant difference. The
// detectable change is the smallest δ on a geometric grid (0.25% to 200%, steps of 25%)
// whose power reaches powerTarget; the runs needed, the smallest n per side whose power at
// the threshold reaches it. Everything is seeded, so the figures repeat exactly.
const (
	powerTarget = 0.8
	powerSims   = 200
	maxRuns     = 40 // runs needed beyond this are reported as "more than 40"
)

// Power is what a metric's comparison could detect.
type Power struct {
	// Detectable is the smallest relative change (0.05 = 5%) detected with 80% power by the
	// runs at hand; +Inf when no change up to 200% would be, as with 3 runs per side, where the
	// U test's smallest possible p is 0.1.
	Detectable float64
	// RunsNeeded is the runs per side that detect a change of the threshold with 80% power
	// (0: more than 40).
	RunsNeeded int
}

// power simulates the U test on base and candidate run-level values bv and cv.
func power(bv, cv []float64, alpha, threshold float64, seed uint64) *Power {
	dev := append(deviations(bv), deviations(cv)...)
	if len(dev) < 4 {
		return nil
	}
	// every evaluation draws the same random numbers (common random numbers), so the power is
	// monotone in the change and the runs, as the binary searches below need
	pw := func(nb, nc int, delta float64) float64 {
		rng := rand.New(rand.NewPCG(seed, 7))
		if minP(nb, nc) > alpha {
			return 0 // the test cannot reach α with so few runs, whatever the change
		}
		th := &benchmath.Thresholds{CompareAlpha: alpha}
		hits := 0
		b, c := make([]float64, nb), make([]float64, nc)
		for range powerSims {
			for i := range b {
				b[i] = 1 + dev[rng.IntN(len(dev))]
			}
			for i := range c {
				c[i] = (1 + dev[rng.IntN(len(dev))]) * (1 + delta)
			}
			cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(b), th), benchmath.NewSample(slices.Clone(c), th))
			if cmp.P <= alpha {
				hits++
			}
		}
		return float64(hits) / powerSims
	}
	var grid []float64
	for d := 0.0025; d <= 2; d *= 1.25 {
		grid = append(grid, d)
	}
	p := &Power{Detectable: math.Inf(1)}
	// power grows with the change and with the runs: a binary search finds the first grid
	// point (and the first n) that reaches the target with a handful of simulations
	if i := firstReaching(len(grid), func(i int) bool { return pw(len(bv), len(cv), grid[i]) >= powerTarget }); i < len(grid) {
		p.Detectable = grid[i]
	}
	if n := 2 + firstReaching(maxRuns-1, func(i int) bool { return pw(2+i, 2+i, threshold) >= powerTarget }); n <= maxRuns {
		p.RunsNeeded = n
	}
	return p
}

// firstReaching is the smallest i in [0, n) for which ok holds, ok being monotone; n when none.
func firstReaching(n int, ok func(int) bool) int {
	lo, hi := 0, n
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

// deviations are xs relative to their median: x/median − 1.
func deviations(xs []float64) []float64 {
	s := slices.Sorted(slices.Values(xs))
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if med == 0 {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x/med - 1
	}
	return out
}

// minP is the smallest two-sided p the U test can give with nb and nc values:
// 2 / C(nb+nc, nb), when one side lies wholly above the other.
func minP(nb, nc int) float64 {
	c := 1.0
	for i := 1; i <= nb; i++ {
		c = c * float64(nc+i) / float64(i)
	}
	return 2 / c
}
