package metrics

import (
	"fmt"
	"math"
	"slices"

	"servebench/stat"
)

// What each window of the steady check received — the load and lengths the client's dice
// gave it — and the adjustment of a series for them (see check).

// adjustSigned is stat.Adjust over the series' covariates, leaving out, one at a time and
// refitting, any whose effect has the wrong sign (covSign). An open loop's series are fitted
// to their changes (stat.AdjustByChanges): their covariates (the arrivals and lengths the
// windows drew) wander at random about constant means, and fitted to levels one whose
// wandering happened to rise with a real change took it (a throttle's TTFT rise in the
// virtual-time matrix: docs/metrics.md "Steady state"); there is no check beside it, as the equal-contention test is
// beside a closed loop's. A closed loop's phase covariate moves in one step when the users
// merge, which only a fit to levels can read, and its explanation needs TTFT flat at equal
// contention as well (flatAtEqual).
func adjustSigned(sr series) stat.Adjusted {
	covs := slices.Clone(sr.covs)
	for {
		fit := stat.Adjust
		if sr.byChanges {
			fit = stat.AdjustByChanges
		}
		adj := fit(sr.xs, covs, maxCovariates(len(sr.xs)))
		bad := -1
		for i, j := range adj.Used {
			if j < len(sr.covSign) && float64(sr.covSign[j])*adj.Coef[i] < 0 {
				bad = j
				break
			}
		}
		if bad < 0 {
			return adj
		}
		covs[bad] = nil // Adjust skips a covariate of the wrong length
	}
}

// explains reports whether the covariates' parts of the change between the first and last
// thirds of xs add up to at least half of it, in its direction.
func explains(xs []float64, adj stat.Adjusted) bool {
	return explainedShare(xs, adj) >= explainShare
}

// explainedShare is the covariates' parts of the change between the first and last thirds
// of xs over that change (0 when it is 0).
func explainedShare(xs []float64, adj stat.Adjusted) float64 {
	n := len(xs)
	third := max(1, n/3)
	delta := stat.Median(xs[n-third:]) - stat.Median(xs[:third])
	sum := 0.0
	for _, sh := range adj.Share {
		sum += sh
	}
	if delta == 0 {
		return 0
	}
	return sum / delta
}

// maxCovariates keeps the residuals of n windows at least steadyMinWindows degrees of
// freedom: a regression on as many covariates as windows explains anything. (A cap of 3 more
// changed no verdict on the recorded sets: docs/steady-evidence.md.)
func maxCovariates(n int) int { return max(0, n-1-steadyMinWindows) }

// markExplained notes on the series' check which covariate explained its drift: the one
// with the largest share of the change.
func markExplained(checks []SeriesCheck, sr series, d Drift, adj stat.Adjusted) {
	why := explainedBy(sr, adj)
	for i := range checks {
		if checks[i].Metric == sr.metric {
			checks[i].Explained = fmt.Sprintf("%s %s %.0f%% with %s; none left once it is accounted for", driftName(d.Metric), d.Direction, 100*d.Change, why)
		}
	}
}

// explainedBy is the covariate with the largest share of the change ("what the windows
// received" when none has one).
func explainedBy(sr series, adj stat.Adjusted) string {
	best, bi := 0.0, -1
	for i, sh := range adj.Share {
		if v := math.Abs(sh); v > best {
			best, bi = v, i
		}
	}
	if bi < 0 {
		return "what the windows received"
	}
	return sr.covNames[adj.Used[bi]]
}

// requestCovariates are, per count window, the mean output and prompt tokens of the
// requests in flight over the window's sending span (weighted by their time in it: a long
// request of a mix stays in flight for longer, and it is what is in flight that loads the
// server) and, for an open loop, the window's realised arrival rate (requests over their
// sending span): what the window received, which the client's dice set, not the server.
func (s *steadyAcc) requestCovariates(in []steadyObs, bounds []int, open bool, e2e50 float64) ([][]float64, []string) {
	k := len(bounds) - 1
	if k < 1 {
		return nil, nil
	}
	out, prompt, rate, prefill := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	for i := range k {
		w := in[bounds[i]:bounds[i+1]]
		out[i], prompt[i] = s.inFlightMix(float64(w[0].sent), float64(w[len(w)-1].sent))
		if span := w[len(w)-1].sent - w[0].sent; span > 0 {
			rate[i] = float64(len(w)-1) / (float64(span) / 1e9)
			for _, o := range w[1:] {
				prefill[i] += float64(o.prompt) / (float64(span) / 1e9)
			}
		}
	}
	covs, names := [][]float64{prefill, out, prompt}, []string{"the prompt tokens sent per second", "the output lengths in flight", "the prompt lengths in flight"}
	if open {
		covs, names = append([][]float64{s.scheduledAhead(in, bounds, e2e50), rate}, covs...),
			append([]string{"the arrivals scheduled in the E2E before each request", "the arrival rate the windows drew"}, names...)
	}
	return covs, names
}

// scheduledAhead is, per count window, the mean over its requests of the arrivals (any
// phase) scheduled in the median E2E (e2e50, ns) before each one's own scheduled time: the
// requests an open loop's schedule put in flight ahead of it (λ·E2E as the dice drew it). A
// window's own arrival rate misses a burst that came just before it and is still being
// served, and the check called such a run's TTFT a fall (figures: docs/metrics.md "Steady
// state"). The count is the schedule's, and the look-back one constant for the run, so a
// server that slowed does not move it; only an open loop's schedule is the client's dice (a
// closed loop's sends follow the server).
func (s *steadyAcc) scheduledAhead(in []steadyObs, bounds []int, e2e50 float64) []float64 {
	sched := make([]int64, 0, len(s.spans))
	for _, sp := range s.spans {
		sched = append(sched, sp.sched)
	}
	slices.Sort(sched)
	back := int64(e2e50)
	out := make([]float64, len(bounds)-1)
	for i := range out {
		w := in[bounds[i]:bounds[i+1]]
		for _, o := range w {
			lo, _ := slices.BinarySearch(sched, o.sched-back)
			hi, _ := slices.BinarySearch(sched, o.sched)
			out[i] += float64(hi-lo) / float64(len(w))
		}
	}
	return out
}

// inFlightMix is the mean output and prompt tokens of the requests in flight over [a, b],
// each weighted by its time in flight inside it (at the instant a when a = b).
func (s *steadyAcc) inFlightMix(a, b float64) (out, prompt float64) {
	var wsum float64
	for _, sp := range s.spans {
		lo, hi, end := float64(sp.sent), float64(sp.end), float64(sp.end)
		if sp.end < 0 {
			continue
		}
		ov := min(hi, b) - max(lo, a)
		if b == a {
			ov = 0
			if lo <= a && a < end {
				ov = 1
			}
		}
		if ov <= 0 {
			continue
		}
		wsum += ov
		out += ov * float64(sp.tokens)
		prompt += ov * float64(sp.prompt)
	}
	if wsum == 0 {
		return 0, 0
	}
	return out / wsum, prompt / wsum
}

// plusOne is a covSign of n covariates that must all have a positive effect.
func plusOne(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
