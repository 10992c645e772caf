package compare

import (
	"math/rand/v2"

	"servebench/stat"
)

// Described is one key metric of one set of runs on its own (a --repeat file): the geometric
// mean of its runs' values with its interval, and the run-to-run relative spread behind it.
type Described struct {
	Metric   Metric
	Estimate Estimate
	// RunSD is the run-to-run standard deviation of the log figure used (≈ the relative
	// spread between runs: 0.02 = 2%); Assumed when the side has one run and RunSD is
	// stat.AssumedRunSD on top of the run's own sampling spread.
	RunSD   float64
	Assumed bool
}

// Describe is each key metric of s with its interval at confidence 1 − opt.Alpha, by the
// method compare uses for each side (stat.OneSide over the two-level run values): what a
// reader of one --repeat file needs to quote a figure with its uncertainty. A metric that is
// undefined or zero in every run is left out.
func Describe(s *Side, opt Options) []Described {
	opt = opt.withDefaults()
	runs := s.Runs()
	blocks := s.blocksByRun(runs, opt.pol)
	ms := KeyMetrics
	if s.opt.SLO.Any() {
		ms = append(append([]Metric{}, KeyMetrics...), Goodput)
	}
	var out []Described
	for i, m := range ms {
		rng := rand.New(rand.NewPCG(uint64(i+1), 0x5eed)) // Compare's seeds: the same figures
		var v []stat.RunValue
		for _, x := range runValues(m, runs, blocks, opt.Rounds, rng, len(runs) == 1, true) {
			if x.V > 0 { // a geometric mean over the runs: a run at 0 cannot enter it
				v = append(v, x.RunValue)
			}
		}
		if len(v) == 0 {
			continue
		}
		c, lo, hi, sd, assumed := stat.OneSide(v, opt.Alpha)
		out = append(out, Described{Metric: m, Estimate: Estimate{c, lo, hi, len(v)}, RunSD: sd, Assumed: assumed})
	}
	return out
}
