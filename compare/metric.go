package compare

import (
	"math"
	"slices"

	"servebench/metrics"
	"servebench/stat"
)

// Metric is one key figure compared between runs.
type Metric struct {
	Name  string // e.g. "TTFT p50"
	Unit  string // "ms", "tok/s", "req/s"
	Lower bool   // lower is better (latencies); otherwise higher is better (throughput)
	// Tail is a tail percentile (p99), judged at Options.TailThreshold and, at one run a
	// side, not judged at all.
	Tail bool
	// Pct is the percentile of a latency (50, 99); 0 for a rate.
	Pct float64
	// FromSummary is the run-level value of a run (in Unit); ok is false when undefined.
	FromSummary func(*metrics.Summary) (float64, bool)
	// fromBlocks computes the figure from the requests of resampled time blocks (bootstrap).
	fromBlocks func(reqs []*obs, seconds float64) (float64, bool)
	// orderVar, for a percentile, is a floor under its within-run variance on the log scale
	// from order statistics (orderStatVar); nil for rates.
	orderVar func(reqs []*obs) float64
	// perRequest and levelStat, on a figure that contention moves (TTFT p50, E2E p50, the
	// throughputs), are for the comparison at equal contention (contention.go): perRequest is
	// a request's value (ns; NaN or ≤ 0 undefined: the request takes no part), levelStat the
	// figure over one contention level's requests of a run; nil otherwise.
	perRequest func(o *obs) float64
	levelStat  func(reqs []*obs) float64
	// levelUnit is the unit of levelStat's figure.
	levelUnit string
	// mixPct, on a tail (TTFT p99, E2E p99), makes the figure at equal contention the
	// percentile of the run's requests reweighted to the common mix of levels (mixQuantile)
	// instead of a combination of per-level figures: a level of 10 requests has no p99.
	mixPct float64
	// completedOnly: the figure at equal contention is computed only when every measured
	// request of every run completed (perStream).
	completedOnly bool
}

// Key figures (the list): TTFT p50/p99, ITL p50/p99, TPOT p50, E2E p50/p99, output
// and request throughput, and goodput when SLOs are given.
var (
	TTFTp50   = contentionMoves(latency("TTFT p50", 50, func(s *metrics.Summary) metrics.Stat { return s.TTFT }, func(o *obs) []float64 { return o.ttfts }), func(o *obs) float64 { return o.ttft })
	TTFTp99   = contentionTail(latency("TTFT p99", 99, func(s *metrics.Summary) metrics.Stat { return s.TTFT }, func(o *obs) []float64 { return o.ttfts }), func(o *obs) float64 { return o.ttft })
	ITLp50    = latency("ITL p50", 50, func(s *metrics.Summary) metrics.Stat { return s.ITLChunk }, func(o *obs) []float64 { return o.gaps })
	ITLp99    = latency("ITL p99", 99, func(s *metrics.Summary) metrics.Stat { return s.ITLChunk }, func(o *obs) []float64 { return o.gaps })
	TPOTp50   = latency("TPOT p50", 50, func(s *metrics.Summary) metrics.Stat { return s.TPOT }, func(o *obs) []float64 { return o.tpots })
	E2Ep50    = contentionMoves(latency("E2E p50", 50, func(s *metrics.Summary) metrics.Stat { return s.E2E }, func(o *obs) []float64 { return o.e2es }), func(o *obs) float64 { return o.e2e })
	E2Ep99    = contentionTail(latency("E2E p99", 99, func(s *metrics.Summary) metrics.Stat { return s.E2E }, func(o *obs) []float64 { return o.e2es }), func(o *obs) float64 { return o.e2e })
	OutputTPS = perStream(rate("output throughput", "tok/s", func(s *metrics.Summary) *float64 { return s.OutputThroughput }, func(o *obs) float64 { return float64(o.out) }), func(o *obs) float64 { return float64(o.out) })
	ReqPS     = perStream(rate("request throughput", "req/s", func(s *metrics.Summary) *float64 { return s.RequestThroughput }, func(o *obs) float64 { return b2f(o.ok) }), func(o *obs) float64 { return b2f(o.ok) })
	Goodput   = rate("goodput", "req/s", func(s *metrics.Summary) *float64 { return s.RequestGoodput }, func(o *obs) float64 { return b2f(o.ok && o.good) })
)

// KeyMetrics is the list compared, in display order (goodput only when SLOs are set).
var KeyMetrics = []Metric{TTFTp50, TTFTp99, ITLp50, ITLp99, TPOTp50, E2Ep50, E2Ep99, OutputTPS, ReqPS}

// contentionMoves marks a median as one the arrivals' contention moves: it is also compared at
// equal contention (contention.go), from val, each request's value in ns; a level's figure is
// the median of its requests' values, in ms.
func contentionMoves(m Metric, val func(*obs) float64) Metric {
	m.perRequest, m.levelUnit = val, m.Unit
	m.levelStat = func(reqs []*obs) float64 {
		xs := make([]float64, len(reqs))
		for i, o := range reqs {
			xs[i] = val(o)
		}
		return stat.SelectQuantile(xs, 50) / 1e6
	}
	return m
}

