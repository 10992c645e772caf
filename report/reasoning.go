package report

import (
	"fmt"
	"strconv"

	"servebench/metrics"
)

// Reasoning models in the reports (metrics.Reasoning): four rows of the latency table after
// TTFT, a line of token counts in text and Markdown, and the keys below in JSON. A run in
// which no request reasoned shows none of them.

// reasoningRows are the latency-table rows of a reasoning run: time to first output
// (answer) token, the reasoning time before it, and ITL in each phase. With on false (no
// run of the page reasoned) there are none.
func reasoningRows(s *metrics.Summary, on bool) []row {
	if !on {
		return nil
	}
	var r metrics.Reasoning
	if s.Reasoning != nil {
		r = *s.Reasoning
	}
	return []row{{"TTFO (1st answer)", r.TTFO, 1e6}, {"reasoning time", r.ReasoningTime, 1e6},
		{"ITL (reasoning)", r.ITLReasoning, 1e6}, {"ITL (answer)", r.ITLAnswer, 1e6}}
}

// reasoningNote is the token line of a reasoning run; "" without reasoning.
func reasoningNote(s *metrics.Summary) string {
	r := s.Reasoning
	if r == nil {
		return ""
	}
	note := fmt.Sprintf("%d of %d requests reasoned", r.Requests, r.Of)
	if r.NoAnswer > 0 {
		note += fmt.Sprintf(" (%d ended before any answer: no TTFO)", r.NoAnswer)
	}
	return note + fmt.Sprintf("; reasoning tokens %d (per request mean %s, p50 %s), answer tokens %d (mean %s, p50 %s); TTFT counts the first token of either kind, TTFO the first answer token",
		r.TotalReasoning, num(r.ReasoningTokens, r.ReasoningTokens.Mean, 1), percentileIn(r.ReasoningTokens, 50, 1),
		r.TotalAnswer, num(r.AnswerTokens, r.AnswerTokens.Mean, 1), percentileIn(r.AnswerTokens, 50, 1))
}

// jsonReasoning writes a reasoning run's keys: vLLM's pattern for the distributions (ttfo
// after AIPerf's time_to_first_output_token; reasoning_time; itl_reasoning, itl_answer; the
// per-request reasoning_tokens and answer_tokens) and AIPerf's total reasoning token count.
// Nothing for a run without reasoning.
func jsonReasoning(o *object, s *metrics.Summary) {
	r := s.Reasoning
	if r == nil {
		return
	}
	o.set("reasoning_requests", r.Requests)
	o.set("no_answer_requests", r.NoAnswer)
	o.set("total_reasoning_tokens", r.TotalReasoning)
	o.set("total_answer_tokens", r.TotalAnswer)
	o.set("reasoning_token_sources", r.TokenSources)
	for _, d := range []struct {
		name string
		st   metrics.Stat
		unit string
		div  float64
	}{
		{"ttfo", r.TTFO, "_ms", 1e6}, {"reasoning_time", r.ReasoningTime, "_ms", 1e6},
		{"itl_reasoning", r.ITLReasoning, "_ms", 1e6}, {"itl_answer", r.ITLAnswer, "_ms", 1e6},
		{"reasoning_tokens", r.ReasoningTokens, "", 1}, {"answer_tokens", r.AnswerTokens, "", 1},
	} {
		statKeys(o, d.name, d.unit, d.st, s.Percentiles, d.div)
	}
}

// reasoningSummaryRows are the HTML summary table's reasoning token counts, when any run of
// the page reasoned: total reasoning and answer tokens, and the requests whose output ended
// before any answer.
func reasoningSummaryRows(runs []Run) []tableRow {
	on := false
	for _, r := range runs {
		on = on || r.Summary.Reasoning != nil
	}
	if !on {
		return nil
	}
	figs := []struct {
		name string
		v    func(r *metrics.Reasoning) int64
	}{
		{"reasoning tokens", func(r *metrics.Reasoning) int64 { return r.TotalReasoning }},
		{"answer tokens", func(r *metrics.Reasoning) int64 { return r.TotalAnswer }},
		{"requests with no answer", func(r *metrics.Reasoning) int64 { return int64(r.NoAnswer) }},
	}
	var rows []tableRow
	for _, f := range figs {
		row := tableRow{Name: f.name}
		var vals []*float64
		for _, r := range runs {
			var v *float64
			if r.Summary.Reasoning != nil {
				v = ptr(float64(f.v(r.Summary.Reasoning)))
			}
			vals = append(vals, v)
			row.Cells = append(row.Cells, optf(v, 0))
		}
		if len(vals) == 2 {
			row.Delta = delta(vals[0], vals[1])
		}
		rows = append(rows, row)
	}
	return rows
}

// csvReasoning appends a request's reasoning cells (the last columns of CSV): its TTFO (its
// TTFT when it did not reason; empty when no answer came), and its reasoning and answer
// tokens.
func csvReasoning(row []string, m metrics.RequestMetrics) []string {
	return append(row, optMS(m.TTFO), strconv.Itoa(m.ReasoningTokens), strconv.Itoa(m.OutputTokens-m.ReasoningTokens))
}
