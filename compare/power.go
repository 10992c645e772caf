package compare

import (
	"fmt"
	"math"
	"slices"

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
	// RunSD is the run-to-run spread (log scale) the comparison used: the larger of the runs'
	// spread and each run's own sampling noise. NoChangeRuns, where it was measured (two runs
	// a side or more), is the runs per side at which two servers that do not differ would
	// show it, the interval within ±threshold, with 80% power at that spread (0: none would,
	// with --threshold 0): what an inconclusive verdict of an unchanged server needs.
	RunSD        float64
	NoChangeRuns int
}

func power(r stat.Ratio, row Row, opt Options) *Power {
	th := math.Log1p(opt.Threshold)
	p := &Power{AtThreshold: stat.TPower(th, r.SE, opt.Alpha, r.DF),
		RunsNeeded: stat.RunsNeeded(th, r.RunSD, opt.Alpha, opt.pol.powerTarget), RunSD: r.RunSD}
	if !r.Assumed {
		p.NoChangeRuns = stat.EquivRuns(th, r.RunSD, opt.Alpha, opt.pol.powerTarget)
	}
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

// Spread is the run-to-run spread behind an inconclusive verdict: of its inconclusive rows
// whose spread was measured, the one that spread most, and the runs per side that would show
// no change within the threshold at that spread were nothing changed (Power.NoChangeRuns).
// It tells a reader whether more runs can decide the verdict or only a quieter machine can.
type Spread struct {
	Metric       string
	RunSD        float64 // log scale
	NoChangeRuns int     // 0: none would (--threshold 0)
}

// spread is the inconclusive row with the largest measured spread; nil when none has one.
func spread(rows []Row) *Spread {
	return WidestSpread(slices.DeleteFunc(slices.Clone(rows), func(r Row) bool { return r.Change != Inconclusive }))
}

// WidestSpread is, of rows whose run-to-run spread was measured (two runs a side or more; a
// median or throughput, not a tail), the one that spread most; nil when none was measured.
func WidestSpread(rows []Row) *Spread {
	var out *Spread
	for _, r := range rows {
		if r.Power == nil || r.Assumed || r.Metric.Tail {
			continue
		}
		if out == nil || r.Power.RunSD > out.RunSD {
			out = &Spread{Metric: r.Metric.Name, RunSD: r.Power.RunSD, NoChangeRuns: r.Power.NoChangeRuns}
		}
	}
	return out
}

// Percent is the spread as a share of the figure, in per cent: one standard deviation up on
// the log scale.
func (s *Spread) Percent() float64 { return 100 * math.Expm1(s.RunSD) }

// Runs is "about 1690 runs per side", or "no number of runs per side" where none would
// (--threshold 0).
func (s *Spread) Runs() string {
	if s.NoChangeRuns == 0 {
		return "no number of runs per side"
	}
	return fmt.Sprintf("about %d runs per side", s.NoChangeRuns)
}

// text is "; TTFT p50 spreads 57.0% from run to run: no change within the threshold shows at
// about 1690 runs per side" for a trace, or "" for a nil Spread.
func (s *Spread) text() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("; %s spreads %.1f%% from run to run: no change within the threshold shows at %s", s.Metric, s.Percent(), s.Runs())
}
