package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"servebench/metrics"
	"servebench/stat"
)

// Contention: a median latency judged at equal contention.
//
// A request's TTFT depends on how many other prompts the server was prefilling beside it, and
// how many arrivals overlap is the closed loop's phase: users whose requests all take about one
// E2E keep the spacing they fell into, and one late engine step can merge two users for the
// rest of the run. So runs of one server spread in TTFT p50 with the share of overlapping
// arrivals, the server's own TTFT histogram moving with it: a run-level spread that is the load
// generator's phase, not the server, and that no number of runs a side makes normal (it takes
// a few levels). Judging TTFT p50 by its runs' spread alone leaves identical servers
// "inconclusive" for ever. The measured figures (the median TTFT per contention level, the
// runs' p50s and their shares of overlapping arrivals) are in docs/compare-evidence.md, item
// "Contention".
//
// So the rows that contention moves (TTFT p50, E2E p50, and the output and request
// throughput, which in a closed loop are the users over the mean E2E) are also compared at
// equal contention, by direct standardisation: each request's contention level is the number
// of other requests (warmup ones too) whose TTFT interval overlapped its own, in two levels:
// 0 (a lone arrival) and 1 (one or more others overlapping); the levels with at least
// minStratum requests in every run of both sides are kept; a run's value is the weighted geometric mean of its per-level figures (a median's:
// the level's median; a throughput's: the level's tokens or requests per second of request
// time, the rate one stream got, see perStream), the weights being the levels' shares over
// both sides together (the same weights in every run); and those run values are compared by
// the same two-level t and verdict rule as any row. That figure moves when the server's
// latency at a given contention moves (a slower prefill moves the lone arrivals one for one;
// a scheduler that handles concurrent prefills worse moves the higher levels; a slower decode
// moves every level), and not when only the mix of levels moved.
//
// An inconclusive row of these does not hold the verdict when its figure at equal
// contention is equivalent (inside ±threshold): the row's own interval straddled the
// threshold because the arrivals clustered differently, not because the server changed. Where
// the plain row moved significantly, it is cleared only when the standardised figure spans
// the contended requests too (both levels): otherwise a change confined to contended requests
// would go unseen. One called improved or regressed that the mix explains (its
// figure at equal contention equivalent, or apart from it and not the same change: see
// Explains) is inconclusive, and cleared the same way when that figure is equivalent
// (TestExplainsByTheMix). The figure never decides a change by itself; one that regressed or improved
// clears nothing, and a note says so.
//
// minStratum, the fewest requests of a contention level in a run for the level to be used (a
// median of fewer moves by a step of the closed loop), is the policy's (policy.go). Policies
// before compare-2026.12.4 cut contention into levels 0, 1, 2 and 3 or more (max_level 3) and
// asked for at least min_levels (2) of them; splitting the contended requests by how many
// overlapped changed no verdict word on the recorded sets (docs/compare-recorded.md,
// "Constants"), so the levels are lone and contended, and "both levels" replaced min_levels.

// The contention levels: a lone arrival, and one that one or more other requests overlapped.
const (
	loneLevel      = 0
	contendedLevel = 1
	levelCap       = contendedLevel + 1 // the levels' count, an array bound
)

// Contention is a row judged at equal contention.
type Contention struct {
	// Row is the metric at equal contention, compared like any row (Change, interval, p).
	Row Row
	// Lone, when Row spans both levels, is the metric over the lone
	// arrivals alone: the contended levels' medians move with how much of a prefill
	// overlapped, so the lone arrivals alone are the sharper figure.
	Lone *Row
	// Levels are the contention levels the standardised figure spans (loneLevel,
	// contendedLevel), with their weights.
	Levels  []int
	Weights []float64
	// BaseShare and CandShare are, per run, the share of measured requests whose TTFT
	// interval overlapped another's, in run order: the mix that moved the plain row.
	BaseShare, CandShare []float64
	// OneEach: one run a side, where the plain row's interval rests on an assumed run-to-run
	// spread (3%) that the arrivals' phase breaks (figures: docs/compare-evidence.md "Figures
	// moved from the code's comments"): there a change of the plain row stands only where the
	// figure at equal contention shows it too.
	OneEach bool
}

