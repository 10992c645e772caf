package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// reasoningRecords are n requests of 10 events each, the first 6 reasoning only (3 ms apart,
// 20 ms TTFT), then 4 answer events 5 ms apart after a 9 ms gap; the last request stops
// while still reasoning.
func reasoningRecords(n int) []record.Record {
	var recs []record.Record
	for i := range n {
		sent := int64(1e9) + int64(i)*1e8
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent, Status: 200,
			OutputTokens: 10, OutputTokensSource: record.SourceServer, ReasoningEvents: 6, ReasoningTokens: 6, ReasoningTokensSource: record.SourceServer}
		t := sent + 20e6
		for k := range 10 {
			r.Events = append(r.Events, record.Event{T: t, N: 1})
			if k == 6 {
				r.FirstAnswer = t
			}
			if k < 5 {
				t += 3e6
			} else if k == 5 {
				t += 9e6
			} else {
				t += 5e6
			}
		}
		if i == n-1 {
			r.Events, r.OutputTokens, r.FirstAnswer = r.Events[:6], 6, 0
		}
		r.FirstEvent, r.Done = r.Events[0].T, t
		recs = append(recs, r)
	}
	return recs
}

// TestReasoningReports checks the reasoning figures in every format: the summary's values,
// the JSON keys, the text and Markdown lines, the HTML rows and the CSV cells.
func TestReasoningReports(t *testing.T) {
	recs := reasoningRecords(5)
	acc := metrics.NewAccumulator(metrics.Options{SLO: metrics.SLO{TTFO: 45e6}})
	for i := range recs {
		acc.Add(&recs[i])
	}
	s := acc.Summary()
	r := s.Reasoning
	if r == nil {
		t.Fatal("no reasoning section")
	}
	med := func(st metrics.Stat) float64 { v, _ := st.Percentile(50); return v }
	// TTFO = 20 + 5×3 + 9 = 44 ms; reasoning time 24 ms; ITL reasoning 3 ms, answer 9 and 5 ms.
	if r.Requests != 5 || r.NoAnswer != 1 || med(r.TTFO) != 44e6 || r.TTFO.N != 4 || med(r.ReasoningTime) != 24e6 ||
		med(r.ITLReasoning) != 3e6 || r.ITLAnswer.Max != 9e6 || med(r.ITLAnswer) != 5e6 || r.TotalReasoning != 30 || r.TotalAnswer != 16 {
		t.Fatalf("reasoning %+v", r)
	}
	if s.GoodRequests != 4 { // the request that never answered misses the TTFO objective
		t.Errorf("good requests %d, want 4", s.GoodRequests)
	}
	var js bytes.Buffer
	if err := JSON(&js, header(true), s); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	slo, _ := m["slo"].(map[string]any)
	if m["median_ttfo_ms"] != 44.0 || m["p99_itl_reasoning_ms"] != 3.0 || m["total_reasoning_tokens"] != 30.0 ||
		m["median_answer_tokens"] != 4.0 || m["no_answer_requests"] != 1.0 || slo["ttfo_ms"] != 45.0 {
		t.Errorf("json: median_ttfo_ms %v, p99_itl_reasoning_ms %v, total_reasoning_tokens %v, median_answer_tokens %v, no_answer_requests %v, slo %v",
			m["median_ttfo_ms"], m["p99_itl_reasoning_ms"], m["total_reasoning_tokens"], m["median_answer_tokens"], m["no_answer_requests"], slo)
	}
	var txt, md, page, csv bytes.Buffer
	if err := Text(&txt, header(true), s); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, header(true), s); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, header(true), s, nil); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csv, header(true), Records(recs)); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		out  string
		want []string
	}{
		"text": {txt.String(), []string{"TTFO (1st answer)", "ITL (reasoning)", "5 of 5 requests reasoned (1 ended before any answer", "reasoning tokens 30"}},
		"md":   {md.String(), []string{"| TTFO (1st answer) | 4 | 44.00 |", "answer tokens 16"}},
		"html": {page.String(), []string{"TTFO (1st answer)", "ITL (answer)", "reasoning tokens 30", "ended before any answer"}},
		"csv":  {csv.String(), []string{",ttfo_ms,reasoning_tokens,answer_tokens,trace_id\n", ",44,6,4,\n", ",,6,0,\n"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, c.out)
			}
		}
	}
}

// TestNoReasoningNoSection keeps a run without reasoning free of the reasoning keys and rows.
func TestNoReasoningNoSection(t *testing.T) {
	run := synthRun(1, 20, 40, "plain")
	if run.Summary.Reasoning != nil {
		t.Fatal("reasoning section without reasoning")
	}
	var js, txt bytes.Buffer
	if err := JSON(&js, run.Header, run.Summary); err != nil {
		t.Fatal(err)
	}
	if err := Text(&txt, run.Header, run.Summary); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js.String(), "ttfo") || strings.Contains(txt.String(), "TTFO") {
		t.Error("reasoning figures in a run without reasoning")
	}
}
