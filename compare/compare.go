package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
	"servebench/stat"
)

// Verdicts.
const (
	Improved      = "improved"
	Regressed     = "regressed"
	NoChange      = "no significant change"
	NotComparable = "not comparable"
	// Inconclusive: some metric's interval straddles the threshold, so these runs cannot
	// tell whether it changed by the threshold or not; Result.Decide says how many runs per
	// side would.
	Inconclusive = "inconclusive"
	// MeasuredNothing: a side has no measured request that completed (all failed, all
	// warmup, an empty file), or no key metric could be compared: there is nothing to judge,
	// and "no significant change" would pass a broken server. Result.Empty says which side.
	MeasuredNothing = "measured nothing"
	// NotJudged is a row's Change for a tail percentile at one run a side: its run-to-run
	// spread cannot be measured from one run, and it is far larger than a median's (a prefill
	// stall shared by every stream moves a whole run's p99), so the row is shown and left out
	// of the verdict.
	NotJudged = "not judged"
)

// Method is the one method of comparison (stat.TwoLevel): run-level values on the log scale,
// their spread between runs, and each run's requests through a within-run block bootstrap.
const Method = "two-level t"

// Options configures a comparison. The zero value means: threshold 5%, alpha 0.05, 100
// within-run bootstrap rounds, nothing expected to change.
type Options struct {
	// Threshold is the smallest relative change (0.05 = 5%) that counts as improved or
	// regressed; a significant change whose whole interval lies below it is "within threshold".
	Threshold float64
	// Alpha is 1 − the confidence of the intervals (0.05: 95% intervals).
	Alpha float64
	// Expect names the conditions the user meant to change (--expect-change).
	Expect []string
	// Rounds is the number of block-bootstrap rounds inside each run (100).
	Rounds int
	// Goodput includes goodput among the metrics (the sides' Options must carry SLOs).
	Goodput bool
	// TailThreshold is the threshold of the tail percentiles (p99): a run's p99 is set by a
	// few of its slowest requests and moves from run to run far more than a median does
	// (0: twice Threshold).
	TailThreshold float64
	// Policy is the policy that judges (nil: DefaultPolicy): its rules, in order, and the
	// constants they read; a rule it lacks does not fire.
	Policy *Policy
	pol    *knobs
}

func (o Options) withDefaults() Options {
	p := DefaultPolicy
	if o.Policy != nil {
		p = *o.Policy
	}
	o.pol = p.knobs()
	if o.Threshold == 0 {
		o.Threshold = o.pol.threshold
	}
	if o.Alpha == 0 {
		o.Alpha = o.pol.alpha
	}
	if o.Rounds == 0 {
		o.Rounds = o.pol.rounds
	}
	if o.TailThreshold == 0 {
		o.TailThreshold = o.pol.tailFactor * o.Threshold
	}
	return o
}

// Estimate is a side's value of a metric: the geometric mean of its runs' values and its
// interval; N is the runs.
type Estimate struct {
	Center, Lo, Hi float64
	N              int
}

// Row is one metric's comparison.
type Row struct {
	Metric           Metric
	Base, Cand       Estimate
	Delta            float64 // cand/base − 1
	DeltaLo, DeltaHi float64 // its interval (at 1 − Alpha)
	// EqLo and EqHi are its interval at 1 − 2·Alpha (90%), the one an equivalence is judged
	// on: two one-sided tests at Alpha each (TOST), the textbook test that a change lies
	// inside ±threshold.
	EqLo, EqHi float64
	P          float64
	// Significant: the interval of Delta excludes 0.
	Significant bool
	// Change is "~" (not significant, interval within the threshold), "within threshold"
	// (significant, interval within it), Inconclusive (the interval straddles the threshold),
	// Improved or Regressed (the whole interval beyond the threshold).
	Change string
	// Assumed: neither side had two runs, so the run-to-run spread is assumed
	// (the policy's assumed_run_sd), not measured.
	Assumed bool
	// Power is what these runs could detect (power.go).
	Power *Power
	// Threshold is the threshold the row was judged at (Options.TailThreshold for a tail).
	Threshold float64
	// Arithmetic: a run's value was 0 (goodput of a run that met no SLO), so the sides are
	// arithmetic means and the delta a difference of means over the base's (arith.go); a
	// geometric mean cannot hold a 0, and leaving the run out would flatter its side.
	Arithmetic bool
	// Contention, on a row that the arrivals' contention moves (TTFT and E2E p50 and p99, the
	// throughputs), is the metric compared at equal contention (contention.go); nil elsewhere
	// or when no contention level is common to every run.
	Contention *Contention
	// Why are the rules of DefaultPolicy that fired on this row, in policy order, with the
	// figures they read; the last step that Changed set Change.
	Why []Step
	pol *knobs // the policy that judged it
}

