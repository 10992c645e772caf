// Package compare judges a candidate run against a baseline: first whether the two were made
// under the same conditions (package conditions), then, metric by metric, whether the
// candidate differs by more than chance, and finally a verdict a CI pipeline can gate on.
//
// Statistics policy (docs/design/STYLE.md 7, docs/metrics.md "Comparing runs"): each metric's value per
// run, on the log scale, is the unit; the runs' spread and each run's own requests (a block
// bootstrap over its time windows, which keeps neighbouring requests together) give a
// Student-t interval of the ratio cand/base (stat.TwoLevel). The interval decides: "~" when it
// holds no change and no change of the threshold, improved or regressed when it lies wholly
// beyond the threshold, inconclusive when it straddles it. The false-alarm and detection rates
// of this rule are measured by simulation (simulate_test.go) and quoted in
// docs/compare-evidence.md.
package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"servebench/metrics"
	"servebench/record"
)

// Side is one records file (or one set of runs) being compared: accumulate it record by
// record with Add, like a metrics.Accumulator. Records are split by their Run index with
// metrics.Runs (every run its own Accumulator, because run-level figures of pooled runs would
// mix the gaps between runs into the window); beside them the Side keeps, per run, what the
// bootstrap needs of each measured request.
type Side struct {
	Header *record.Header
	opt    metrics.Options
	runs   *metrics.Runs
	reqs   map[int][]obs // by Record.Run
	// spans are the TTFT intervals of every request of a run with one, warmup included: the
	// prefills a measured request's may have overlapped (contention.go)
	spans map[int][]span
	// memo holds run values already computed against a candidate (pairValues)
	memo map[memoKey][2][]runValue
	// summaries are Runs' value, computed on its first call after the last Add: a Compare
	// reads them three times, and an ablation judges a side under every policy
	summaries []metrics.RunSummary
}

// memoKey names one metric's run values of a pair: the candidate, the metric, the runs of
// each side that were compared and how.
type memoKey struct {
	cand       *Side
	metric     int
	base, runs string
	rounds     int
	one        bool
}

// pairValues is runValues of metric i for both sides, base (s) first, drawn from one seeded
// generator as Compare always has; computed once per pair and set of runs, so that judging
// the same pair under several policies (an ablation) does not bootstrap it again.
func (s *Side) pairValues(cand *Side, i int, m Metric, br, cr []metrics.RunSummary, bb, cb map[int][]block, rounds int, one bool) ([]runValue, []runValue) {
	idx := func(rs []metrics.RunSummary) string {
		b := make([]byte, 0, 4*len(rs))
		for _, r := range rs {
			b = fmt.Appendf(b, "%d,", r.Run)
		}
		return string(b)
	}
	k := memoKey{cand: cand, metric: i, base: idx(br), runs: idx(cr), rounds: rounds, one: one}
	if v, ok := s.memo[k]; ok {
		return v[0], v[1]
	}
	rng := rand.New(rand.NewPCG(uint64(i+1), 0x5eed))
	bv, cv := runValues(m, br, bb, rounds, rng, one, false), runValues(m, cr, cb, rounds, rng, one, false)
	if s.memo == nil {
		s.memo = map[memoKey][2][]runValue{}
	}
	s.memo[k] = [2][]runValue{bv, cv}
	return bv, cv
}

// obs is what the bootstrap needs of one measured request. Latencies are ns; NaN = undefined.
type obs struct {
	sent, end       int64
	ok, good        bool
	ttft, tpot, e2e float64
	gaps            []float64 // ITL (chunk): the gaps between consecutive content events
	// ttfts, tpots, e2es hold ttft, tpot, e2e as zero or one values, made once so that the
	// bootstrap's thousands of passes allocate nothing per request
	ttfts, tpots, e2es []float64
	out                int // output tokens (completed requests)
	// level is the request's contention level (markContention): how many other requests'
	// TTFT intervals overlapped its own, capped at contendedLevel; −1 when unknown
	level int
}

// NewSide starts a side with the records file's header. opt sets the SLOs for goodput.
func NewSide(h *record.Header, opt metrics.Options) *Side {
	return &Side{Header: h, opt: opt, runs: metrics.NewRuns(h, opt), reqs: map[int][]obs{}, spans: map[int][]span{}}
}

// Add adds one record. The record may be reused by the caller afterwards.
func (s *Side) Add(r *record.Record) {
	s.summaries = nil
	s.runs.Add(r)
	if r.Sent != 0 && r.OK() {
		if t := metrics.PerRequest(r).TTFT; t.OK {
			s.spans[r.Run] = append(s.spans[r.Run], span{r.Sent, r.Sent + int64(t.V)})
		}
	}
	if !r.Measured() {
		return
	}
	sent, end, ok := metrics.Span(r)
	if !ok {
		return
	}
	o := obs{sent: sent, end: end, ok: r.OK(), ttft: math.NaN(), tpot: math.NaN(), e2e: math.NaN(), level: -1}
	if o.ok {
		m := metrics.PerRequest(r)
		o.ttft, o.tpot, o.e2e = opt(m.TTFT), opt(m.TPOT), opt(m.E2E)
		o.out = m.OutputTokens
		o.ttfts, o.tpots, o.e2es = one(o.ttft), one(o.tpot), one(o.e2e)
		o.good = s.meetsSLO(m)
		// ITL (chunk) = the gaps between consecutive content events (docs/design/METRICS.md)
		for i := 1; i < len(r.Events); i++ {
			o.gaps = append(o.gaps, float64(r.Events[i].T-r.Events[i-1].T))
		}
	}
	s.reqs[r.Run] = append(s.reqs[r.Run], o)
}

func opt(o metrics.Opt) float64 {
	if !o.OK {
		return math.NaN()
	}
	return o.V
}

// meetsSLO applies the goodput objectives to one completed request, by the rules of
// metrics.SLO (inclusive thresholds; TTFT and E2E must exist; TPOT and ITL vacuous without).
func (s *Side) meetsSLO(m metrics.RequestMetrics) bool {
	slo := s.opt.SLO
	within := func(o metrics.Opt, limit int64, vacuous bool) bool {
		if limit <= 0 {
			return true
		}
		if !o.OK {
			return vacuous
		}
		return o.V <= float64(limit)
	}
	return within(m.TTFT, int64(slo.TTFT), false) && within(m.TPOT, int64(slo.TPOT), true) &&
		within(m.ITLMax, int64(slo.ITL), true) && within(m.E2E, int64(slo.E2E), false)
}

// blocksByRun is each run's time windows (runBlocks), by run index.
func (s *Side) blocksByRun(runs []metrics.RunSummary, k *knobs) map[int][]block {
	out := map[int][]block{}
	for _, r := range runs {
		markContention(s.reqs[r.Run], s.spans[r.Run], contendedLevel)
		out[r.Run] = runBlocks(s.reqs[r.Run])
	}
	return out
}

// Runs returns every run's summary, in Run order, labelled as metrics.Runs labels them; nil
// when no record was added (metrics.Runs would report one empty run, which a comparison
// must not count as a run).
func (s *Side) Runs() []metrics.RunSummary {
	if len(s.runs.Indexes()) == 0 {
		return nil
	}
	if s.summaries == nil {
		s.summaries = s.runs.Summaries()
	}
	return slices.Clone(s.summaries)
}
