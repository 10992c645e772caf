package report

import (
	"fmt"
	"regexp"
	"strings"

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

// outLength matches the output length of a header's load line: a pooling run asks for none.
var outLength = regexp.MustCompile(` / out [^,\n]*? tokens`)

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

// poolingPage fits the HTML page to runs that are all pooling runs: their summary and
// latency tables, the steady verdict replaced, and no charts (each chart plots TTFT, ITL,
// E2E or token rates). A page mixing a pooling run with a generating one is left as it is.
func poolingPage(p *page, runs []Run) {
	for _, r := range runs {
		if r.Summary.Pooling == nil || r.sweep != nil {
			return
		}
	}
	p.Plots = nil
	noun := poolingNoun(runs[0].Header)
	figs := []struct {
		name string
		v    func(*metrics.Summary) *float64
		prec int
	}{
		{"completed", func(s *metrics.Summary) *float64 { return ptr(float64(s.Completed)) }, 0},
		{"failed", func(s *metrics.Summary) *float64 { return ptr(float64(s.Failed)) }, 0},
		{"window (s)", windowS, 3},
		{"requests/s", func(s *metrics.Summary) *float64 { return ptr(s.Pooling.RequestThroughput) }, 2},
		{"input tokens/s", func(s *metrics.Summary) *float64 { return ptr(s.Pooling.InputThroughput) }, 1},
		{noun + "/s", func(s *metrics.Summary) *float64 { return ptr(s.Pooling.InputsPerSecond) }, 1},
		{noun + " a request (mean)", func(s *metrics.Summary) *float64 { return statPtr(s.Pooling.BatchSize) }, 2},
		{"input tokens", func(s *metrics.Summary) *float64 { return ptr(float64(s.Pooling.InputTokens)) }, 0},
	}
	p.Summary = nil
	for _, f := range figs {
		row := tableRow{Name: f.name}
		var vals []*float64
		for _, r := range runs {
			v := f.v(r.Summary)
			if r.Summary.Window <= 0 && f.prec > 0 && f.name != "window (s)" {
				v = nil
			}
			vals = append(vals, v)
			row.Cells = append(row.Cells, optf(v, f.prec))
		}
		if len(vals) == 2 {
			row.Delta = delta(vals[0], vals[1])
		}
		p.Summary = append(p.Summary, row)
	}
	var ps []float64
	if len(p.Pcts) > 0 {
		ps = tablePercentiles(runs[0].Summary)
	}
	p.Latency = nil
	for k := range poolingRows(runs[0].Summary.Pooling, runs[0].Summary) {
		for i, r := range runs {
			tr := poolingRows(r.Summary.Pooling, r.Summary)[k]
			lr := latencyRow{Name: tr.name, Run: r.Label, Class: fmt.Sprintf("c%d", i), N: fmt.Sprint(tr.st.N),
				Mean: num(tr.st, tr.st.Mean, tr.scale), Max: num(tr.st, tr.st.Max, tr.scale), First: i == 0, Span: len(runs)}
			for _, q := range ps {
				v, _ := tr.st.Percentile(q)
				lr.Pcts = append(lr.Pcts, num(tr.st, v, tr.scale))
			}
			p.Latency = append(p.Latency, lr)
		}
	}
}

// statPtr is st's mean, or nil for an empty set.
func statPtr(st metrics.Stat) *float64 {
	if !st.Valid() {
		return nil
	}
	return ptr(st.Mean)
}

// poolingServerRows are the server section's lines without those about streaming (the
// server's TTFT and ITL histograms set beside ours, the TTFT attribution), which a pooling
// run has no figure of its own to compare with.
func poolingServerRows(s *metrics.Summary) []labeled {
	var out []labeled
	for _, r := range serverRows(s) {
		if strings.Contains(r.Label, "TTFT") || strings.Contains(r.Label, "ITL") || r.Label == "attribution" ||
			strings.Contains(r.Text, "TTFT") || strings.Contains(r.Text, "ITL") {
			continue
		}
		out = append(out, r)
	}
	return out
}