// Result is a whole comparison.
type Result struct {
	BaseRuns, CandRuns int
	Method             string
	Differences        []conditions.Difference
	Rows               []Row
	Verdict            string
	Threshold, Alpha   float64
	// Decide, with an inconclusive verdict, is the runs per side that would decide every
	// inconclusive metric with 80% power at the deltas seen (0: none would: a delta on the threshold).
	Decide int
	// Spread, with an inconclusive verdict, is the largest run-to-run spread of its
	// inconclusive medians and throughputs and the runs per side that would show no change at
	// it (power.go); nil at one run a side, where the spread is assumed.
	Spread *Spread
	// Warnings are footnotes for the reader (docs/design/STYLE.md "Warnings are data"), each said once.
	Warnings []string
	// Changes are the settings the candidate deliberately changed from its baseline (flags
	// given beside run --like), from the candidate's header; nil when it was not made like one.
	Changes []record.Change
	// Server are the servers' own figures (from telemetry) on both sides, beside ours: shown
	// for the reader, never judged (see ServerRow). Nil when neither side has telemetry.
	Server []ServerRow
	// Empty, with the verdict MeasuredNothing, says what measured nothing: "candidate",
	// "base", "both", or why no key metric could be compared.
	Empty string
	// Provisional are the reasons the verdict holds only provisionally: a side that was not
	// steady or that its validity rules or warnings invalidate (provisional.go). The verdict
	// is still printed, marked PROVISIONAL, and compare exits with its own code.
	Provisional []string
	// Disturbed are the runs whose client's own health record says it was disturbed for a
	// quarter of the run or more: left out of every metric, or kept where fewer than two
	// runs of the side would remain (disturbed.go).
	Disturbed []DisturbedRun
	// Brief are the runs whose client's record marks it disturbed for less than a quarter of
	// the run: kept in every metric, named in a note (disturbed.go).
	Brief []DisturbedRun
	// Metrics is the key metrics tried; Decided those whose interval settled them (~, within
	// threshold, improved, regressed); Undecided those inconclusive; NotJudged the tails left
	// out at one run a side; Metrics − Decided − Undecided − NotJudged could not be compared.
	Metrics, Decided, Undecided, Unjudged int
	// Answers compare the sides' accuracy and valid-answer share (accuracy.go), when both
	// judged answers; a regressed one makes the verdict Regressed.
	Answers []AnswerRow
	// Why are the rules of DefaultPolicy that fired on the runs and the verdict, in policy
	// order, with the figures they read; the last step that Changed set Verdict. Each row's
	// own rules are in its Row.Why.
	Why []Step
	// Policy is the version of the policy that judged it (DefaultPolicy.Version).
	Policy string
	pol    *knobs
}

