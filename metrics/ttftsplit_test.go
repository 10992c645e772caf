package metrics

import (
	"testing"

	"servebench/record"
)

// TestTTFTSplit: a request with llama.cpp's prompt_ms splits into to-headers, prefill and
// rest that add up to its TTFT; a request without one is counted but not split.
func TestTTFTSplit(t *testing.T) {
	var a Accumulator
	r := &record.Record{Phase: record.PhaseMeasure, Dispatched: ms, Sent: 2 * ms, Headers: 52 * ms,
		Events: []record.Event{{T: 83 * ms}, {T: 90 * ms}}, Done: 91 * ms, OutputTokens: 2, OutputTokensSource: record.SourceServer,
		Server: map[string]float64{"timings.prompt_ms": 30}}
	a.Add(r)
	plain := *r
	plain.Server = nil
	a.Add(&plain)
	sp := a.Summary().TTFTSplit
	if sp == nil || sp.Requests != 1 || sp.Of != 2 || sp.Source != "timings.prompt_ms" {
		t.Fatalf("split %+v", sp)
	}
	if sp.ToHeaders.Median != float64(50*ms) || sp.Prefill.Median != float64(30*ms) || sp.Rest.Median != float64(1*ms) {
		t.Errorf("to headers %v, prefill %v, rest %v; want 50, 30, 1 ms", sp.ToHeaders.Median, sp.Prefill.Median, sp.Rest.Median)
	}
	var none Accumulator
	none.Add(&plain)
	if none.Summary().TTFTSplit != nil {
		t.Error("a split without any prefill figure")
	}
}

// TestTTFTSplitOverlap: where to headers + prefill exceeds TTFT, rest is 0 and the overlap is
// counted, so no mean of the rest is negative.
func TestTTFTSplitOverlap(t *testing.T) {
	var a Accumulator
	for i, prompt := range []float64{30, 33.5} { // TTFT 81 ms, to headers 50 ms: rest 1 ms, then -2.5 ms
		a.Add(&record.Record{ID: i, Phase: record.PhaseMeasure, Dispatched: ms, Sent: 2 * ms, Headers: 52 * ms,
			Events: []record.Event{{T: 83 * ms}, {T: 90 * ms}}, Done: 91 * ms, OutputTokens: 2, OutputTokensSource: record.SourceServer,
			Server: map[string]float64{"timings.prompt_ms": prompt}})
	}
	sp := a.Summary().TTFTSplit
	if sp.Rest.Min != 0 || sp.Rest.Mean != float64(ms)/2 || sp.Overlap != 1 || sp.OverlapMax != 2.5*float64(ms) {
		t.Errorf("rest min %v mean %v, overlap %d (max %v ns); want 0, 0.5 ms, 1, 2.5 ms", sp.Rest.Min, sp.Rest.Mean, sp.Overlap, sp.OverlapMax)
	}
}
