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
}

func (o Options) withDefaults() Options {
	if o.Threshold == 0 {
		o.Threshold = 0.05
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Rounds == 0 {
		o.Rounds = 100
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
	P                float64
	// Significant: the interval of Delta excludes 0.
	Significant bool
	// Change is "~" (not significant, interval within the threshold), "within threshold"
	// (significant, interval within it), Inconclusive (the interval straddles the threshold),
	// Improved or Regressed (the whole interval beyond the threshold).
	Change string
	// Assumed: neither side had two runs, so the run-to-run spread is assumed
	// (stat.AssumedRunSD), not measured.
	Assumed bool
	// Power is what these runs could detect (power.go).
	Power *Power
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
	// inconclusive metric with 80% power at the deltas seen (0: more than MaxRuns).
	Decide int
	// Warnings are footnotes for the reader (STYLE.md "Warnings are data"), each said once.
	Warnings []string
	// Changes are the settings the candidate deliberately changed from its baseline (flags
	// given beside run --like), from the candidate's header; nil when it was not made like one.
	Changes []record.Change
	// Server are the servers' own figures (from telemetry) on both sides, beside ours: shown
	// for the reader, never judged (see ServerRow). Nil when neither side has telemetry.
	Server []ServerRow
}

// Compare judges cand against base.
func Compare(base, cand *Side, opt Options) *Result {
	opt = opt.withDefaults()
	br, cr := base.Runs(), cand.Runs()
	res := &Result{BaseRuns: len(br), CandRuns: len(cr), Threshold: opt.Threshold, Alpha: opt.Alpha, Method: Method}
	bc, cc := sideConditions(base), sideConditions(cand)
	if bcache, ccache, ok := prefixCache(br, cr); ok {
		bc.Put(bcache)
		cc.Put(ccache)
	}
	res.Differences = conditions.Diff(bc, cc, opt.Expect)
	ms := KeyMetrics
	if opt.Goodput {
		ms = append(append([]Metric{}, KeyMetrics...), Goodput)
	}
	bb, cb := base.blocksByRun(br), cand.blocksByRun(cr)
	for i, m := range ms {
		rng := rand.New(rand.NewPCG(uint64(i+1), 0x5eed))
		one := len(br) == 1 && len(cr) == 1
		bv, cv := runValues(m, br, bb, opt.Rounds, rng, one), runValues(m, cr, cb, opt.Rounds, rng, one)
		if len(bv) == 0 || len(cv) == 0 {
			if len(br) > 0 && len(cr) > 0 {
				res.warnf("%s: not compared: it is undefined or zero in every run of a side", m.Name)
			}
			continue
		}
		row := compareRow(m, bv, cv, opt)
		res.Rows = append(res.Rows, row)
	}
	res.methodWarnings()
	res.Verdict = verdict(res)
	if res.Verdict == Inconclusive {
		res.Decide = decide(res.Rows)
	}
	if res.Verdict == Improved || res.Verdict == Regressed {
		res.inconclusiveNote()
	}
	res.Server = serverRows(br, cr)
	for _, w := range conditionWarnings(base, cand, res.Differences) {
		res.warnf("%s", w)
	}
	if cand.Header != nil && cand.Header.Like != nil {
		res.Changes = cand.Header.Like.Changes
	}
	return res
}

// compareRow compares one metric's run values and judges the change.
func compareRow(m Metric, bv, cv []stat.RunValue, opt Options) Row {
	r := stat.TwoLevel(bv, cv, opt.Alpha)
	row := Row{Metric: m, Delta: r.Delta, DeltaLo: r.Lo, DeltaHi: r.Hi, P: r.P, Assumed: r.Assumed,
		Significant: r.Lo > 0 || r.Hi < 0,
		Base:        Estimate{r.Base, r.BaseLo, r.BaseHi, len(bv)},
		Cand:        Estimate{r.Cand, r.CandLo, r.CandHi, len(cv)}}
	row.Change = judge(row, opt.Threshold)
	row.Power = power(r, row, opt)
	return row
}

// methodWarnings says, once each, what the intervals rest on when runs are few.
func (r *Result) methodWarnings() {
	switch {
	case r.BaseRuns == 1 && r.CandRuns == 1:
		r.warnf("one run a side: the run-to-run spread cannot be measured, so every interval assumes %.0f%% (plus what each run's requests show); run --repeat 3 on both sides to measure it", 100*stat.AssumedRunSD)
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
		r.warnf("%s: the interval straddles the %.4g%% threshold, so these runs cannot tell whether it changed by that much either way; more runs per side (or longer runs, for a p99) would decide it",
			strings.Join(names, ", "), 100*r.Threshold)
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
func sideConditions(s *Side) conditions.Set {
	return conditions.Merge(conditions.FromHeader(s.Header), s.Header.Conditions)
}

// runValues is each run's value of m on the log scale with its within-run variance; runs
// where m is undefined or not positive (a ratio needs both) are left out.
// oneEach says that each side has one run.
func runValues(m Metric, runs []metrics.RunSummary, blocks map[int][]block, rounds int, rng *rand.Rand, oneEach bool) []stat.RunValue {
	var out []stat.RunValue
	for _, r := range runs {
		v, ok := m.FromSummary(r.Summary)
		if !ok || !(v > 0) || math.IsInf(v, 0) {
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
		out = append(out, stat.RunValue{Log: math.Log(v), Within: w, WithinDF: df})
	}
	return out
}

// judge names a row's change from its interval [lo, hi] of cand/base − 1 against the
// threshold th, in the metric's worse and better directions: beyond th entirely → regressed
// or improved; inside (−th, th) entirely → "~" or "within threshold"; across ±th →
// inconclusive. With a threshold of 0 every significant change counts, and a non-significant
// one is "~" (benchstat's rule).
func judge(r Row, th float64) string {
	worseLo, worseHi := r.DeltaLo, r.DeltaHi // the interval in the "worse" direction
	if !r.Metric.Lower {
		worseLo, worseHi = -r.DeltaHi, -r.DeltaLo
	}
	switch {
	case th <= 1e-6 && !r.Significant:
		return "~"
	case worseLo >= th:
		return Regressed
	case worseHi <= -th:
		return Improved
	case worseHi < th && worseLo > -th && r.Significant:
		return "within threshold"
	case worseHi < th && worseLo > -th:
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
// is named in a note); else inconclusive when any is; else no significant change.
//
// We tried letting a metric that may have regressed (its interval reaching the threshold on
// the worse side) make the whole verdict inconclusive even beside a clear improvement: with
// short runs a p99 (the largest of a few requests) straddles any threshold, so a halved ITL
// read as inconclusive. Such metrics are named instead.
func verdict(r *Result) string {
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
	case has(func(x Row) bool { return x.Change == Regressed }):
		return Regressed
	case has(func(x Row) bool { return x.Change == Improved }):
		return Improved
	case has(func(x Row) bool { return x.Change == Inconclusive }):
		return Inconclusive
	}
	return NoChange
}

// prefixCacheKey is the measured condition "how much of the prompts the server took from its
// prefix cache". A candidate that replays the baseline's prompts on a server that still holds
// them measures cache hits, not prefill (TTFT fell 5x in such a replay against llama.cpp), so
// a change here makes the runs not comparable unless it was meant (--expect-change).
const prefixCacheKey = "measurement.prefix_cache"

// prefixCache returns both sides' prefix-cache condition when either side's server reported
// cached prompt tokens, in coarse classes so that noise does not flip it.
func prefixCache(br, cr []metrics.RunSummary) (b, c record.Condition, ok bool) {
	bs, bc := cacheShare(br)
	cs, cc := cacheShare(cr)
	if bc == 0 && cc == 0 {
		return b, c, false
	}
	return record.Condition{Key: prefixCacheKey, Value: cacheClass(bs), Source: "detected"},
		record.Condition{Key: prefixCacheKey, Value: cacheClass(cs), Source: "detected"}, true
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

func cacheClass(share float64) string {
	switch {
	case share < 0.05:
		return "none (<5% of prompt tokens cached)"
	case share <= 0.5:
		return "partial (5-50% of prompt tokens cached)"
	}
	return "most (>50% of prompt tokens cached)"
}
