package compare

import (
	"math"

	"servebench/stat"
)

// What a comparison could have detected. A "no significant change" from a few noisy runs
// means little, so every row also says its power at the threshold (the chance that these runs
// find a true change of exactly --threshold significant) and the runs per side that would
// reach 80% power there; an inconclusive row says the runs per side that would decide it.
//
// Method: the exact power of the t test that compare runs (stat.TPower, the noncentral t),
// with the per-run spread the comparison used (the larger of the runs' spread and each run's
// own sampling noise, so it is not optimistic when the runs agree by chance). It assumes the
// runs to come will spread as these did; with one run a side the spread is assumed.
// powerTarget is the policy's (policy.go). The runs are counted without a cap: a count in the
// hundreds says the change is too small to decide, which a cap would only hide.

// Power is what a metric's comparison could detect.
type Power struct {
	// AtThreshold is the chance that these runs find a true change of the threshold
	// significant.
	AtThreshold float64
	// RunsNeeded is the runs per side that reach 80% power at the threshold (0: none would,
	// with --threshold 0).
	RunsNeeded int
	// Decide, on an inconclusive row, is the runs per side that would put the interval on one
	// side of the threshold with 80% power, were the true change the one seen (0: none would,
	// the delta lying on the threshold).
	Decide int
}

func power(r stat.Ratio, row Row, opt Options) *Power {
	th := math.Log1p(opt.Threshold)
	p := &Power{AtThreshold: stat.TPower(th, r.SE, opt.Alpha, r.DF),
		RunsNeeded: stat.RunsNeeded(th, r.RunSD, opt.Alpha, opt.pol.powerTarget)}
	if row.Change == Inconclusive {
		// the boundary the interval straddles nearest the delta seen: the distance to it is
		// the effect a decision must resolve
		d := math.Abs(r.LogDiff - th)
		if alt := math.Abs(r.LogDiff - math.Log1p(-opt.Threshold)); opt.Threshold < 1 && alt < d {
			d = alt
		}
		p.Decide = stat.RunsNeeded(d, r.RunSD, opt.Alpha, opt.pol.powerTarget)
	}
	return p
}

// decide is the most runs per side any inconclusive row needs (0 when no count decides one).
func decide(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Change != Inconclusive || r.Power == nil {
			continue
		}
		if r.Power.Decide == 0 {
			return 0
		}
		n = max(n, r.Power.Decide)
	}
	return n
}