// Compare judges cand against base.
func Compare(base, cand *Side, opt Options) *Result {
	opt = opt.withDefaults()
	k := opt.pol
	br, cr := base.Runs(), cand.Runs()
	version := DefaultPolicy.Version
	if opt.Policy != nil {
		version = opt.Policy.Version
	}
	res := &Result{BaseRuns: len(br), CandRuns: len(cr), Threshold: opt.Threshold, Alpha: opt.Alpha, Method: Method, Policy: version, pol: k}
	// runs whose own health record says the client was disturbed leave before anything is
	// compared (disturbed.go)
	if k.has(RuleDisturbedRuns) {
		var bd, cd []DisturbedRun
		br, bd = healthyRuns("base", br, k)
		cr, cd = healthyRuns("candidate", cr, k)
		res.Disturbed = append(bd, cd...)
	}
	if k.has(RuleBrieflyDisturbed) {
		res.Brief = append(brieflyDisturbed("base", br, k), brieflyDisturbed("candidate", cr, k)...)
	}
	res.disturbedSteps()
	bc, cc := sideConditions(base), sideConditions(cand)
	if bcache, ccache, ok := prefixCache(br, cr, k); ok && k.has(RulePrefixCache) {
		bc.Put(bcache)
		cc.Put(ccache)
		bs, _ := cacheShare(br)
		cs, _ := cacheShare(cr)
		stepf(&res.Why, RulePrefixCache, []Figure{fig("base_cached_share", bs), fig("candidate_cached_share", cs)},
			"%s: base %s, candidate %s", prefixCacheKey, bcache.Value, ccache.Value)
	}
	res.Differences = conditions.Diff(bc, cc, opt.Expect)
	ms := KeyMetrics
	if opt.Goodput {
		ms = append(append([]Metric{}, KeyMetrics...), Goodput)
	}
	res.Metrics = len(ms)
	bb, cb := base.blocksByRun(br, k), cand.blocksByRun(cr, k)
	one := len(br) == 1 && len(cr) == 1
	for i, m := range ms {
		bv, cv := base.pairValues(cand, i, m, br, cr, bb, cb, opt.Rounds, one)
		if len(bv) == 0 || len(cv) == 0 {
			if len(br) > 0 && len(cr) > 0 {
				res.warnf("%s: not compared: it is undefined in every run of a side", m.Name)
			}
			stepf(&res.Why, RuleUndefined, nil, "%s not compared", m.Name)
			continue
		}
		row := compareRow(m, bv, cv, opt, one)
		row.Contention = conditioned(m, br, cr, bb, cb, opt, one)
		row.explainStep()
		res.Rows = append(res.Rows, row)
	}
	res.disturbedTails(br, cr)
	res.holdSteps()
	res.count()
	res.methodWarnings()
	res.contentionNotes()
	res.disturbedNotes()
	res.Verdict = verdict(res)
	if res.Empty = measuredNothing(br, cr, res.Rows); res.Empty != "" {
		res.Verdict = MeasuredNothing
		addStep(&res.Why, RuleMeasuredNothing, MeasuredNothing, true,
			fig("base_completed", float64(completed(br))), fig("candidate_completed", float64(completed(cr))), fig("rows", float64(len(res.Rows))))
	}
	res.compareAnswers(br, cr) // accuracy.go
	if res.Verdict == Inconclusive && k.has(RuleDecide) {
		res.Decide = decide(res.Rows)
		figs := []Figure{fig("runs_per_side", float64(res.Decide))}
		if res.Spread = spread(res.Rows); res.Spread != nil {
			figs = append(figs, fig("run_sd", res.Spread.RunSD), fig("no_change_runs_per_side", float64(res.Spread.NoChangeRuns)))
		}
		stepf(&res.Why, RuleDecide, figs, "runs per side to decide: %s%s", runsText(res.Decide), res.Spread.text())
	}
	if res.Verdict == Improved || res.Verdict == Regressed {
		res.inconclusiveNote()
	}
	res.Server = serverRows(br, cr)
	for _, w := range conditionWarnings(base, cand, res.Differences) {
		res.warnf("%s", w)
	}
	if res.Verdict != MeasuredNothing && res.Verdict != NotComparable && k.has(RuleProvisional) {
		res.Provisional = provisional(br, cr)
		if len(res.Provisional) > 0 {
			stepf(&res.Why, RuleProvisional, []Figure{fig("reasons", float64(len(res.Provisional)))}, "PROVISIONAL: %s", strings.Join(res.Provisional, "; "))
		}
	}
	if cand.Header != nil && cand.Header.Like != nil {
		res.Changes = cand.Header.Like.Changes
	}
	return res
}

// count tallies the rows by what decided them.
func (r *Result) count() {
	for _, row := range r.Rows {
		switch row.Change {
		case Inconclusive:
			r.Undecided++
		case NotJudged:
			r.Unjudged++
		default:
			r.Decided++
		}
	}
}

// measuredNothing says which side measured nothing a comparison could use: a side with no
// run, or whose runs completed no measured request ("" when both did). With both measured,
// it says so when no key metric could be compared at all.
func measuredNothing(br, cr []metrics.RunSummary, rows []Row) string {
	b, c := completed(br) == 0, completed(cr) == 0
	switch {
	case b && c:
		return "both"
	case b:
		return "base"
	case c:
		return "candidate"
	case len(rows) == 0:
		return "no key metric could be compared"
	}
	return ""
}

// completed counts the measured requests that completed in runs.
func completed(rs []metrics.RunSummary) int {
	n := 0
	for _, r := range rs {
		n += r.Summary.Completed
	}
	return n
}

