package compare

import (
	"math"
	"math/rand/v2"

	"servebench/metrics"
)

// A run's figure from its requests: the disturbed ones left out, each moved to a common
// contention level.
//
// Disturbance. Every run records its load generator's own health per second; the seconds in
// which the client was disturbed (metrics.Disturbance.Spans) measured the client's delays as
// much as the server's. A request value whose interval such a span touches (a TTFT's wait, a
// whole request for E2E, TPOT and the throughputs, one gap for ITL) is left out of its run's
// figure; every run stays.
//
// Contention. A request's TTFT (and so its E2E, and a closed loop's throughput) depends on
// how many other prompts the server was prefilling beside it, and how many arrivals overlap is
// the closed loop's phase, which moves from run to run of one server. The model: on the log
// scale, a request's value is its run's level plus a slope times its contention level (the
// other requests whose TTFT interval overlapped its own, warmup ones too), plus noise. The
// slope is estimated within runs (each run's requests about their run's mean: the run is a
// fixed effect, so a difference between runs or sides never enters it), pooled over every run
// of both sides. Each request's value is then moved to the common mean level x̄ of both sides,
// v · exp(−slope · (x − x̄)).
//
// A run's figure is its own figure times the ratio its kept, adjusted requests give: a
// percentile of them over the same percentile of all its requests as they were; for a
// throughput (a closed loop's, users over the mean request time), the rate per second of
// request time of them over that of all. The row is judged on those run figures by the same
// two-level interval and rule as any row.

// An experiment, not part of DefaultPolicy: the two rules below replace contention-explains
// and contention-clears (contention-adjusted) and disturbed-runs-left-out,
// briefly-disturbed-kept and disturbed-tail-by-side (disturbed-requests-left-out) in a policy
// made by ExperimentPolicy. On the recorded sets neither held the rates of the rules they
// would replace (docs/compare-evidence.md, "One model of contention and of disturbance:
// tried, not adopted"); TestPolicyExperiment (internal/policydoc, SB_EXP=1) judges them.

// The experiment's rule IDs.
const (
	RuleDisturbedRequests  = "disturbed-requests-left-out"
	RuleContentionAdjusted = "contention-adjusted"
)

// experimentRules are the experiment's rules, in their order (before interval).
var experimentRules = []Rule{
	{ID: RuleDisturbedRequests, Scope: "row",
		Condition: "a run's own client health record (record.Quality) marks its load generator disturbed in some spans",
		Reads:     []string{"the disturbed spans; each request value's interval (a TTFT's wait; the whole request for E2E, TPOT and the throughputs; one gap for ITL)"},
		Effect:    "a value whose interval a disturbed span touches is left out of its run's figure: the run's figure is its own times the ratio its kept values give (a percentile over the same of all; a throughput's rate per second of request time over that of all); every run stays"},
	{ID: RuleContentionAdjusted, Scope: "row",
		Condition: "TTFT p50/p99, E2E p50/p99 or a throughput (for a throughput: every measured request of every run completed)",
		Reads:     []string{"each request's value and contention level (the other requests whose TTFT interval overlapped its own, warmup ones too)"},
		Effect:    "the run figures the row is judged on are adjusted for contention: each request's log value moved to the common mean level by the slope of log value on level, estimated within runs and pooled over both sides' runs; a run's figure is its own times the ratio its adjusted requests give"},
}

// ExperimentPolicy is DefaultPolicy with the experiment's rules put in before interval, less
// the rules named in drop (the experiment's own among them).
func ExperimentPolicy(drop ...string) Policy {
	out := Policy{Version: DefaultPolicy.Version + " experiment"}
	for _, r := range DefaultPolicy.Rules {
		if r.ID == RuleInterval {
			out.Rules = append(out.Rules, experimentRules...)
		}
		out.Rules = append(out.Rules, r)
	}
	return out.Without(drop...)
}

// Adjustment is how a row's run figures were made from their requests.
type Adjustment struct {
	// Slope is the pooled within-run slope of log value per overlapping request; Mean the
	// common mean contention level x̄ the requests were moved to (0 and 0: not adjusted).
	Slope, Mean float64
	// BaseLevel and CandLevel are each run's mean contention level, in run order.
	BaseLevel, CandLevel []float64
	// BaseOut and CandOut are the values left out as disturbed, of BaseN and CandN.
	BaseOut, CandOut, BaseN, CandN int
	// Plain is the row judged on the runs' own figures.
	Plain Row
}