// Clears says whether the figure at equal contention lets an inconclusive plain row go: it is
// equivalent, and where the plain row moved significantly it spans the contended level too
// (the lone arrivals alone clear only a plain row that did not move significantly). A tail
// (p99) that moved significantly is never cleared: a server whose cohorts of merged prefills
// got slower moves only the requests that three or more others overlapped, a few of the
// contended level, and the figure at equal contention would not see it; it holds the verdict
// at inconclusive.
func (c *Contention) Clears(plain Row) bool {
	if c == nil || (plain.Metric.Tail && plain.Significant) {
		return false
	}
	if equivalent(c.Row) && (!plain.Significant || c.bothLevels()) {
		return true
	}
	return c.Lone != nil && equivalent(*c.Lone) && !plain.Significant
}

// Explains is the plain row's change once its figure at equal contention is known. A row
// called improved or regressed is inconclusive (and Clears lets it go where the figure is
// equivalent) when the mix of contention levels, not the server's latency at any level,
// explains it: its figure at equal contention, spanning contended levels too, is equivalent;
// or that figure does not show the same change and its interval lies wholly apart from the
// plain row's, so at equal contention the change is demonstrably smaller than the plain one.
// At one run a side a plain change stands only where the figure at equal contention shows the
// same change (OneEach). Any other change stands: a server whose prefill slowed moves its lone
// arrivals one for one. (Requiring every plain change to be shown at equal contention too cost
// detection in virtual time, where TTFT does not depend on contention and the per-level
// figures are noisier.)
//
// The figure at equal contention never makes a change by itself (an inconclusive TTFT p50
// whose lone arrivals regressed stays inconclusive, with a note): it is one more test of the
// row, and letting it decide called more A/A comparisons changed in virtual time than the 5%
// promise, even at half the level. The figures of this paragraph and the one before are in
// docs/compare-evidence.md "Figures moved from the code's comments".
func (c *Contention) Explains(plain Row) string {
	ch, _ := c.explain(plain)
	return ch
}

// explain is Explains with the rule that made the row inconclusive (RuleContention; "" when
// none did).
func (c *Contention) explain(plain Row) (string, string) {
	if c == nil || (plain.Change != Improved && plain.Change != Regressed) {
		return plain.Change, ""
	}
	if c.OneEach {
		if c.changed() != plain.Change {
			return Inconclusive, RuleContention
		}
		return plain.Change, ""
	}
	eq := c.Row
	if c.bothLevels() && equivalent(eq) {
		return Inconclusive, RuleContention
	}
	apart := eq.DeltaHi < plain.DeltaLo || eq.DeltaLo > plain.DeltaHi
	if eq.Change != plain.Change && apart {
		return Inconclusive, RuleContention
	}
	return plain.Change, ""
}

// changed is the change at equal contention when the standardised figure and, beside it, the
// lone arrivals both show it beyond the threshold; "" otherwise.
func (c *Contention) changed() string {
	ch := c.Row.Change
	if ch != Improved && ch != Regressed {
		return ""
	}
	if c.Lone != nil && c.Lone.Change != ch {
		return ""
	}
	return ch
}

// bothLevels: the figure spans the lone arrivals and the contended requests.
func (c *Contention) bothLevels() bool { return len(c.Levels) == levelCap }

func equivalent(r Row) bool { return r.Change == "~" || r.Change == "within threshold" }

// span is a request's TTFT interval, ns since the run's t0.
type span struct{ a, b int64 }