// compareRow compares one metric's run values and judges the change. Runs that the outlier
// test marks as disturbed (robust.go) are left out and named in the row; a tail percentile
// at one run a side is not judged; a metric with a 0 in some run is compared on arithmetic
// means (arith.go).
func compareRow(m Metric, bv, cv []runValue, opt Options, oneEach bool) Row {
	th := opt.Threshold
	k := opt.pol
	var why []Step
	if m.Tail && k.has(RuleTailThreshold) {
		th = opt.TailThreshold
		stepf(&why, RuleTailThreshold, []Figure{fig("threshold", th)}, "judged at the tail threshold %g%%", 100*th)
	}
	if hasZero(bv) || hasZero(cv) {
		row := arithRow(m, bv, cv, opt.Alpha, k.runSD)
		row.Threshold = th
		row.Why = why
		row.pol = k
		stepf(&row.Why, RuleArithmetic, []Figure{fig("base_mean", row.Base.Center), fig("candidate_mean", row.Cand.Center)}, "arithmetic means: a run is 0")
		row.judgeStep(row.Threshold)
		return row
	}
	r := stat.TwoLevelAssuming(logs(bv), logs(cv), opt.Alpha, k.runSD)
	row := Row{Metric: m, Delta: r.Delta, DeltaLo: r.Lo, DeltaHi: r.Hi, P: r.P, Assumed: r.Assumed,
		Significant: r.Lo > 0 || r.Hi < 0, Threshold: th, Why: why, pol: k,
		Base: Estimate{r.Base, r.BaseLo, r.BaseHi, len(bv)},
		Cand: Estimate{r.Cand, r.CandLo, r.CandHi, len(cv)}}
	t1 := stat.TQuantile(1-opt.Alpha, r.DF)
	row.EqLo, row.EqHi = math.Expm1(r.LogDiff-t1*r.SE), math.Expm1(r.LogDiff+t1*r.SE)
	row.judgeStep(th)
	if m.Tail && oneEach && k.has(RuleTailOneRun) {
		row.Change = NotJudged
		addStep(&row.Why, RuleTailOneRun, NotJudged, true, fig("base_runs", float64(len(bv))), fig("candidate_runs", float64(len(cv))))
	}
	o := opt
	o.Threshold = th
	row.Power = power(r, row, o)
	return row
}

// methodWarnings says, once each, what the intervals rest on when runs are few.
func (r *Result) methodWarnings() {
	switch {
	case r.BaseRuns == 1 && r.CandRuns == 1:
		r.warnf("one run a side: the run-to-run spread cannot be measured, so every interval assumes %.0f%% (plus what each run's requests show), and the tail percentiles (p99), whose spread from run to run is far larger, are shown but not judged; run --repeat 3 on both sides to measure it", 100*r.k().runSD)
	case r.BaseRuns == 1 || r.CandRuns == 1:
		r.warnf("one run on a side: the run-to-run spread comes from the other side's runs alone; run --repeat 3 on both sides for a firmer interval")
	}
}

// inconclusiveNote names, beside a clear verdict, the metrics whose interval straddles the
// threshold: they may have changed by it either way.
func (r *Result) inconclusiveNote() {
	var names []string
	for _, row := range r.Rows {
		if row.Change == Inconclusive {
			names = append(names, row.Metric.Name)
		}
	}
	if len(names) > 0 {
		r.warnf("%s: the interval straddles the threshold, so these runs cannot tell whether it changed by that much either way; more runs per side (or longer runs, for a p99) would decide it",
			strings.Join(names, ", "))
	}
}

func (r *Result) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	for _, w := range r.Warnings {
		if w == msg {
			return
		}
	}
	r.Warnings = append(r.Warnings, msg)
}

// sideConditions is what the header states: its recorded conditions over those derived from
// the workload and configuration (recorded ones win).
func sideConditions(s *Side) conditions.Set { return headerConditions(s.Header) }

// headerConditions are the conditions a records header states, by itself and as recorded.
func headerConditions(h *record.Header) conditions.Set {
	return conditions.Merge(conditions.FromHeader(h), h.Conditions)
}

// runValue is one run's value of a metric: on the log scale with its within-run variance
// (stat.RunValue), the value itself (V, for the arithmetic comparison of arith.go), and the
// run's index, so a run left out can be named.
type runValue struct {
	stat.RunValue
	V   float64
	Run int
}

func logs(vs []runValue) []stat.RunValue {
	out := make([]stat.RunValue, len(vs))
	for i, v := range vs {
		out[i] = v.RunValue
	}
	return out
}

