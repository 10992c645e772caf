package report

import (
	"fmt"

	"servebench/metrics"
	"servebench/record"
)

// The view of a run against a non-generating API (embeddings, rerank: metrics.Pooling).
// Nothing streams, so TTFT, ITL, TPOT, decode rate, output throughput and the steady-state
// check (which reads output throughput, TTFT and ITL) do not exist for it: instead
// its core sections (summarydoc.go) hold the run's latency (sent → done), request and
// input-token throughput and batch size, and none of the streaming figures.

// poolingNoun is what one input of the run's API is called.
func poolingNoun(h *record.Header) string {
	if h != nil && h.Target.API == "rerank" {
		return "documents"
	}
	return "inputs"
}

// poolingSteady is the steady line of a pooling run's verdict block: why the check was not
// made.
func poolingSteady() verdictLine {
	return verdictLine{Label: "steady", Text: "not checked: an embeddings or rerank run streams nothing for the check to read", Class: "unsure"}
}

// poolingRows are the latency rows of a pooling run, in ns.
func poolingRows(p *metrics.Pooling, s *metrics.Summary) []row {
	return []row{{"latency", p.Latency, 1e6}, {"from dispatch", p.LatencyFromDispatch, 1e6}, {"queue", s.Queue, 1e6}}
}

// nonZero formats a throughput, or a dash when the window is empty.
func nonZero(v float64, prec int, s *metrics.Summary) string {
	if s.Window <= 0 {
		return dash
	}
	return fmt.Sprintf("%.*f", prec, fin(v))
}

// statNum formats v of st, or a dash for an empty set.
func statNum(st metrics.Stat, v float64, format string) string {
	if !st.Valid() {
		return dash
	}
	return fmt.Sprintf(format, fin(v))
}

// poolingPlots leaves the charts out of a page whose runs are all pooling runs: each chart
// plots TTFT, ITL, E2E or token rates. A page mixing a pooling run with a generating one keeps
// them.
func poolingPlots(p *page, runs []Run) {
	for _, r := range runs {
		if r.Summary.Pooling == nil || r.sweep != nil {
			return
		}
	}
	p.Plots = nil
}
