package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// A staged run (run --stages) has a section of its figures per load stage: the breakdown by
// stage (metrics' "stage" key) with each stage's load from the header, in place of the
// generic breakdown table.
func init() { RegisterSection("stages", 20, stagesSection) }

// stageHead are the per-stage table's columns.
var stageHead = []string{"stage", "load", "completed", "failed", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "ITL p50", "E2E p50"}

// stagesSection is the per-stage table, and in JSON "stages" with vLLM's key names for each
// figure (request_throughput, median_ttft_ms, …) and the stage's load as vLLM names it
// (max_concurrency, request_rate).
func stagesSection(h *record.Header, s *metrics.Summary) *Section {
	b := s.BreakdownBy("stage")
	if b == nil || h == nil || h.Load == nil {
		return nil
	}
	sts := h.Load.Stages
	t := &Table{Head: stageHead, Note: b.Key.Note}
	var list []*object
	for _, g := range b.Groups {
		i, _ := strconv.Atoi(g.Value)
		if i < 1 || i > len(sts) {
			continue
		}
		ld, m := sts[i-1], g.Summary
		t.Rows = append(t.Rows, []string{g.Value, ld.String(), fmt.Sprint(m.Completed), fmt.Sprint(m.Failed),
			optf(m.RequestThroughput, 2), optf(m.OutputThroughput, 1), median(m.TTFT), msP(m.TTFT, 99),
			median(m.TPOT), median(m.ITLChunk), median(m.E2E)})
		so := &object{}
		so.set("stage", i)
		if ld.Users > 0 {
			so.set("max_concurrency", ld.Users)
		} else {
			so.set("request_rate", ld.Rate)
		}
		so.set("duration_s", time.Duration(ld.Duration).Seconds())
		so.set("completed", m.Completed)
		so.set("failed", m.Failed)
		so.set("request_throughput", m.RequestThroughput)
		so.set("output_throughput", m.OutputThroughput)
		ps := []float64{99}
		statKeys(so, "ttft", "_ms", m.TTFT, ps, 1e6)
		statKeys(so, "tpot", "_ms", m.TPOT, ps, 1e6)
		statKeys(so, "itl", "_ms", m.ITLChunk, ps, 1e6)
		statKeys(so, "e2el", "_ms", m.E2E, ps, 1e6)
		list = append(list, so)
	}
	return &Section{Name: "stages", Title: b.Key.Title, Heading: "stages", Tables: []*Table{t}, JSON: []Field{{"stages", list}}}
}

// median is a Stat's p50 in ms, or a dash for an empty set.
func median(st metrics.Stat) string {
	if !st.Valid() {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(st.Median/1e6))
}

// stagesLoad is a staged run's load in the load line: "3 stages: 2 users × 1s, 4 users × 1s,
// 8 users × 1s (closed loop)".
func stagesLoad(h *record.Header) string {
	sts := h.Load.Stages
	parts := make([]string, len(sts))
	for i, st := range sts {
		parts[i] = st.String()
	}
	kind := "closed loop"
	if sts[0].Users == 0 {
		kind = fmt.Sprintf("open loop, %v arrivals", h.Config["arrival"])
	}
	return fmt.Sprintf("%d stages: %s (%s)", len(sts), strings.Join(parts, ", "), kind)
}