// ExperimentCovariate is the form of contention-adjusted's model: "" (log value linear in
// the overlapping requests), "log" (linear in log(1 + overlapping)) or "fe" (an effect for
// each level of overlapping requests, fitted with the runs' own by alternating means).
var ExperimentCovariate = ""

// covariate is a request's contention covariate.
func covariate(o *obs) float64 {
	if ExperimentCovariate == "log" {
		return math.Log1p(float64(o.overlap))
	}
	return float64(o.overlap)
}

// contentionSlope is the pooled within-run least-squares slope of log val on the covariate
// over the runs' kept measured requests with a defined level and value, the mean covariate
// over them all and each run's; ok is false when no run has two such requests at different
// levels.
func contentionSlope(runs [][]*obs, val func(*obs) float64, kept func(*obs) bool) (slope, mean float64, levels []float64, ok bool) {
	var sxy, sxx, sx, n float64
	use := func(o *obs) bool { return o.level >= 0 && val(o) > 0 && kept(o) }
	for _, reqs := range runs {
		var mx, my, k float64
		for _, o := range reqs {
			if use(o) {
				mx += covariate(o)
				my += math.Log(val(o))
				k++
			}
		}
		if k == 0 {
			levels = append(levels, math.NaN())
			continue
		}
		levels = append(levels, mx/k)
		sx += mx
		n += k
		mx /= k
		my /= k
		for _, o := range reqs {
			if use(o) {
				dx := covariate(o) - mx
				sxx += dx * dx
				sxy += dx * (math.Log(val(o)) - my)
			}
		}
	}
	if sxx == 0 || n == 0 {
		return 0, 0, levels, false
	}
	return sxy / sxx, sx / n, levels, true
}

// touched says whether a disturbed span touches [a, b).
func touched(spans [][2]float64, a, b float64) bool {
	for _, s := range spans {
		if s[0] < b && s[1] > a {
			return true
		}
	}
	return false
}

// sideRuns is one side's runs and their blocks.
type sideRuns struct {
	rs []metrics.RunSummary
	bs map[int][]block
}

// fromRequests is metric m with its run figures made from the runs' requests (the disturbed
// left out when drop, each moved to contention level mean by slope), the figures the
// bootstrap resamples the same; and the values left out and in all, per side.
func fromRequests(m Metric, sides []sideRuns, drop bool, slope, mean float64, effects map[int]float64) (Metric, [2][2]int) {
	var counts [2][2]int
	keepAt := func(o *obs, i int) bool {
		if !drop || len(o.disturbed) == 0 {
			return true
		}
		a, b := m.span(o, i)
		return !touched(o.disturbed, a, b)
	}
	move := func(o *obs) float64 {
		if effects != nil {
			if o.level < 0 {
				return 1
			}
			return math.Exp(-effects[o.overlap])
		}
		if slope == 0 || o.level < 0 {
			return 1
		}
		return math.Exp(-slope * (covariate(o) - mean))
	}
	factor := map[*metrics.Summary]float64{}
	am := m
	if m.pct > 0 { // a latency percentile
		vals := map[*obs][]float64{}
		for si, sd := range sides {
			for _, r := range sd.rs {
				var raw, kept []float64
				for _, b := range sd.bs[r.Run] {
					for _, o := range b.reqs {
						vs := m.values(o)
						if len(vs) == 0 {
							continue
						}
						f := move(o)
						var out []float64
						for i, v := range vs {
							raw = append(raw, v)
							counts[si][1]++
							if !keepAt(o, i) {
								counts[si][0]++
								continue
							}
							out = append(out, v*f)
						}
						vals[o] = out
						kept = append(kept, out...)
					}
				}
				if len(kept) > 0 && len(raw) > 0 {
					factor[r.Summary] = selectQuantile(kept, m.pct) / selectQuantile(raw, m.pct)
				}
			}
		}
		am = latency(m.Name, m.pct, nil, func(o *obs) []float64 { return vals[o] })
	} else { // a throughput: per second of request time, kept and moved over all as they were
		ratio := func(reqs []*obs) float64 {
			var n, t, nk, tk float64
			for _, o := range reqs {
				if o.e2e > 0 {
					n += m.count(o)
					t += o.e2e
					if keepAt(o, 0) {
						nk += m.count(o)
						tk += o.e2e * move(o)
					}
				}
			}
			if t <= 0 || tk <= 0 || n <= 0 {
				return 1
			}
			return (nk / tk) / (n / t)
		}
		for si, sd := range sides {
			for _, r := range sd.rs {
				reqs := flatten(sd.bs[r.Run])
				factor[r.Summary] = ratio(reqs)
				for _, o := range reqs {
					counts[si][1]++
					if !keepAt(o, 0) {
						counts[si][0]++
					}
				}
			}
		}
		am.fromBlocks = func(reqs []*obs, sec float64) (float64, bool) {
			v, ok := m.fromBlocks(reqs, sec)
			return v * ratio(reqs), ok
		}
	}
	am.Name, am.Tail, am.Lower, am.Unit = m.Name, m.Tail, m.Lower, m.Unit
	am.FromSummary = func(s *metrics.Summary) (float64, bool) {
		v, ok := m.FromSummary(s)
		f, has := factor[s]
		if !has || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			f = 1
		}
		return v * f, ok
	}
	return am, counts
}