// contentionTail marks a tail percentile as one the arrivals' contention moves: when a closed
// loop's users fall into one cohort, one engine step prefills all their prompts at once and
// every TTFT of the cohort waits for it (figures: docs/compare-evidence.md, "Over HTTP"). At
// equal contention its figure is the percentile of the run's requests with every level
// weighted to the common mix (mixQuantile).
func contentionTail(m Metric, val func(*obs) float64) Metric {
	m.perRequest, m.levelUnit, m.mixPct = val, m.Unit, 99
	return m
}

// perStream marks a throughput as one the arrivals' contention moves: in a closed loop every
// user's request takes TTFT + decode, and how many prefills the server merged (the loop's
// phase) moves both, so the runs' throughput spreads with the phase. At equal contention
// (contention.go) a level's figure is its requests' count (tokens, or 1 a completed request)
// per second of request time, Σ count / Σ E2E: the rate one stream got at that contention.
// Times the users it is the closed loop's throughput (Little's law, X = L / W), so a server
// that decodes or prefills 10% slower moves it 10%, and the mix of levels does not move it.
func perStream(m Metric, count func(*obs) float64) Metric {
	m.perRequest = func(o *obs) float64 { return o.e2e }
	m.levelUnit = m.Unit + " per stream"
	// a failed request has no contention level and so no place in any level's request time:
	// with failures the figure would show the completed requests' rate only and hide the
	// throughput the failures cost, so it is not computed then
	m.completedOnly = true
	m.levelStat = func(reqs []*obs) float64 {
		var n, sec float64
		for _, o := range reqs {
			n += count(o)
			sec += o.e2e / 1e9
		}
		return n / sec
	}
	return m
}

func one(v float64) []float64 {
	if math.IsNaN(v) {
		return nil
	}
	return []float64{v}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// latency is a percentile of a latency distribution, in ms.
func latency(name string, p float64, stat func(*metrics.Summary) metrics.Stat, vals func(*obs) []float64) Metric {
	return Metric{Name: name, Unit: "ms", Lower: true, Tail: p >= 99, Pct: p,
		FromSummary: func(s *metrics.Summary) (float64, bool) {
			st := stat(s)
			if p == 50 {
				return st.Median / 1e6, st.Valid()
			}
			v, ok := st.Percentile(p)
			return v / 1e6, ok
		},
		fromBlocks: func(reqs []*obs, _ float64) (float64, bool) {
			n := 0
			for _, o := range reqs {
				n += len(vals(o))
			}
			if n == 0 {
				return 0, false
			}
			xs := make([]float64, 0, n)
			for _, o := range reqs {
				xs = append(xs, vals(o)...)
			}
			return selectQuantile(xs, p) / 1e6, true
		},
		orderVar: func(reqs []*obs) float64 {
			var xs []float64
			for _, o := range reqs {
				xs = append(xs, vals(o)...)
			}
			return orderStatVar(xs, p)
		}}
}

// orderStatVar is the variance on the log scale that the distribution-free 95% interval of the
// p-th percentile implies: the interval runs between the order statistics of ranks
// np ∓ 1.96·√(np(1 − p)) (the binomial count of values below the percentile), and its width
// in logs over 2·1.96 is a standard deviation. It floors the block bootstrap's variance, which
// for a tail percentile of few values is too small: resampling can only reshuffle the few
// values above it (a p99 of 96 requests moves among the top four), so it misses how far the
// next run's top values may fall. +Inf when the values cannot bound the percentile from
// above; 0 when fewer than 2 values or a value is not positive.
func orderStatVar(xs []float64, p float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	q := p / 100
	h := 1.96 * math.Sqrt(n*q*(1-q))
	lo := min(max(int(math.Floor(n*q-h)), 1), len(s)) - 1 // ranks are 1-based
	hi := int(math.Ceil(n*q+h)) + 1
	if hi > len(s) {
		// the interval's upper rank lies beyond the largest value: no run of this size bounds
		// the percentile from above (a p99 needs about 600 values)
		return math.Inf(1)
	}
	hi = max(hi, 1) - 1
	if s[lo] <= 0 || s[hi] <= 0 {
		return 0
	}
	sd := (math.Log(s[hi]) - math.Log(s[lo])) / (2 * 1.96)
	return sd * sd
}

// selectQuantile is metrics.Quantile of unsorted xs, which it reorders: a selection in linear
// time, not a sort, because the within-run bootstrap takes a percentile of tens of thousands
// of ITL gaps hundreds of times.
func selectQuantile(xs []float64, p float64) float64 { return stat.SelectQuantile(xs, p) }

// rate is a count per second of window: Σ count(request) / Σ block seconds.
func rate(name, unit string, sum func(*metrics.Summary) *float64, count func(*obs) float64) Metric {
	return Metric{Name: name, Unit: unit,
		FromSummary: func(s *metrics.Summary) (float64, bool) {
			if v := sum(s); v != nil {
				return *v, true
			}
			return 0, false
		},
		fromBlocks: func(reqs []*obs, seconds float64) (float64, bool) {
			if seconds <= 0 {
				return 0, false
			}
			var n float64
			for _, o := range reqs {
				n += count(o)
			}
			return n / seconds, true
		}}
}
