package compare

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"

	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
)

// Verdicts.
const (
	Improved      = "improved"
	Regressed     = "regressed"
	NoChange      = "no significant change"
	NotComparable = "not comparable"
)

// Methods of comparison.
const (
	MannWhitney = "mann-whitney"    // several runs per side: U test on run-level values
	Bootstrap   = "block-bootstrap" // one run on a side: block bootstrap over time windows
)

// Options configures a comparison. The zero value means: threshold 5%, alpha 0.05, 1000
// bootstrap rounds, nothing expected to change.
type Options struct {
	// Threshold is the smallest relative change (0.05 = 5%) that counts as improved or
	// regressed; a significant change below it is reported but judged "within threshold".
	Threshold float64
	// Alpha is the significance level of the test (0.05).
	Alpha float64
	// Expect names the conditions the user meant to change (--expect-change).
	Expect []string
	// Rounds is the number of bootstrap rounds (1000).
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
		o.Rounds = 1000
	}
	return o
}

// Estimate is a side's value of a metric: its centre (the median of run-level values, or the
// pooled value for one run) and a 95% interval; N is runs (U test) or time blocks (bootstrap).
type Estimate struct {
	Center, Lo, Hi float64
	N              int
}

// Row is one metric's comparison.
type Row struct {
	Metric           Metric
	Base, Cand       Estimate
	Delta            float64 // cand/base − 1
	DeltaLo, DeltaHi float64 // bootstrap interval of Delta (zero with the U test)
	P                float64
	Significant      bool
	// Change is "~" (not significant), "within threshold", Improved or Regressed.
	Change string
	// Power is what the test could detect with these runs (U test only; power.go).
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
	// Warnings are footnotes for the reader (STYLE.md "Warnings are data").
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
	res := &Result{BaseRuns: len(br), CandRuns: len(cr), Threshold: opt.Threshold, Alpha: opt.Alpha}
	bc, cc := sideConditions(base), sideConditions(cand)
	if bcache, ccache, ok := prefixCache(br, cr); ok {
		bc.Put(bcache)
		cc.Put(ccache)
	}
	res.Differences = conditions.Diff(bc, cc, opt.Expect)
	metrics := KeyMetrics
	if opt.Goodput {
		metrics = append(append([]Metric{}, KeyMetrics...), Goodput)
	}
	if len(br) >= 2 && len(cr) >= 2 {
		res.Method = MannWhitney
		res.Rows = uTest(metrics, br, cr, opt, res)
	} else {
		res.Method = Bootstrap
		bb, cb := base.blocks(), cand.blocks()
		for i, m := range metrics {
			if row, ok := bootstrapRow(m, bb, cb, opt.Rounds, uint64(i+1)); ok {
				row.Metric = m
				res.Rows = append(res.Rows, row)
			}
		}
		res.warnf("one run on a side: low confidence. Deltas come from a block bootstrap over %d+%d time windows of requests; run --repeat 6 on both sides for a test between runs", len(bb), len(cb))
	}
	for i := range res.Rows {
		judge(&res.Rows[i], opt.Threshold)
	}
	res.Verdict = verdict(res)
	res.Server = serverRows(br, cr)
	res.Warnings = append(res.Warnings, conditionWarnings(base, cand, res.Differences)...)
	if cand.Header != nil && cand.Header.Like != nil {
		res.Changes = cand.Header.Like.Changes
	}
	return res
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

// uTest compares the run-level values of each metric with benchmath's Mann-Whitney U test and
// summarises each side by its median and a distribution-free 95% interval.
func uTest(ms []Metric, br, cr []metrics.RunSummary, opt Options, res *Result) []Row {
	th := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	var rows []Row
	for i, m := range ms {
		bv, cv := runValues(m, br), runValues(m, cr)
		if len(bv) < 2 || len(cv) < 2 {
			continue
		}
		bs, cs := benchmath.NewSample(bv, th), benchmath.NewSample(cv, th)
		bsum, csum := benchmath.AssumeNothing.Summary(bs, 0.95), benchmath.AssumeNothing.Summary(cs, 0.95)
		cmp := benchmath.AssumeNothing.Compare(bs, cs)
		for _, w := range append(append(bsum.Warnings, csum.Warnings...), cmp.Warnings...) {
			res.warnf("%s: %v", m.Name, w)
		}
		row := Row{Metric: m, P: cmp.P, Significant: cmp.P <= cmp.Alpha,
			Base: Estimate{bsum.Center, bsum.Lo, bsum.Hi, len(bv)}, Cand: Estimate{csum.Center, csum.Lo, csum.Hi, len(cv)}}
		if bsum.Center != 0 {
			row.Delta = csum.Center/bsum.Center - 1
		}
		row.Power = power(bv, cv, opt.Alpha, opt.Threshold, uint64(i+1))
		rows = append(rows, row)
	}
	return rows
}

func runValues(m Metric, runs []metrics.RunSummary) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := m.FromSummary(r.Summary); ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// judge names a row's change: "~" unless significant; then improved or regressed when the
// change is at least the threshold in the better or worse direction.
func judge(r *Row, threshold float64) {
	switch {
	case !r.Significant:
		r.Change = "~"
	case math.Abs(r.Delta) < threshold:
		r.Change = "within threshold"
	case (r.Delta > 0) == r.Metric.Lower:
		r.Change = Regressed
	default:
		r.Change = Improved
	}
}

// verdict: not comparable when a blocking condition moved unannounced; else regressed when
// any key metric regressed; else improved when any improved; else no significant change.
func verdict(r *Result) string {
	for _, d := range r.Differences {
		if d.Kind == conditions.KindBlocking {
			return NotComparable
		}
	}
	v := NoChange
	for _, row := range r.Rows {
		if row.Change == Regressed {
			return Regressed
		}
		if row.Change == Improved {
			v = Improved
		}
	}
	return v
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
