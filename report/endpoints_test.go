package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// poolingInput is a small rerank run: 20 requests of 4 documents, one failed.
func poolingInput() (*record.Header, *metrics.Summary) {
	h := &record.Header{Schema: record.SchemaVersion, Version: "test", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Target: record.Target{URL: "http://127.0.0.1:1", API: "rerank", Model: "m"}}
	var recs []record.Record
	for i := range 20 {
		sent := int64(1e6 + i*5e6)
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: sent - 1000, Dispatched: sent - 500, Sent: sent,
			Headers: sent + int64(8e6+i*1e5), Done: sent + int64(10e6+i*2e5), Status: 200, Inputs: 4,
			InputTokens: 100, PromptTokens: 140, PromptTokensSource: record.SourceServer}
		if i == 7 {
			r.ErrorClass, r.Error = record.ErrDecode, "5 results for 4 documents"
		}
		recs = append(recs, r)
	}
	var a metrics.Accumulator
	a.SetHeader(h)
	for i := range recs {
		a.Add(&recs[i])
	}
	return h, a.Summary()
}

// streamingWords are what only a streaming run's report shows.
var streamingWords = []string{"TTFT", "ITL", "TPOT", "E2E", "decode rate", "tok/s/user", "output tok", "output tokens/s", "peak output"}

// TestPoolingFormats: text, Markdown and HTML show a pooling run's latency, throughput and
// batch size and none of the streaming figures; JSON keeps vLLM's run keys, drops every
// streaming key and adds the pooling ones.
func TestPoolingFormats(t *testing.T) {
	h, s := poolingInput()
	if s.Pooling == nil || s.Pooling.Requests != 19 {
		t.Fatalf("pooling summary %+v", s.Pooling)
	}
	var txt, md, page bytes.Buffer
	if err := Text(&txt, h, s); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, h, s); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, h, s, nil); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String(), "html": page.String()} {
		for _, w := range streamingWords {
			if strings.Contains(out, w) {
				t.Errorf("%s shows %q", name, w)
			}
		}
		for _, w := range []string{"documents/s", "latency", "input ", "documents a request"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
	if !strings.Contains(txt.String(), "batch       4 documents a request (min 4, max 4)") ||
		!strings.Contains(txt.String(), "19 completed, 1 failed") {
		t.Errorf("text:\n%s", txt.String())
	}
	var js bytes.Buffer
	if err := JSON(&js, h, s); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if streamingKey(k) {
			t.Errorf("JSON has the streaming key %s", k)
		}
	}
	// latency of request i is 10 + 0.2 i ms; request 7 failed: the median of the other 19 is request 10's
	if m["completed"] != 19.0 || m["median_latency_ms"] != 12.0 || m["mean_batch_size"] != 4.0 || m["total_inputs"] != 76.0 || m["pooling"] == nil {
		t.Errorf("JSON completed %v, median latency %v, batch %v, inputs %v", m["completed"], m["median_latency_ms"], m["mean_batch_size"], m["total_inputs"])
	}

}

// TestStreamingKey pins which JSON keys count as streaming figures.
func TestStreamingKey(t *testing.T) {
	for k, want := range map[string]bool{
		"mean_ttft_ms": true, "p99_itl_ms": true, "count_itl_token": true, "median_e2el_queue_ms": true,
		"mean_decode_rate_tok_s": true, "output_throughput": true, "steady_state": true, "mean_stream_ms": true,
		"request_throughput": false, "total_input_tokens": false, "mean_queue_ms": false, "p99_lateness_ms": false,
		"mean_latency_ms": false, "completed": false, "mean_connect_ms": false, "warnings": false,
	} {
		if got := streamingKey(k); got != want {
			t.Errorf("streamingKey(%s) = %v, want %v", k, got, want)
		}
	}
}

// streamingKey reports whether a JSON summary key is a figure of streamed output: an oracle
// by key name, apart from the builders' own lists of what a pooling run leaves out.
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

// TestPoolingServerSection: the server section of a pooling run keeps the server's own figures
// (its queue time) and leaves out those set beside streamed ones (its TTFT and ITL against
// ours, the slow-TTFT attribution), which a streamed run shows.
func TestPoolingServerSection(t *testing.T) {
	hist := &metrics.HistQuantiles{Count: 19, Mean: 5e6, P50: 5e6, P99: 9e6, P50Lo: 4e6, P50Hi: 6e6}
	sv := &metrics.Server{TTFT: hist, ITL: hist, Queue: hist, Attribution: &metrics.Attribution{P90: 1e7, Slow: 2, SlowWaiting: 1}}
	_, pool := poolingInput()
	pool.Server = sv
	stream := &metrics.Summary{Server: sv}
	text := func(s *metrics.Summary) string {
		var b strings.Builder
		for _, l := range serverSection(nil, s).Lines {
			b.WriteString(l.Label + " " + l.Text + "\n")
		}
		return b.String()
	}
	p, st := text(pool), text(stream)
	for _, w := range []string{"TTFT", "ITL", "attribution"} {
		if strings.Contains(p, w) || !strings.Contains(st, w) {
			t.Errorf("%s: pooling run's server section\n%s\nstreamed run's\n%s", w, p, st)
		}
	}
	if !strings.Contains(p, "queue time") {
		t.Errorf("the pooling run's server section lacks the server's queue time:\n%s", p)
	}
}
