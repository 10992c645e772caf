package report

import (
	"fmt"
	"math"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// The core sections of one run's summary: the header (what was measured and how it was
// sent), the requests and their throughput, the failures, the latency table and the
// footnotes; and the JSON-only sections between them that keep the JSON summary's keys in
// the order other tools read (vLLM's names first). A run that streams nothing (embeddings,
// rerank: metrics.Pooling) is a variant of each, chosen by its data: it has no TTFT, ITL,
// TPOT, decode rate or output throughput, so its sections hold its latency (sent → done),
// its request and input-token throughput and its batch size instead.

// at places sec at order: below 0 it opens the HTML page, else it follows the page's opening
// (document.go: Opening and Body).
func at(sec *Section, order int) *Section {
	sec.order = order
	return sec
}

// headerSection says what was measured: the run, the target, the workload, the load and what
// was achieved; in JSON the header's keys.
func headerSection(h *record.Header, s *metrics.Summary) *Section {
	sec := &Section{Name: "header", Title: "servebench results", JSON: headerFields(h, s)}
	add := func(label, format string, args ...any) {
		sec.Lines = append(sec.Lines, Line{label, fmt.Sprintf(format, args...)})
	}
	if h != nil {
		run := "servebench " + h.Version
		if !h.Start.IsZero() {
			run += "  started " + h.Start.UTC().Format("2006-01-02 15:04:05Z")
		}
		if h.Label != "" {
			run += "  run " + h.Label
		}
		if h.Shard != "" {
			run += "  shard " + h.Shard
		}
		add("run", "%s", run)
		add("target", "%s  api %s  model %s", h.Target.URL, h.Target.API, h.Target.Model)
	}
	if s.Simulated || (h != nil && h.Target.Simulated) {
		add("", "SIMULATED server (servebench built-in simulator) — not a real server's figures")
	}
	if h != nil {
		wl := h.Workload
		add("workload", "%d requests  hash %s  %s seed %d  prompt lengths %s",
			wl.Count, short(wl.Hash), wl.Source, wl.Seed, promptLengths(wl.PromptLengths, s))
		if cfg := loadLine(h); cfg != "" {
			add("load", "%s", cfg)
		}
	}
	add("achieved", "%s", achievedWords(s))
	sec.pageOwn = true // the page's runs table
	return at(sec, -100)
}

// achievedWords are the load the run achieved: the send rate, concurrency and lateness.
func achievedWords(s *metrics.Summary) string {
	return fmt.Sprintf("%s req/s sent; concurrency mean %s, max %d in flight; lateness p50 %s, p99 %s, max %s ms",
		optf(s.AchievedRate, 2), optf(s.MeanConcurrency, 2), s.MaxInFlight,
		msP(s.Lateness, 50), msP(s.Lateness, 99), msMax(s.Lateness))
}

// headerFields are the header's JSON keys.
func headerFields(h *record.Header, s *metrics.Summary) []Field {
	if h == nil {
		h = &record.Header{}
	}
	o := &object{}
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
	return o.fields()
}

// loadSection is the run's load in vLLM's JSON keys (num_prompts, request_rate, burstiness,
// max_concurrency); the header's load line says it in words.
func loadSection(h *record.Header, s *metrics.Summary) *Section {
	o := &object{}
	setLoadKeys(o, h, s)
	return at(&Section{Name: "load", JSON: o.fields()}, -99)
}

// requestsSection is how many requests got through and how fast; in JSON the run-level
// figures under vLLM's names.
func requestsSection(h *record.Header, s *metrics.Summary) *Section {
	sec := &Section{Name: "summary", Title: "Requests and throughput", JSON: runFields(s)}
	add := func(label, format string, args ...any) {
		sec.Lines = append(sec.Lines, Line{label, fmt.Sprintf(format, args...)})
	}
	cancelled := ""
	if s.Cancelled > 0 {
		cancelled = fmt.Sprintf(", %d cancelled at the stop", s.Cancelled)
	}
	add("requests", "%d completed, %d failed (%.1f%%)%s, %d warmup discarded",
		s.Completed, s.Failed, fin(100*s.FailureRate), cancelled, s.WarmupDiscarded)
	if s.Window > 0 {
		how := "first sent → last done"
		if s.SteadyState {
			how = "steady state: --duration less its warmup and cooldown periods"
		}
		add("window", "%.3f s (%s)", s.Window.Seconds(), how)
	} else {
		add("window", "%s", dash)
	}
	if p := s.Pooling; p != nil {
		noun := poolingNoun(h)
		add("throughput", "%s req/s   input %s tok/s   %s %s/s", nonZero(p.RequestThroughput, 2, s),
			nonZero(p.InputThroughput, 1, s), nonZero(p.InputsPerSecond, 1, s), noun)
		add("tokens", "input %d (sources: %s), %d %s", p.InputTokens, sources(s.PromptTokenSources), p.Inputs, noun)
		add("batch", "%s %s a request (min %s, max %s); prompt tokens a request p50 %s",
			statNum(p.BatchSize, p.BatchSize.Mean, "%.4g"), noun, statNum(p.BatchSize, p.BatchSize.Min, "%.0f"),
			statNum(p.BatchSize, p.BatchSize.Max, "%.0f"), statNum(p.PromptTokens, p.PromptTokens.Median, "%.0f"))
		return at(sec, 0)
	}
	peak, why := dash, ""
	if s.PeakOutputTokensPerS != nil {
		peak = fmt.Sprint(*s.PeakOutputTokensPerS)
		// the peak is the busiest second; a window shorter than a second has none whole,
		// and its tokens read below the mean rate
		if s.Window < time.Second {
			why = " (the window's tokens: it is under 1 s)"
		}
	}
	add("throughput", "%s req/s   output %s tok/s   total %s tok/s   peak output %s tok/s%s",
		optf(s.RequestThroughput, 2), optf(s.OutputThroughput, 1), optf(s.TotalTokenThroughput, 1), peak, why)
	if s.SLO.Any() {
		add("goodput", "%s req/s   %d of %d met %s", optf(s.RequestGoodput, 2), s.GoodRequests, s.Completed, s.SLO)
		add("attainment", "%s of measured requests met every SLO (failed ones count as misses)", optPct(s.SLOAttainment))
	}
	add("tokens", "input %d (sources: %s), output %d (sources: %s)",
		s.InputTokens, sources(s.PromptTokenSources), s.OutputTokens, sources(s.OutputTokenSources))
	return at(sec, 0)
}

// runFields are the run-level figures under vLLM's names; a run that streams nothing has no
// output tokens, goodput or attainment (its SLOs are on streamed figures).
func runFields(s *metrics.Summary) []Field {
	o := &object{}
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
	if s.Streams() {
		o.set("total_output_tokens", s.OutputTokens)
	}
	o.set("request_throughput", s.RequestThroughput)
	if s.Streams() {
		o.set("request_goodput", s.RequestGoodput)
		o.set("slo_attainment_pct", pct(s.SLOAttainment)) // share of measured requests meeting every SLO
		o.set("output_throughput", s.OutputThroughput)
		o.set("total_token_throughput", s.TotalTokenThroughput)
		o.set("max_output_tokens_per_s", s.PeakOutputTokensPerS)
	}
	o.set("max_concurrent_requests", s.MaxInFlight)
	return o.fields()
}

// failuresSection counts the failed requests by class, and the fixed-length requests that got
// fewer tokens than asked; nil when there are neither. Its figures are JSON keys already
// (errors, short_outputs).
func failuresSection(s *metrics.Summary) *Section {
	sec := &Section{Name: "failures", Title: "Failures", Attached: true, JSON: []Field{}}
	if s.Failed > 0 {
		sec.Lines = append(sec.Lines, Line{"failures", metrics.ClassList(s.Errors)})
	}
	if s.ShortOutputs > 0 {
		sec.Lines = append(sec.Lines, Line{"short", fmt.Sprintf("%d fixed-length requests got fewer tokens than asked", s.ShortOutputs)})
	}
	if len(sec.Lines) == 0 {
		return nil
	}
	return at(sec, 0)
}

// latencySection is the latency table (ms; the decode rate in tok/s): n, mean, the table's
// percentiles and max of each distribution; in JSON every distribution's keys.
func latencySection(s *metrics.Summary) *Section {
	ps := tablePercentiles(s)
	t := &Table{Head: []string{"latency (ms)", "n", "mean"}, Widths: []int{-19, 8, 10}, Labels: 1}
	for _, p := range ps {
		t.Head, t.Widths = append(t.Head, "p"+pctName(p)), append(t.Widths, 10)
	}
	t.Head, t.Widths = append(t.Head, "max"), append(t.Widths, 10)
	rows := tableRows(s)
	if s.Pooling != nil {
		rows = poolingRows(s.Pooling, s)
	}
	for _, r := range rows {
		cells := []string{r.name, fmt.Sprint(r.st.N), num(r.st, r.st.Mean, r.scale)}
		for _, p := range ps {
			v, _ := r.st.Percentile(p)
			cells = append(cells, num(r.st, v, r.scale))
		}
		t.Rows = append(t.Rows, append(cells, num(r.st, r.st.Max, r.scale)))
	}
	return at(&Section{Name: "latency", Title: "Latency (ms)", Tables: []*Table{t}, JSON: distributionFields(s)}, 0)
}

// distributionFields are mean_X, median_X, std_X, pNN_X, min_X and max_X of every
// distribution: vLLM's four (ttft, tpot, itl, e2el) first, then ours; a pooling run has
// none of the streamed ones, and its latency, latency from dispatch and batch size are
// written last (poolingSection).
func distributionFields(s *metrics.Summary) []Field {
	dists := []struct {
		name     string
		st       metrics.Stat
		unit     string  // key suffix
		div      float64 // ns → ms, or 1
		streamed bool
	}{
		// docs/design/METRICS.md: ttft and e2el start at sent; vLLM's own timer starts at dispatch,
		// which is ttft_dispatch here.
		{"ttft", s.TTFT, "_ms", 1e6, true},
		{"tpot", s.TPOT, "_ms", 1e6, true},
		{"itl", s.ITLChunk, "_ms", 1e6, true},
		{"e2el", s.E2E, "_ms", 1e6, true},
		{"ttft_first_event", s.TTFTFirstEvent, "_ms", 1e6, true},
		{"ttft_dispatch", s.TTFTDispatch, "_ms", 1e6, true},
		{"itl_token", s.ITLToken, "_ms", 1e6, true},
		{"e2el_queue", s.E2EQueue, "_ms", 1e6, true},
		{"queue", s.Queue, "_ms", 1e6, false},
		{"stream", s.StreamTime, "_ms", 1e6, true},
		{"connect", s.Connect, "_ms", 1e6, false},
		{"client_overhead", s.ClientOverhead, "_ms", 1e6, false},
		{"lateness", s.Lateness, "_ms", 1e6, false},
		{"decode_rate", s.DecodeRate, "_tok_s", 1, true},
		{"prompt_tokens", s.PromptTokens, "", 1, false},
	}
	o := &object{}
	for _, d := range dists {
		if d.streamed && !s.Streams() {
			continue
		}
		statKeys(o, d.name, d.unit, d.st, s.Percentiles, d.div)
	}
	return o.fields()
}

// measurementSection holds, for JSON only, the figures of the measurement that no person's
// table shows: the percentile set, counts, the window's ends, token sources and the
// warnings (the footnotes show them to people).
func measurementSection(s *metrics.Summary) *Section {
	o := &object{}
	o.set("percentiles", s.Percentiles)
	o.set("measured", s.Measured)
	o.set("failure_rate", s.FailureRate)
	o.set("errors", s.Errors)
	o.set("warmup_discarded", s.WarmupDiscarded)
	if s.Streams() {
		o.set("short_outputs", s.ShortOutputs)
	}
	o.set("window_start_s", float64(s.WindowStart)/1e9)
	o.set("window_end_s", float64(s.WindowEnd)/1e9)
	o.set("mean_concurrency", s.MeanConcurrency)
	o.set("achieved_request_rate", s.AchievedRate)
	if s.Streams() {
		o.set("max_output_tokens_per_s_unknown_events", s.PeakUnknownEvents)
		o.set("slo", sloObject(s.SLO))
		o.set("good_requests", s.GoodRequests)
		o.set("itl_token_requests", s.ITLTokenRequests)
		o.set("itl_token_skipped", s.ITLTokenSkipped)
	}
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
	return at(&Section{Name: "measurement", JSON: o.fields()}, 0)
}

// verdictFieldsSection holds, for JSON only, what the verdict block judged: the steady-state
// check (none for a run that streams nothing: it reads streamed figures) and, for a run its
// warnings invalidate, the reasons, each in short.
func verdictFieldsSection(s *metrics.Summary) *Section {
	o := &object{}
	if s.Streams() {
		o.set("steady_state", s.Steadiness)
	}
	if bad := s.Invalid(); len(bad) > 0 {
		var why []string
		for _, w := range bad {
			why = append(why, w.Reason())
		}
		o.set("invalid", why)
	}
	return at(&Section{Name: "verdict-figures", JSON: o.fields()}, math.MaxInt)
}

// poolingSection holds, for JSON only, a pooling run's own figures: "pooling" holds
// metrics.Pooling, and latency_ms, latency_from_dispatch_ms and batch_size are written as
// distributions (mean_, median_, std_, pNN_, min_, max_) like every other; nil for a run
// that streamed.
func poolingSection(s *metrics.Summary) *Section {
	p := s.Pooling
	if p == nil {
		return nil
	}
	o := &object{}
	o.set("input_throughput", p.InputThroughput)
	o.set("inputs_per_second", p.InputsPerSecond)
	o.set("total_inputs", p.Inputs)
	statKeys(o, "latency", "_ms", p.Latency, s.Percentiles, 1e6)
	statKeys(o, "latency_from_dispatch", "_ms", p.LatencyFromDispatch, s.Percentiles, 1e6)
	statKeys(o, "batch_size", "", p.BatchSize, s.Percentiles, 1)
	o.set("pooling", p)
	return at(&Section{Name: "pooling", JSON: o.fields()}, math.MaxInt)
}

// notesSection is the run's warnings as numbered footnotes, each with its next step; nil
// without warnings. They are a JSON key already ("warnings").
func notesSection(s *metrics.Summary) *Section {
	if len(s.Warnings) == 0 {
		return nil
	}
	sec := &Section{Name: "notes", Title: "Warnings", Heading: "notes", JSON: []Field{}, Footnotes: footnotes(s.Warnings)}
	sec.pageOwn = true // the page's warnings list
	return at(sec, math.MaxInt)
}

// footnotes are warnings as footnotes, their words made finite.
func footnotes(ws []metrics.Warning) []Footnote {
	var out []Footnote
	for _, w := range finiteWarnings(ws) {
		class, _ := w.Level.MarshalText()
		out = append(out, Footnote{Level: w.Level.String(), Class: string(class), Text: w.Text, Action: w.Action})
	}
	return out
}

// promptLengths is how the prompt lengths were obtained ("exact", "approximate"), with the
// tokens the server adds to every prompt when its count is the sent length plus a constant:
// llama.cpp counts its BOS (129 of a 128-token prompt), and "exact" alone beside its 129
// reads as a contradiction. A varying difference is a warning of its own (metrics).
func promptLengths(how string, s *metrics.Summary) string {
	how = orDash(how)
	if s == nil {
		return how
	}
	d := s.PromptDelta
	if d.N == 0 || d.Min != d.Max || d.Min <= 0 || s.PromptMismatches != d.N {
		return how
	}
	if d.Min == 1 {
		return how + " (+1 BOS the server adds)"
	}
	return fmt.Sprintf("%s (+%.0f tokens the server adds: BOS, chat template)", how, d.Min)
}
