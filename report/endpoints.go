package report

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The view of a run against a non-generating API (embeddings, rerank: metrics.Pooling).
// Nothing streams, so TTFT, ITL, TPOT, decode rate, output throughput and the steady-state
// check (which reads output throughput, TTFT and ITL) do not exist for it: each formatter
// hands such a summary to this file, which prints the run's latency (sent → done), request
// and input-token throughput and batch size instead, and none of the streaming figures.

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

// textPooling is Text for a pooling run.
func textPooling(w io.Writer, h *record.Header, s *metrics.Summary) error {
	p := s.Pooling
	var b, hb strings.Builder
	textHeader(&hb, h, s)
	b.WriteString(outLength.ReplaceAllString(hb.String(), " tokens a request"))
	b.WriteString("\n")
	for _, v := range runVerdicts(s) {
		line(&b, v.Label, "%s", v.Text)
	}
	b.WriteString("\n")
	line(&b, "requests", "%d completed, %d failed (%.1f%%), %d warmup discarded",
		s.Completed, s.Failed, fin(100*s.FailureRate), s.WarmupDiscarded)
	if s.Window > 0 {
		line(&b, "window", "%.3f s (first sent → last done)", s.Window.Seconds())
	} else {
		line(&b, "window", "%s", dash)
	}
	noun := poolingNoun(h)
	line(&b, "throughput", "%s req/s   input %s tok/s   %s %s/s", nonZero(p.RequestThroughput, 2, s),
		nonZero(p.InputThroughput, 1, s), nonZero(p.InputsPerSecond, 1, s), noun)
	line(&b, "tokens", "input %d (sources: %s), %d %s", p.InputTokens, sources(s.PromptTokenSources), p.Inputs, noun)
	line(&b, "batch", "%s %s a request (min %s, max %s); prompt tokens a request p50 %s",
		statNum(p.BatchSize, p.BatchSize.Mean, "%.4g"), noun, statNum(p.BatchSize, p.BatchSize.Min, "%.0f"),
		statNum(p.BatchSize, p.BatchSize.Max, "%.0f"), statNum(p.PromptTokens, p.PromptTokens.Median, "%.0f"))
	if s.Failed > 0 {
		line(&b, "failures", "%s", metrics.ClassList(s.Errors))
	}
	b.WriteString("\n")
	ps := tablePercentiles(s)
	fmt.Fprintf(&b, "%-19s %8s %10s", "latency (ms)", "n", "mean")
	for _, q := range ps {
		fmt.Fprintf(&b, " %10s", "p"+pctName(q))
	}
	fmt.Fprintf(&b, " %10s\n", "max")
	for _, r := range poolingRows(p, s) {
		fmt.Fprintf(&b, "%-19s %8d %10s", r.name, r.st.N, num(r.st, r.st.Mean, r.scale))
		for _, q := range ps {
			v, _ := r.st.Percentile(q)
			fmt.Fprintf(&b, " %10s", num(r.st, v, r.scale))
		}
		fmt.Fprintf(&b, " %10s\n", num(r.st, r.st.Max, r.scale))
	}
	if rows := poolingServerRows(s); len(rows) > 0 {
		b.WriteString("\nserver during the window (its own Prometheus figures)\n")
		for _, r := range rows {
			line(&b, r.Label, "%s", r.Text)
		}
	}
	textNotes(&b, s)
	_, err := io.WriteString(w, b.String())
	return err
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

// markdownPooling is Markdown for a pooling run.
func markdownPooling(w io.Writer, h *record.Header, s *metrics.Summary) error {
	p := s.Pooling
	var b, hb strings.Builder
	mdHeader(&hb, h, s)
	b.WriteString(outLength.ReplaceAllString(hb.String(), " tokens a request"))
	for _, v := range runVerdicts(s) {
		fmt.Fprintf(&b, "**%s**: %s  \n", v.Label, mdEsc(v.Text))
	}
	b.WriteString("\n")
	noun := poolingNoun(h)
	window := dash
	if s.Window > 0 {
		window = fmt.Sprintf("%.3f", s.Window.Seconds())
	}
	rows := [][2]string{
		{"completed / failed", fmt.Sprintf("%d / %d (%.1f%%)", s.Completed, s.Failed, fin(100*s.FailureRate))},
		{"window (s)", window},
		{"requests/s", nonZero(p.RequestThroughput, 2, s)},
		{"input tokens/s", nonZero(p.InputThroughput, 1, s)},
		{noun + "/s", nonZero(p.InputsPerSecond, 1, s)},
		{"input tokens / " + noun, fmt.Sprintf("%d / %d", p.InputTokens, p.Inputs)},
		{noun + " a request (mean, min, max)", fmt.Sprintf("%s, %s, %s", statNum(p.BatchSize, p.BatchSize.Mean, "%.4g"),
			statNum(p.BatchSize, p.BatchSize.Min, "%.0f"), statNum(p.BatchSize, p.BatchSize.Max, "%.0f"))},
	}
	b.WriteString("| throughput | |\n|---|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	b.WriteString("\n")
	ps := tablePercentiles(s)
	b.WriteString("| latency (ms) | n | mean |")
	for _, q := range ps {
		b.WriteString(" p" + pctName(q) + " |")
	}
	b.WriteString(" max |\n|---|--:|--:|" + strings.Repeat("--:|", len(ps)) + "--:|\n")
	for _, r := range poolingRows(p, s) {
		fmt.Fprintf(&b, "| %s | %d | %s |", r.name, r.st.N, num(r.st, r.st.Mean, r.scale))
		for _, q := range ps {
			v, _ := r.st.Percentile(q)
			fmt.Fprintf(&b, " %s |", num(r.st, v, r.scale))
		}
		fmt.Fprintf(&b, " %s |\n", num(r.st, r.st.Max, r.scale))
	}
	b.WriteString("\n")
	if rows := poolingServerRows(s); len(rows) > 0 {
		b.WriteString("**Server during the window** (its own Prometheus figures)\n\n| | |\n|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s |\n", mdEsc(r.Label), mdEsc(r.Text))
		}
		b.WriteString("\n")
	}
	mdFailures(&b, s)
	mdNotes(&b, s)
	_, err := io.WriteString(w, b.String())
	return err
}

// streamingKey reports whether a JSON summary key is a figure of streamed output.
func streamingKey(k string) bool {
	for _, base := range []string{"ttft", "tpot", "itl", "e2el", "decode_rate", "stream"} {
		if k == "count_"+base || strings.HasSuffix(k, "_"+base+"_ms") || strings.HasSuffix(k, "_"+base+"_tok_s") ||
			strings.HasPrefix(k, "count_"+base+"_") || strings.Contains(k, "_"+base+"_") {
			return true
		}
	}
	switch k {
	case "output_throughput", "total_output_tokens", "max_output_tokens_per_s", "max_output_tokens_per_s_unknown_events",
		"short_outputs", "itl_token_requests", "itl_token_skipped", "ttft_split", "steady_state", "good_requests",
		"request_goodput", "slo", "slo_attainment_pct", "total_token_throughput":
		return true
	}
	return false
}

// jsonPooling replaces the streaming figures of a pooling run's JSON summary with its own:
// "pooling" holds metrics.Pooling, and latency_ms, latency_from_dispatch_ms and batch_size
// are written as distributions (mean_, median_, std_, pNN_, min_, max_) like every other.
func jsonPooling(o *object, s *metrics.Summary) {
	if s.Pooling == nil {
		return
	}
	keys, vals := o.keys[:0:0], o.vals[:0:0]
	for i, k := range o.keys {
		if !streamingKey(k) {
			keys, vals = append(keys, k), append(vals, o.vals[i])
		}
	}
	o.keys, o.vals = keys, vals
	p := s.Pooling
	o.set("input_throughput", p.InputThroughput)
	o.set("inputs_per_second", p.InputsPerSecond)
	o.set("total_inputs", p.Inputs)
	statKeys(o, "latency", "_ms", p.Latency, s.Percentiles, 1e6)
	statKeys(o, "latency_from_dispatch", "_ms", p.LatencyFromDispatch, s.Percentiles, 1e6)
	statKeys(o, "batch_size", "", p.BatchSize, s.Percentiles, 1)
	o.set("pooling", p)
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
