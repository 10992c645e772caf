package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// object is a JSON object that keeps its keys in insertion order, so that our JSON reads in
// the same order as vLLM's and golden files are stable.
type object struct {
	keys []string
	vals []any
}

func (o *object) set(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

// fields are the object's keys and values, in order.
func (o *object) fields() []Field {
	out := make([]Field, len(o.keys))
	for i, k := range o.keys {
		out[i] = Field{k, o.vals[i]}
	}
	return out
}

// MarshalJSON writes the object with its keys in insertion order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalFinite(o.vals[i]) // finite.go: NaN and ±Inf are null
		if err != nil {
			return nil, fmt.Errorf("json key %s: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// JSON writes the summary as one indented JSON object whose keys follow vLLM's
// `vllm bench serve --save-result` names where vLLM has the figure (completed, duration,
// mean_ttft_ms, p99_itl_ms, ...), and the same pattern for our extra figures
// (mean_ttft_first_event_ms, p99_itl_token_ms, mean_decode_rate_tok_s, ...).
// Undefined figures are null, never 0. h may be nil.
//
// The load keys are vLLM's too: num_prompts, request_rate ("inf" for a closed loop, which
// vLLM runs as an infinite rate capped at max_concurrency), burstiness and max_concurrency.
func JSON(w io.Writer, h *record.Header, s *metrics.Summary) error {
	return writeIndented(w, jsonObject(h, s))
}

// JSONRuns writes the runs of one records file. One run is written exactly as JSON writes
// it, with no "runs" key, so a one-run file reads as it always did. Several runs (--repeat,
// sweep points) are one object whose top-level keys are the last run's, as JSON writes it,
// so that a reader of one-run files still finds every key; "summary_run" says which run that
// is, and "runs" holds every run in file order, each with its run index, label, load and
// summary keys (the header's keys are not repeated); a sweep's file adds its points and
// conclusions (sweepSections), one run or several. The last run, not the pooled runs, is
// at the top: pooling would count the gaps between runs in the window and mix different loads.
func JSONRuns(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	if len(runs) == 0 {
		return fmt.Errorf("json: no run")
	}
	last := runs[len(runs)-1]
	if len(runs) == 1 && !isSweep(h) {
		return JSON(w, h, last.Summary)
	}
	o := jsonObject(h, last.Summary)
	o.set("summary_run", last.Run)
	list := make([]*object, len(runs))
	for i, r := range runs {
		ro := &object{}
		ro.set("run", r.Run)
		ro.set("label", r.Label)
		setLoadKeys(ro, h, r.Summary)
		jsonRun(ro, r.Summary)
		jsonDistributions(ro, r.Summary)
		jsonExtras(ro, h, r.Summary)
		list[i] = ro
	}
	o.set("runs", list)
	if isSweep(h) {
		jsonDocument(o, &Document{Sections: sweepSections(h, runs)}) // sweep.go
	}
	return writeIndented(w, o)
}

// jsonObject is JSON's object: the header's keys, the run's load, its figures.
func jsonObject(h *record.Header, s *metrics.Summary) *object {
	o := &object{}
	jsonHeader(o, h, s)
	setLoadKeys(o, h, s)
	jsonRun(o, s)
	jsonDistributions(o, s)
	jsonExtras(o, h, s)
	return o
}

func writeIndented(w io.Writer, v any) error {
	b, err := marshalFinite(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

func jsonHeader(o *object, h *record.Header, s *metrics.Summary) {
	if h == nil {
		h = &record.Header{}
	}
	o.set("servebench_version", h.Version)
	date := "" // vLLM's format; empty when the header has no start time
	if !h.Start.IsZero() {
		date = h.Start.UTC().Format("20060102-150405")
	}
	o.set("date", date)
	o.set("backend", h.Target.API)
	o.set("model_id", h.Target.Model) // vLLM's name
	o.set("tokenizer_id", tokenizerID(h))
	o.set("model", h.Target.Model)
	o.set("url", h.Target.URL)
	o.set("workload_hash", h.Workload.Hash)
	o.set("simulated", s.Simulated || h.Target.Simulated)
}

// jsonRun writes the run-level figures under vLLM's names first.
func jsonRun(o *object, s *metrics.Summary) {
	var dur *float64
	if s.Window > 0 {
		dur = ptr(s.Window.Seconds())
	}
	o.set("duration", dur)
	o.set("completed", s.Completed)
	o.set("failed", s.Failed)
	o.set("cancelled", s.Cancelled)
	if s.CachedReported > 0 {
		o.set("cached_prompt_tokens", s.CachedPromptTokens)
	} else {
		o.set("cached_prompt_tokens", nil) // not reported by the server, which is not 0
	}
	o.set("total_input_tokens", s.InputTokens)
	o.set("total_output_tokens", s.OutputTokens)
	o.set("request_throughput", s.RequestThroughput)
	o.set("request_goodput", s.RequestGoodput)
	o.set("slo_attainment_pct", pct(s.SLOAttainment)) // share of measured requests meeting every SLO
	o.set("output_throughput", s.OutputThroughput)
	o.set("total_token_throughput", s.TotalTokenThroughput)
	o.set("max_output_tokens_per_s", s.PeakOutputTokensPerS)
	o.set("max_concurrent_requests", s.MaxInFlight)
}

// jsonDistributions writes mean_X, median_X, std_X, pNN_X, min_X and max_X for every
// distribution: vLLM's four (ttft, tpot, itl, e2el) first, then ours.
func jsonDistributions(o *object, s *metrics.Summary) {
	dists := []struct {
		name string
		st   metrics.Stat
		unit string  // key suffix
		div  float64 // ns → ms, or 1
	}{
		// METRICS.md: ttft and e2el start at sent; vLLM's own timer starts at dispatch,
		// which is ttft_dispatch here.
		{"ttft", s.TTFT, "_ms", 1e6},
		{"tpot", s.TPOT, "_ms", 1e6},
		{"itl", s.ITLChunk, "_ms", 1e6},
		{"e2el", s.E2E, "_ms", 1e6},
		{"ttft_first_event", s.TTFTFirstEvent, "_ms", 1e6},
		{"ttft_dispatch", s.TTFTDispatch, "_ms", 1e6},
		{"itl_token", s.ITLToken, "_ms", 1e6},
		{"e2el_queue", s.E2EQueue, "_ms", 1e6},
		{"queue", s.Queue, "_ms", 1e6},
		{"stream", s.StreamTime, "_ms", 1e6},
		{"connect", s.Connect, "_ms", 1e6},
		{"client_overhead", s.ClientOverhead, "_ms", 1e6},
		{"lateness", s.Lateness, "_ms", 1e6},
		{"decode_rate", s.DecodeRate, "_tok_s", 1},
		{"prompt_tokens", s.PromptTokens, "", 1},
	}
	for _, d := range dists {
		statKeys(o, d.name, d.unit, d.st, s.Percentiles, d.div)
	}
}

// statKeys writes the keys of one distribution; every value is null for an empty set.
// Times are rounded to whole nanoseconds (the resolution of the records) before the
// conversion to ms, so 99 ms prints as 99, not 99.00000000000001.
func statKeys(o *object, base, unit string, st metrics.Stat, ps []float64, div float64) {
	v := func(x float64) *float64 {
		if !st.Valid() {
			return nil
		}
		if div == 1e6 {
			x = math.Round(x)
		}
		return ptr(x / div)
	}
	o.set("count_"+base, st.N)
	name := base + unit
	o.set("mean_"+name, v(st.Mean))
	o.set("median_"+name, v(st.Median))
	o.set("std_"+name, v(st.Std))
	for _, p := range ps {
		x, _ := st.Percentile(p)
		o.set("p"+pctName(p)+"_"+name, v(x))
	}
	o.set("min_"+name, v(st.Min))
	o.set("max_"+name, v(st.Max))
}

// jsonExtras writes the figures vLLM does not have.
func jsonExtras(o *object, h *record.Header, s *metrics.Summary) {
	o.set("percentiles", s.Percentiles)
	o.set("measured", s.Measured)
	o.set("failure_rate", s.FailureRate)
	o.set("errors", s.Errors)
	o.set("warmup_discarded", s.WarmupDiscarded)
	o.set("short_outputs", s.ShortOutputs)
	o.set("window_start_s", float64(s.WindowStart)/1e9)
	o.set("window_end_s", float64(s.WindowEnd)/1e9)
	o.set("mean_concurrency", s.MeanConcurrency)
	o.set("achieved_request_rate", s.AchievedRate)
	o.set("max_output_tokens_per_s_unknown_events", s.PeakUnknownEvents)
	o.set("slo", sloObject(s.SLO))
	o.set("good_requests", s.GoodRequests)
	o.set("itl_token_requests", s.ITLTokenRequests)
	o.set("itl_token_skipped", s.ITLTokenSkipped)
	o.set("prompt_token_mismatches", s.PromptMismatches)
	o.set("mean_prompt_token_delta", meanOrNil(s.PromptDelta))
	src := &object{}
	src.set("prompt", s.PromptTokenSources)
	src.set("output", s.OutputTokenSources)
	o.set("token_count_sources", src)
	warnings := finiteWarnings(s.Warnings)
	if warnings == nil {
		warnings = []metrics.Warning{}
	}
	o.set("warnings", warnings)
	jsonDocument(o, SummaryDocument(h, s)) // document.go: the registered sections and breakdowns
	o.set("steady_state", s.Steadiness)
	if bad := s.Invalid(); len(bad) > 0 {
		// present only for a run its warnings invalidate: the reasons, each in short
		var why []string
		for _, w := range bad {
			why = append(why, w.Reason())
		}
		o.set("invalid", why)
	}
	jsonPooling(o, s) // endpoints.go: only for embeddings and rerank, whose streaming keys it drops
}

// sloObject writes the set objectives in ms (null when unset).
func sloObject(slo metrics.SLO) *object {
	o := &object{}
	for _, e := range []struct {
		k string
		v int64
	}{{"ttft_ms", int64(slo.TTFT)}, {"tpot_ms", int64(slo.TPOT)}, {"itl_ms", int64(slo.ITL)}, {"e2el_ms", int64(slo.E2E)}} {
		var v *float64
		if e.v > 0 {
			v = ptr(float64(e.v) / 1e6)
		}
		o.set(e.k, v)
	}
	if slo.TTFO > 0 { // only when set, so a summary without reasoning keeps its keys
		o.set("ttfo_ms", float64(slo.TTFO)/1e6)
	}
	return o
}

func meanOrNil(st metrics.Stat) *float64 {
	if !st.Valid() {
		return nil
	}
	return ptr(st.Mean)
}

// pctName formats a percentile as vLLM does: 99 → "99", 99.9 → "99.9".
func pctName(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func ptr[T any](v T) *T { return &v }

// pct converts a share to percent, keeping nil (undefined) as nil.
func pct(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := 100 * *v
	return &p
}

// renderJSON is the json format: JSONRuns of the input's runs, as `run --json` writes them
// (run hands its summaries to the same function, so the two agree).
func renderJSON(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("json")
	if err != nil {
		return err
	}
	return JSONRuns(w, ins[0].Header, runs)
}

// splitJSON is TTFT taken apart (metrics.TTFTSplit) with the keys of every distribution, or
// null where no server reported its prefill times.
func splitJSON(s *metrics.Summary) *object {
	sp := s.TTFTSplit
	if sp == nil {
		return nil
	}
	o := &object{}
	o.set("prefill_source", sp.Source)
	o.set("requests", sp.Requests)
	o.set("of", sp.Of)
	statKeys(o, "to_headers", "_ms", sp.ToHeaders, s.Percentiles, 1e6)
	statKeys(o, "prefill", "_ms", sp.Prefill, s.Percentiles, 1e6)
	statKeys(o, "rest", "_ms", sp.Rest, s.Percentiles, 1e6)
	o.set("overlap_requests", sp.Overlap)
	o.set("max_overlap_ms", sp.OverlapMax/1e6)
	return o
}
