package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// A staged run (run --stages) gets a table of its figures per load stage in text, JSON, HTML
// and Markdown; nothing for any other run.

// stageHead are the per-stage table's columns.
var stageHead = []string{"stage", "load", "completed", "failed", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "ITL p50", "E2E p50"}

// stageRows are the per-stage table's rows: latencies in ms, a dash for what is undefined.
func stageRows(s *metrics.Summary) [][]string {
	var rows [][]string
	for _, st := range s.Stages {
		m := st.Summary
		rows = append(rows, []string{fmt.Sprint(st.Index + 1), st.Load.String(), fmt.Sprint(m.Completed), fmt.Sprint(m.Failed),
			optf(m.RequestThroughput, 2), optf(m.OutputThroughput, 1), median(m.TTFT), msP(m.TTFT, 99),
			median(m.TPOT), median(m.ITLChunk), median(m.E2E)})
	}
	return rows
}

// median is a Stat's p50 in ms, or a dash for an empty set.
func median(st metrics.Stat) string {
	if !st.Valid() {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(st.Median/1e6))
}

// stageNote says what the table's figures are.
const stageNote = "per load stage, by the stage each request was sent in; latencies in ms; each stage's window runs from its first request sent to its last done"

// textStages writes the per-stage table.
func textStages(b *strings.Builder, s *metrics.Summary) {
	if len(s.Stages) == 0 {
		return
	}
	b.WriteString("\nstages\n")
	tw := tabwriter.NewWriter(b, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(stageHead, "\t")+"\t")
	for _, r := range stageRows(s) {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(b, "(%s)\n", stageNote)
}

// jsonStages adds the per-stage figures under "stages", with vLLM's key names for each
// figure (request_throughput, median_ttft_ms, …) and the stage's load as vLLM names it
// (max_concurrency, request_rate).
func jsonStages(o *object, s *metrics.Summary) {
	if len(s.Stages) == 0 {
		return
	}
	var out []*object
	for _, st := range s.Stages {
		m := st.Summary
		so := &object{}
		so.set("stage", st.Index+1)
		if st.Load.Users > 0 {
			so.set("max_concurrency", st.Load.Users)
		} else {
			so.set("request_rate", st.Load.Rate)
		}
		so.set("duration_s", time.Duration(st.Load.Duration).Seconds())
		so.set("completed", m.Completed)
		so.set("failed", m.Failed)
		so.set("request_throughput", m.RequestThroughput)
		so.set("output_throughput", m.OutputThroughput)
		ps := []float64{99}
		statKeys(so, "ttft", "_ms", m.TTFT, ps, 1e6)
		statKeys(so, "tpot", "_ms", m.TPOT, ps, 1e6)
		statKeys(so, "itl", "_ms", m.ITLChunk, ps, 1e6)
		statKeys(so, "e2el", "_ms", m.E2E, ps, 1e6)
		out = append(out, so)
	}
	o.set("stages", out)
}

// stageBlocks are the HTML page's per-stage tables, one per run that has stages.
func stageBlocks(runs []Run) []sweepBlock {
	var out []sweepBlock
	for i, r := range runs {
		if r.Summary == nil || len(r.Summary.Stages) == 0 {
			continue
		}
		out = append(out, sweepBlock{Label: r.Label, Class: fmt.Sprintf("c%d", i), Unit: stageNote, Head: stageHead, Rows: stageRows(r.Summary)})
	}
	return out
}

// mdStages writes the per-stage table in Markdown.
func mdStages(b *strings.Builder, s *metrics.Summary) {
	if len(s.Stages) == 0 {
		return
	}
	b.WriteString("### Load stages\n\n| " + strings.Join(stageHead, " | ") + " |\n|" + strings.Repeat("---|", len(stageHead)) + "\n")
	for _, r := range stageRows(s) {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n" + stageNote + ".\n\n")
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