// requestRow is metric m judged on run figures made from the runs' requests (requests.go's
// rules: the disturbed left out when drop, moved to a common contention level when adjust
// and m is one contention moves); nil when neither applies to m.
func requestRow(m Metric, br, cr []metrics.RunSummary, bb, cb map[int][]block, opt Options, one bool, i int, plain Row, drop, adjust bool) (*Row, *Adjustment) {
	if m.values == nil && m.count == nil {
		return nil, nil
	}
	adjust = adjust && m.perRequest != nil
	if !drop && !adjust {
		return nil, nil
	}
	sides := []sideRuns{{br, bb}, {cr, cb}}
	a := &Adjustment{Plain: plain}
	var effects map[int]float64
	if m.count != nil { // a throughput needs every request's time
		for _, sd := range sides {
			for _, r := range sd.rs {
				if !allCompleted(flatten(sd.bs[r.Run])) {
					return nil, nil
				}
			}
		}
	}
	if adjust {
		var runs [][]*obs
		for _, sd := range sides {
			for _, r := range sd.rs {
				runs = append(runs, flatten(sd.bs[r.Run]))
			}
		}
		kept := func(o *obs) bool {
			if !drop || m.span == nil {
				return true
			}
			a, b := m.span(o, 0)
			if m.count != nil {
				a, b = float64(o.sent), float64(o.end)
			}
			return !touched(o.disturbed, a, b)
		}
		if slope, mean, levels, ok := contentionSlope(runs, m.perRequest, kept); ok {
			a.Slope, a.Mean = slope, mean
			a.BaseLevel, a.CandLevel = levels[:len(br)], levels[len(br):]
			if ExperimentCovariate == "fe" {
				effects = levelEffects(runs, m.perRequest, kept)
			}
		}
	}
	if m.count != nil && m.span == nil {
		m.span = func(o *obs, _ int) (float64, float64) { return float64(o.sent), float64(o.end) }
	}
	am, counts := fromRequests(m, sides, drop, a.Slope, a.Mean, effects)
	a.BaseOut, a.BaseN, a.CandOut, a.CandN = counts[0][0], counts[0][1], counts[1][0], counts[1][1]
	if a.Slope == 0 && a.BaseOut == 0 && a.CandOut == 0 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(uint64(i+1), 0x5eed))
	bv := runValues(am, br, bb, opt.Rounds, rng, one, false)
	cv := runValues(am, cr, cb, opt.Rounds, rng, one, false)
	if len(bv) == 0 || len(cv) == 0 {
		return nil, nil
	}
	row := compareRow(m, bv, cv, opt, one)
	return &row, a
}

// levelEffects is the two-way fixed-effects fit of log val on run and contention level (each
// level its own effect, by alternating means), the level effects centred on the requests'
// mean.
func levelEffects(runs [][]*obs, val func(*obs) float64, kept func(*obs) bool) map[int]float64 {
	use := func(o *obs) bool { return o.level >= 0 && val(o) > 0 && kept(o) }
	re := make([]float64, len(runs))
	le := map[int]float64{}
	for range 30 {
		sum, n := map[int]float64{}, map[int]float64{}
		for i, reqs := range runs {
			for _, o := range reqs {
				if use(o) {
					sum[o.overlap] += math.Log(val(o)) - re[i]
					n[o.overlap]++
				}
			}
		}
		var tot, cnt float64
		for l := range sum {
			le[l] = sum[l] / n[l]
			tot += sum[l]
			cnt += n[l]
		}
		for l := range le {
			le[l] -= tot / cnt
		}
		for i, reqs := range runs {
			var s, k float64
			for _, o := range reqs {
				if use(o) {
					s += math.Log(val(o)) - le[o.overlap]
					k++
				}
			}
			if k > 0 {
				re[i] = s / k
			}
		}
	}
	return le
}