// runValues is each run's value of m on the log scale with its within-run variance; runs
// where m is undefined are left out. A rate may be 0 (a run whose requests met no SLO has a
// goodput of 0): it stays in, and compareRow compares such a metric on arithmetic means. A
// latency of 0 or less is undefined (a ratio needs both).
// oneEach says that each side has one run; bootstrap that each run's own sampling variance is
// wanted even so (Describe's one-side interval floors the runs' spread with it).
func runValues(m Metric, runs []metrics.RunSummary, blocks map[int][]block, rounds int, rng *rand.Rand, oneEach, bootstrap bool) []runValue {
	var out []runValue
	for _, r := range runs {
		v, ok := m.FromSummary(r.Summary)
		if !ok || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 || (v == 0 && m.Lower) {
			continue
		}
		if v == 0 {
			out = append(out, runValue{V: 0, Run: r.Run, RunValue: stat.RunValue{Log: math.Inf(-1)}})
			continue
		}
		if !oneEach && !bootstrap {
			// With runs to measure the spread, the runs decide: each run's value already holds
			// its own sampling noise, so their spread measures it too (Student's t is exact for
			// it). The block bootstrap's variance used to floor it, and over HTTP it overstated
			// the noise many times: it cuts a run into windows by send time, and a closed loop
			// whose users send in waves puts a whole wave in one window and none in the next
			// (figures: docs/compare-evidence.md, "Between runs").
			out = append(out, runValue{V: v, Run: r.Run, RunValue: stat.RunValue{Log: math.Log(v)}})
			continue
		}
		w := withinVar(m, blocks[r.Run], rounds, rng)
		df := 0.0
		if w > 0 {
			df = float64(len(blocks[r.Run]) - 1)
		}
		if m.orderVar != nil && len(blocks[r.Run]) >= minBlocks {
			var reqs []*obs
			for _, b := range blocks[r.Run] {
				reqs = append(reqs, b.reqs...)
			}
			// an unbounded percentile makes the interval unbounded only where nothing else
			// can bound it (one run a side); with more runs their spread does, and the
			// bootstrap's variance stays a floor under it
			if ov := m.orderVar(reqs); !math.IsInf(ov, 1) || oneEach {
				w = math.Max(w, ov)
			}
		}
		out = append(out, runValue{V: v, Run: r.Run, RunValue: stat.RunValue{Log: math.Log(v), Within: w, WithinDF: df}})
	}
	return out
}

// judge names a row's change from its interval [lo, hi] of cand/base − 1 against the
// threshold th, in the metric's worse and better directions: the 1 − Alpha interval beyond th
// entirely → regressed or improved; the 1 − 2·Alpha interval inside (−th, th) entirely (an
// equivalence by two one-sided tests at Alpha) → "~" or "within threshold"; else
// inconclusive. With a threshold of 0 every significant change counts, and a non-significant
// one is "~" (benchstat's rule).
func judge(r Row, th float64) string {
	worseLo, worseHi := r.DeltaLo, r.DeltaHi // the interval in the "worse" direction
	eqLo, eqHi := r.EqLo, r.EqHi
	if !r.Metric.Lower {
		worseLo, worseHi = -r.DeltaHi, -r.DeltaLo
		eqLo, eqHi = -r.EqHi, -r.EqLo
	}
	switch {
	case th <= 1e-6 && !r.Significant:
		return "~"
	case worseLo >= th:
		return Regressed
	case worseHi <= -th:
		return Improved
	case eqHi < th && eqLo > -th && r.Significant:
		return "within threshold"
	case eqHi < th && eqLo > -th:
		return "~"
	case th <= 1e-6 && worseLo > 0:
		return Regressed
	case th <= 1e-6:
		return Improved
	}
	return Inconclusive
}

// verdict: not comparable when a blocking condition moved unannounced; else regressed when
// any key metric regressed; else improved when any improved (an inconclusive metric beside it
// is named in a note); else inconclusive when an inconclusive row blocks (see blocks); else
// no significant change.
//
// We tried letting a metric that may have regressed (its interval reaching the threshold on
// the worse side) make the whole verdict inconclusive even beside a clear improvement: with
// short runs a p99 (the largest of a few requests) straddles any threshold, so a halved ITL
// read as inconclusive. Such metrics are named instead.
func verdict(r *Result) string {
	v := verdictOf(r)
	if v == NotComparable {
		n := 0
		for _, d := range r.Differences {
			if d.Kind == conditions.KindBlocking {
				n++
			}
		}
		addStep(&r.Why, RuleBlocking, v, true, fig("blocking_conditions", float64(n)))
		return v
	}
	count := func(ok func(Row) bool) float64 {
		n := 0
		for _, row := range r.Rows {
			if ok(row) {
				n++
			}
		}
		return float64(n)
	}
	addStep(&r.Why, RuleVerdict, v, true, fig("rows", float64(len(r.Rows))),
		fig("regressed", count(func(x Row) bool { return x.Change == Regressed })),
		fig("improved", count(func(x Row) bool { return x.Change == Improved })),
		fig("holding", count(blocks)))
	return v
}

