package report

import (
	"fmt"
	"math"
	"slices"

	"servebench/metrics"
	"servebench/record"
)

// row is one line of the latency table.
type row struct {
	name  string
	st    metrics.Stat
	scale float64 // divide values by this: 1e6 for ns → ms, 1 for rates
}

// tableRows are the rows of the latency table, in reading order; TTFT's parts follow TTFT
// where the server reported its prefill times.
func tableRows(s *metrics.Summary) []row {
	return tableRowsWith(s, s.TTFTSplit != nil, s.Reasoning != nil)
}

// tableRowsWith are the rows of the latency table, with TTFT's parts and the reasoning rows
// (reasoning.go) or without (a page of several runs shows them for all when any has them).
func tableRowsWith(s *metrics.Summary, split, reason bool) []row {
	rows := []row{{"TTFT", s.TTFT, 1e6}}
	if split {
		var sp metrics.TTFTSplit
		if s.TTFTSplit != nil {
			sp = *s.TTFTSplit
		}
		rows = append(rows, row{"TTFT: to headers", sp.ToHeaders, 1e6}, row{"TTFT: prefill (srv)", sp.Prefill, 1e6},
			row{"TTFT: rest", sp.Rest, 1e6})
	}
	rows = append(rows, reasoningRows(s, reason)...)
	return append(rows, []row{
		{"TTFT (first event)", s.TTFTFirstEvent, 1e6},
		{"TPOT", s.TPOT, 1e6},
		{"ITL (chunk)", s.ITLChunk, 1e6},
		{"ITL (token)", s.ITLToken, 1e6},
		{"E2E", s.E2E, 1e6},
		{"E2E incl. queue", s.E2EQueue, 1e6},
		{"queue", s.Queue, 1e6},
		{"decode tok/s/user", s.DecodeRate, 1},
	}...)
}

// TTFT taken apart (metrics.TTFTSplit): its rows follow TTFT in the latency table, and a
// section says what the parts are; in JSON "ttft_split", null where no server reported its
// prefill times, so every summary has the key.
func init() {
	RegisterSection("ttft-split", 1, func(_ *record.Header, s *metrics.Summary) *Section {
		if s.Pooling != nil {
			return nil // a run that streams nothing has no TTFT
		}
		sec := &Section{Name: "ttft-split", Title: "TTFT split", JSON: []Field{{"ttft_split", splitJSON(s)}}}
		if n := splitNote(s); n != "" {
			sec.Lines = []Line{{"ttft split", n}}
		}
		return sec
	})
}

// splitNote says what TTFT's parts are and how well they add up; "" without them.
func splitNote(s *metrics.Summary) string {
	sp := s.TTFTSplit
	if sp == nil {
		return ""
	}
	note := fmt.Sprintf("TTFT = to headers (sent → headers: the network, and the server's queue when it answers only once it starts the request, as llama.cpp does) + prefill (the server's own %s, %d of %d requests) + rest (the first token's way out)",
		sp.Source, sp.Requests, sp.Of)
	if r, ok := sp.Rest.Percentile(50); ok {
		note += fmt.Sprintf("; to headers + prefill is within %.2f ms of TTFT at p50", math.Abs(r)/1e6)
	}
	if sp.Overlap > 0 {
		note += fmt.Sprintf("; in %d requests to headers + prefill exceeded TTFT (by up to %.2f ms: the server's prefill clock started before its headers left), their rest counted as 0",
			sp.Overlap, sp.OverlapMax/1e6)
	}
	if p, ok := sp.Prefill.Percentile(50); ok && sp.Source == "timings.prompt_ms" {
		note += fmt.Sprintf("; server TTFT (llama.cpp timings, from its slot taking the request) p50 %.2f ms", p/1e6)
	}
	return note
}

// tablePercentiles are the percentile columns: p50, p90, p99 when the summary has them,
// otherwise the summary's own percentile set.
func tablePercentiles(s *metrics.Summary) []float64 {
	want := []float64{50, 90, 99}
	for _, p := range want {
		if !slices.Contains(s.Percentiles, p) {
			return s.Percentiles
		}
	}
	return want
}

// num formats a value of st in table units, or a dash for an empty set.
func num(st metrics.Stat, v, scale float64) string {
	if !st.Valid() {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(v/scale))
}

// msP formats percentile p of a nanosecond distribution in ms.
func msP(st metrics.Stat, p float64) string { return percentileIn(st, p, 1e6) }

// percentileIn formats percentile p of st divided by scale, or a dash for an empty set.
func percentileIn(st metrics.Stat, p, scale float64) string {
	v, ok := st.Percentile(p)
	if !ok {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(v/scale))
}

func msMax(st metrics.Stat) string { return num(st, st.Max, 1e6) }
