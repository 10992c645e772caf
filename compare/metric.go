package compare

import (
	"math"
	"slices"

	"servebench/metrics"
)

// Metric is one key figure compared between runs.
type Metric struct {
	Name  string // e.g. "TTFT p50"
	Unit  string // "ms", "tok/s", "req/s"
	Lower bool   // lower is better (latencies); otherwise higher is better (throughput)
	// FromSummary is the run-level value of a run (in Unit); ok is false when undefined.
	FromSummary func(*metrics.Summary) (float64, bool)
	// fromBlocks computes the figure from the requests of resampled time blocks (bootstrap).
	fromBlocks func(reqs []*obs, seconds float64) (float64, bool)
}

// Key figures (the list): TTFT p50/p99, ITL p50/p99, TPOT p50, E2E p50/p99, output
// and request throughput, and goodput when SLOs are given.
var (
	TTFTp50   = latency("TTFT p50", 50, func(s *metrics.Summary) metrics.Stat { return s.TTFT }, func(o *obs) []float64 { return one(o.ttft) })
	TTFTp99   = latency("TTFT p99", 99, func(s *metrics.Summary) metrics.Stat { return s.TTFT }, func(o *obs) []float64 { return one(o.ttft) })
	ITLp50    = latency("ITL p50", 50, func(s *metrics.Summary) metrics.Stat { return s.ITLChunk }, func(o *obs) []float64 { return o.gaps })
	ITLp99    = latency("ITL p99", 99, func(s *metrics.Summary) metrics.Stat { return s.ITLChunk }, func(o *obs) []float64 { return o.gaps })
	TPOTp50   = latency("TPOT p50", 50, func(s *metrics.Summary) metrics.Stat { return s.TPOT }, func(o *obs) []float64 { return one(o.tpot) })
	E2Ep50    = latency("E2E p50", 50, func(s *metrics.Summary) metrics.Stat { return s.E2E }, func(o *obs) []float64 { return one(o.e2e) })
	E2Ep99    = latency("E2E p99", 99, func(s *metrics.Summary) metrics.Stat { return s.E2E }, func(o *obs) []float64 { return one(o.e2e) })
	OutputTPS = rate("output throughput", "tok/s", func(s *metrics.Summary) *float64 { return s.OutputThroughput }, func(o *obs) float64 { return float64(o.out) })
	ReqPS     = rate("request throughput", "req/s", func(s *metrics.Summary) *float64 { return s.RequestThroughput }, func(o *obs) float64 { return b2f(o.ok) })
	Goodput   = rate("goodput", "req/s", func(s *metrics.Summary) *float64 { return s.RequestGoodput }, func(o *obs) float64 { return b2f(o.ok && o.good) })
)

// KeyMetrics is the list compared, in display order (goodput only when SLOs are set).
var KeyMetrics = []Metric{TTFTp50, TTFTp99, ITLp50, ITLp99, TPOTp50, E2Ep50, E2Ep99, OutputTPS, ReqPS}

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
	return Metric{Name: name, Unit: "ms", Lower: true,
		FromSummary: func(s *metrics.Summary) (float64, bool) {
			st := stat(s)
			if p == 50 {
				return st.Median / 1e6, st.Valid()
			}
			v, ok := st.Percentile(p)
			return v / 1e6, ok
		},
		fromBlocks: func(reqs []*obs, _ float64) (float64, bool) {
			var xs []float64
			for _, o := range reqs {
				xs = append(xs, vals(o)...)
			}
			if len(xs) == 0 {
				return 0, false
			}
			slices.Sort(xs)
			return metrics.Quantile(xs, p) / 1e6, true
		}}
}

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