// verdictOf is the verdict of verdict, without its step.
func verdictOf(r *Result) string {
	for _, d := range r.Differences {
		if d.Kind == conditions.KindBlocking {
			return NotComparable
		}
	}
	has := func(ok func(Row) bool) bool {
		for _, row := range r.Rows {
			if ok(row) {
				return true
			}
		}
		return false
	}
	switch {
	case len(r.Rows) == 0:
		return MeasuredNothing
	case has(func(x Row) bool { return x.Change == Regressed }):
		return Regressed
	case has(func(x Row) bool { return x.Change == Improved }):
		return Improved
	case has(blocks):
		return Inconclusive
	}
	return NoChange
}

// blocks says whether an inconclusive row keeps the verdict from "no significant change": any
// inconclusive median or rate does, unless its figure at equal contention is equivalent
// (Contention.Clears: its runs spread with the arrivals' clustering); a tail percentile does
// only when it moved (its own interval excludes no change, tail-not-moved). A p99's
// run-to-run spread is many times a median's, so at a few runs a side its interval almost
// always straddles the threshold: requiring it decided would make identical servers
// inconclusive nearly every time. The verdict line counts and names such rows.
//
// The measured spreads and rates behind these rules are in docs/compare-evidence.md and
// docs/compare-recorded.md.
func blocks(x Row) bool {
	h, _ := hold(x)
	return h
}

// hold is blocks with the rule that decided it ("" for a row that is not inconclusive).
func hold(x Row) (bool, string) {
	switch {
	case x.Change != Inconclusive:
		return false, ""
	case x.k().has(RuleContentionClears) && x.Contention.Clears(x):
		return false, RuleContentionClears
	case !x.Metric.Tail:
		return true, RuleHolds
	case x.k().has(RuleTailNotMoved) && !x.tailMoved():
		return false, RuleTailNotMoved
	}
	return true, RuleHolds
}

// tailMoved says whether a tail row moved significantly: its interval excludes no change.
func (x Row) tailMoved() bool { return x.Significant }

// prefixCacheKey is the measured condition "how much of the prompts the server took from its
// prefix cache". A candidate that replays the baseline's prompts on a server that still holds
// them measures cache hits, not prefill (figure: docs/compare-recorded.md), so a change here
// makes the runs not comparable unless it was meant (--expect-change).
const prefixCacheKey = "measurement.prefix_cache"

// prefixCache returns both sides' prefix-cache condition when either side's server reported
// cached prompt tokens, in coarse classes so that noise does not flip it.
func prefixCache(br, cr []metrics.RunSummary, k *knobs) (b, c record.Condition, ok bool) {
	bs, bc := cacheShare(br)
	cs, cc := cacheShare(cr)
	if bc == 0 && cc == 0 {
		return b, c, false
	}
	return record.Condition{Key: prefixCacheKey, Value: cacheClass(bs, k), Source: "detected"},
		record.Condition{Key: prefixCacheKey, Value: cacheClass(cs, k), Source: "detected"}, true
}

// cacheShare is Σ cached prompt tokens / Σ prompt tokens over runs, and the cached total.
func cacheShare(rs []metrics.RunSummary) (float64, int64) {
	var cached, in int64
	for _, r := range rs {
		cached += r.Summary.CachedPromptTokens
		in += r.Summary.InputTokens
	}
	if in == 0 {
		return 0, cached
	}
	return float64(cached) / float64(in), cached
}

func cacheClass(share float64, k *knobs) string {
	switch {
	case share < k.cacheNone:
		return fmt.Sprintf("none (<%g%% of prompt tokens cached)", 100*k.cacheNone)
	case share <= k.cacheMost:
		return fmt.Sprintf("partial (%g-%g%% of prompt tokens cached)", 100*k.cacheNone, 100*k.cacheMost)
	}
	return fmt.Sprintf("most (>%g%% of prompt tokens cached)", 100*k.cacheMost)
}