// markContention sets each measured request's contention level: how many other requests'
// TTFT intervals (spans, warmup ones included) overlapped its own, capped at maxLevel
// (contendedLevel in a comparison); −1
// when its TTFT is undefined. Span j overlaps [a, b) when a_j < b and b_j > a; counted as
// #(a_j < b) − #(b_j ≤ a) − 1 (itself) over sorted starts and ends.
func markContention(reqs []obs, spans []span, maxLevel int) {
	starts := make([]int64, len(spans))
	ends := make([]int64, len(spans))
	for i, s := range spans {
		starts[i], ends[i] = s.a, s.b
	}
	slices.Sort(starts)
	slices.Sort(ends)
	for i := range reqs {
		o := &reqs[i]
		o.level = -1
		if math.IsNaN(o.ttft) {
			continue
		}
		a, b := o.sent, o.sent+int64(o.ttft)
		nb, _ := slices.BinarySearch(starts, b) // starts < b
		na, found := slices.BinarySearch(ends, a)
		for found && na < len(ends) && ends[na] == a { // ends ≤ a
			na++
		}
		o.level = min(max(nb-na-1, 0), maxLevel)
	}
}

// contended is the share of a run's measured requests with a defined level above 0; NaN when
// none has a level.
func contended(reqs []*obs) float64 {
	n, k := 0, 0
	for _, o := range reqs {
		if o.level < 0 {
			continue
		}
		n++
		if o.level > 0 {
			k++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// byLevel is a run's requests whose per-request value (ns) is defined, split by contention
// level.
func byLevel(reqs []*obs, val func(*obs) float64) [levelCap][]*obs {
	var out [levelCap][]*obs
	for _, o := range reqs {
		if o.level < 0 {
			continue
		}
		if v := val(o); !math.IsNaN(v) && v > 0 {
			out[o.level] = append(out[o.level], o)
		}
	}
	return out
}

// conditioned is the plain metric m judged at equal contention (nil when m is not one that
// contention moves, no level has minStratum requests with a defined value in every run, or,
// for a throughput, a run has a failed measured request).
func conditioned(m Metric, br, cr []metrics.RunSummary, bb, cb map[int][]block, opt Options, oneEach bool) *Contention {
	if m.perRequest == nil {
		return nil
	}
	k := opt.pol
	all := func(runs []metrics.RunSummary, blocks map[int][]block) ([][levelCap][]*obs, []float64) {
		var lv [][levelCap][]*obs
		var share []float64
		for _, r := range runs {
			reqs := flatten(blocks[r.Run])
			if m.completedOnly && !allCompleted(reqs) {
				return nil, nil
			}
			lv = append(lv, byLevel(reqs, m.perRequest))
			share = append(share, contended(reqs))
		}
		return lv, share
	}
	bl, bs := all(br, bb)
	cl, cs := all(cr, cb)
	if len(bl) == 0 || len(cl) == 0 {
		return nil
	}
	var levels []int
	var weights []float64
	total := 0.0
	for l := range levelCap {
		n, ok := 0, true
		for _, run := range append(slices.Clone(bl), cl...) {
			ok = ok && len(run[l]) >= k.minStratum
			n += len(run[l])
		}
		if ok {
			levels = append(levels, l)
			weights = append(weights, float64(n))
			total += float64(n)
		}
	}
	if len(levels) == 0 {
		return nil
	}
	for i := range weights {
		weights[i] /= total
	}
	values := func(runs []metrics.RunSummary, lv [][levelCap][]*obs, levels []int, weights []float64) []runValue {
		out := make([]runValue, len(runs))
		for i, r := range runs {
			y := 0.0
			if m.mixPct > 0 {
				y = math.Log(mixQuantile(lv[i], levels, weights, m.perRequest, m.mixPct) / 1e6)
			} else {
				for j, l := range levels {
					y += weights[j] * math.Log(m.levelStat(lv[i][l]))
				}
			}
			out[i] = runValue{V: math.Exp(y), Run: r.Run, RunValue: stat.RunValue{Log: y}}
		}
		return out
	}
	eq := Metric{Name: m.Name + " at equal contention", Unit: m.levelUnit, Lower: m.Lower, Tail: m.Tail}
	c := &Contention{Levels: levels, Weights: weights, BaseShare: bs, CandShare: cs, OneEach: oneEach}
	c.Row = compareRow(eq, values(br, bl, levels, weights), values(cr, cl, levels, weights), opt, oneEach)
	if len(levels) == levelCap {
		lone := compareRow(eq, values(br, bl, []int{loneLevel}, []float64{1}), values(cr, cl, []int{loneLevel}, []float64{1}), opt, oneEach)
		c.Lone = &lone
	}
	return c
}

// mixQuantile is the p-th percentile (ns) of a run's requests at the levels kept, each level's
// requests weighted so that the levels hold the given weights: the percentile the run would
// have had with the common mix of contention levels (direct standardisation of the
// distribution, the tail's counterpart of the weighted per-level medians). It is the smallest
// value at which the weighted share at or below it reaches p.
func mixQuantile(lv [levelCap][]*obs, levels []int, weights []float64, val func(*obs) float64, p float64) float64 {
	type wv struct{ v, w float64 }
	var xs []wv
	for j, l := range levels {
		for _, o := range lv[l] {
			xs = append(xs, wv{val(o), weights[j] / float64(len(lv[l]))})
		}
	}
	slices.SortFunc(xs, func(a, b wv) int { return cmp.Compare(a.v, b.v) })
	q, acc := p/100, 0.0
	for _, x := range xs {
		if acc += x.w; acc >= q-1e-12 {
			return x.v
		}
	}
	return xs[len(xs)-1].v
}

func allCompleted(reqs []*obs) bool {
	for _, o := range reqs {
		if !o.ok {
			return false
		}
	}
	return true
}

func flatten(bs []block) []*obs {
	var out []*obs
	for _, b := range bs {
		out = append(out, b.reqs...)
	}
	return out
}

// contentionNotes says, for each inconclusive row its figure at equal contention cleared, what
// moved and what did not; and for one whose figure at equal contention moved beyond the
// threshold, that it did.
func (r *Result) contentionNotes() {
	for _, row := range r.Rows {
		c := row.Contention
		if c == nil {
			continue
		}
		if row.Change != Inconclusive {
			continue
		}
		eq := c.Row
		what := fmt.Sprintf("%s at equal contention (%s) %s → %s %s, %s", row.Metric.Name, levelNames(c.Levels),
			num(eq.Base.Center), num(eq.Cand.Center), eq.Metric.Unit, changeText(eq))
		if l := c.Lone; l != nil {
			what += fmt.Sprintf("; over the lone arrivals alone %s → %s %s, %s", num(l.Base.Center), num(l.Cand.Center), l.Metric.Unit, changeText(*l))
		}
		if c.Clears(row) {
			r.warnf("%s moved with the arrivals' clustering, not the server: the share of requests whose TTFT overlapped another's was %s in the base's runs and %s in the candidate's; %s, so it does not hold the verdict (docs/metrics.md \"Contention\")",
				row.Metric.Name, shares(c.BaseShare), shares(c.CandShare), what)
			continue
		}
		if eq.Change == Regressed || eq.Change == Improved {
			r.warnf("%s: %s, so this metric is inconclusive, not \"no change\"", row.Metric.Name, what)
			continue
		}
		if plain := judge(row, row.Threshold); plain == Regressed || plain == Improved {
			r.warnf("%s %s %+.1f%% [%+.1f%%, %+.1f%%] in its runs, but not at equal contention: %s; the share of requests whose TTFT overlapped another's was %s in the base's runs and %s in the candidate's, so the mix of contention moved it more than the server did, and this metric is inconclusive",
				row.Metric.Name, plain, 100*row.Delta, 100*row.DeltaLo, 100*row.DeltaHi, what, shares(c.BaseShare), shares(c.CandShare))
		}
	}
}

func levelNames(levels []int) string {
	s := ""
	for i, l := range levels {
		if i > 0 {
			s += ", "
		}
		if l == loneLevel {
			s += "lone arrivals"
		} else {
			s += "overlapping arrivals"
		}
	}
	return s
}

func shares(xs []float64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		if math.IsNaN(x) {
			s += "—"
			continue
		}
		s += fmt.Sprintf("%.0f%%", 100*x)
	}
	return s
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// changeText is a row's change in words: "~ [−0.4%, +0.5%]", "regressed +12% [+8%, +16%]".
func changeText(r Row) string {
	return fmt.Sprintf("%s %+.1f%% [%+.1f%%, %+.1f%%]", r.Change, 100*r.Delta, 100*r.DeltaLo, 100*r.DeltaHi)
}
