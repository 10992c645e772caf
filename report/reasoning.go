package report

import (
	"fmt"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// Reasoning models in the reports (metrics.Reasoning): four rows of the latency table after
// TTFT, and a section: a line of token counts, and the keys below in JSON. A run in which no
// request reasoned shows none of them.
func init() { RegisterSection("reasoning", 5, reasoningSection) }

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

// reasoningSection is a reasoning run's token line, and in JSON its keys: vLLM's pattern for
// the distributions (ttfo after AIPerf's time_to_first_output_token; reasoning_time;
// itl_reasoning, itl_answer; the per-request reasoning_tokens and answer_tokens) and AIPerf's
// total reasoning token count. Nothing for a run without reasoning.
func reasoningSection(_ *record.Header, s *metrics.Summary) *Section {
	r := s.Reasoning
	if r == nil {
		return nil
	}
	o := &object{}
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
	return &Section{Name: "reasoning", Title: "Reasoning", Lines: []Line{{"reasoning", reasoningNote(s)}}, JSON: o.fields()}
}

// csvReasoning appends a request's reasoning cells (the last columns of CSV): its TTFO (its
// TTFT when it did not reason; empty when no answer came), and its reasoning and answer
// tokens.
func csvReasoning(row []string, m metrics.RequestMetrics) []string {
	return append(row, optMS(m.TTFO), strconv.Itoa(m.ReasoningTokens), strconv.Itoa(m.OutputTokens-m.ReasoningTokens))
}
