package metrics

import (
	"fmt"
	"slices"
	"strings"

	"servebench/record"
)

// Thresholds of the client-overhead warning: TTFT from dispatch − TTFT at p99 above 1 ms, or
// above 5% of the median TTFT, means the load generator itself delays requests.
const (
	overheadAbsNS = 1e6
	overheadRel   = 0.05
	latenessNS    = 10e6 // lateness p99 above 10 ms: requests left later than scheduled
)

// warnings returns the actionable notes for a summary (STYLE.md "Warnings are data"), in a
// fixed order so that output is deterministic.
func warnings(s *Summary, h *record.Header) []string {
	var w []string
	add := func(format string, args ...any) { w = append(w, fmt.Sprintf(format, args...)) }
	if s.Simulated {
		add("the target is servebench's built-in simulator: these are not a real server's figures")
	}
	if s.Measured == 0 {
		add("no measured requests: nothing to summarise")
	} else if s.Completed == 0 {
		add("every measured request failed: there are no latency or throughput figures")
	}
	if s.Cancelled > 0 {
		add("%d requests were still in flight when sending stopped and were cancelled at the end of the grace period: they are not failures and are in no figure; a longer --grace lets them finish", s.Cancelled)
	}
	if s.Failed > 0 {
		add("%d of %d requests failed (%.1f%%: %s); failed requests are excluded from every latency figure and from throughput",
			s.Failed, s.Measured, 100*s.FailureRate, ClassList(s.Errors))
	}
	if s.ShortOutputs > 0 {
		add("%d fixed-length requests returned fewer tokens than max_tokens: the server ignored ignore_eos/min_tokens or stopped early, so the workload moved under the measurement",
			s.ShortOutputs)
	}
	for _, e := range s.Ends {
		switch e.WarmupStop {
		case "max requests", "max time":
			add("--warmup auto stopped at its cap (%s) after %d warmup requests without the warmup settling: the server may not have been warm when measuring began; raise --warmup-max or --warmup-timeout, or find what keeps it moving", e.WarmupStop, e.WarmupRequests)
		case "not reached":
			add("the run ended while still warming (--warmup auto, %d requests): nothing was measured warm", e.WarmupRequests)
		}
		if ra := e.RepeatAuto; ra != nil && ra.Stop == "cap" {
			add("--repeat auto stopped at its cap of %d runs before every key metric's run-to-run 95%% interval was within ±%.3g%%: this baseline is less certain than asked; raise --repeat-max or find what makes the runs differ", ra.Max, 100*ra.Target)
		}
	}
	w = append(w, tokenWarnings(s, h)...)
	w = append(w, clientWarnings(s)...)
	return w
}

// tokenWarnings say where token counts are estimates.
func tokenWarnings(s *Summary, h *record.Header) []string {
	var w []string
	if n := s.OutputTokenSources[record.SourceCount]; n > 0 {
		w = append(w, fmt.Sprintf("output token counts for %d requests are estimates: one per event (server sent no usage); enable stream_options.include_usage on the server", n))
	}
	if n := s.OutputTokenSources[record.SourceTokenizer]; n > 0 {
		w = append(w, fmt.Sprintf("output token counts for %d requests come from a client-side tokenizer, not the server", n))
	}
	if h != nil && h.Workload.PromptLengths == "approximate" {
		w = append(w, "prompt lengths are approximate (no tokenizer was reachable when the workload was built): input lengths requested are estimates")
	}
	if n := s.PromptTokenSources[record.SourceRequested]; n > 0 {
		w = append(w, fmt.Sprintf("input token counts for %d requests are the requested lengths: the server reported no prompt usage", n))
	}
	if s.PromptMismatches > 0 {
		cause := "the chat template or tokenizer differs from the one that built the workload"
		if s.PromptDelta.Min == 1 && s.PromptDelta.Max == 1 {
			// exactly one more everywhere: the tokenize endpoint counted without special tokens
			cause = "most likely the BOS token the server adds; the prompts themselves have the requested length"
		}
		w = append(w, fmt.Sprintf("server-reported prompt tokens differ from the requested length for %d requests (mean %+.1f tokens): %s",
			s.PromptMismatches, s.PromptDelta.Mean, cause))
	}
	w = append(w, cacheNotes(s, h)...)
	if s.Completed > 0 && s.CachedReported == 0 && !s.Simulated && h != nil && strings.HasPrefix(h.Target.API, "openai") {
		w = append(w, "the server reported no cached prompt tokens, so whether TTFT measured prefix-cache hits is unknown (not 0): vLLM reports them when started with --enable-prompt-tokens-details (usage.prompt_tokens_details.cached_tokens); llama.cpp and SGLang report them by default")
	}
	if s.PeakUnknownEvents > 0 {
		w = append(w, fmt.Sprintf("peak output tokens/s counts one token per event for %d events whose token count was unknown", s.PeakUnknownEvents))
	}
	switch {
	case s.ITLTokenSkipped > 0 && s.ITLTokenRequests == 0:
		w = append(w, "ITL (token) is empty: no request had per-event token counts (server continuous_usage_stats, NDJSON counts or a tokenizer); ITL (chunk) is per event")
	case s.ITLTokenSkipped > 0:
		w = append(w, fmt.Sprintf("ITL (token) leaves out %d requests without per-event token counts (%d included)", s.ITLTokenSkipped, s.ITLTokenRequests))
	}
	return w
}

// clientWarnings say when the load generator, not the server, shaped the figures.
func clientWarnings(s *Summary) []string {
	var w []string
	oh, ok1 := s.ClientOverhead.Percentile(99)
	if ok1 && (oh > overheadAbsNS || (s.TTFT.Valid() && oh > overheadRel*s.TTFT.Median)) {
		msg := fmt.Sprintf("client-side delay between dispatch and sent is %.2f ms at p99 (TTFT from dispatch − TTFT): the load generator may be the bottleneck", oh/1e6)
		if cp, ok := s.Connect.Percentile(99); ok {
			msg += fmt.Sprintf("; %d new connections took %.2f ms at p99, so part of it is connection set-up", s.Connect.N, cp/1e6)
		}
		w = append(w, msg)
	}
	return w
}

// ClassList formats counts per error class as "http_5xx 3, timeout 1": the classes of
// record.ErrorClasses first in their fixed order, then any other class alphabetically.
func ClassList(m map[string]int) string {
	var parts []string
	for _, k := range Classes(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// Classes returns the keys of m with a count, the fixed record.ErrorClasses first, then the
// others sorted.
func Classes(m map[string]int) []string {
	var out, rest []string
	for _, k := range record.ErrorClasses {
		if m[k] > 0 {
			out = append(out, k)
		}
	}
	for k, v := range m {
		if v > 0 && !slices.Contains(record.ErrorClasses, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// cacheNotes set the prompt tokens the server served from its prefix cache beside the reuse
// the workload was built for (shared prefixes, a session's history: Workload.ReusableShare),
// and name reuse it was not built for with an action that removes it. The tool's own runs
// never cause it (every run, warmup and sweep point sends prompts of its own), so what is
// left is a replay the user asked for or a server that saw the prompts elsewhere.
func cacheNotes(s *Summary, h *record.Header) []string {
	reusable, what := 0.0, "as shared prefixes"
	if h != nil {
		reusable = h.Workload.ReusableShare
		if strings.HasSuffix(h.Workload.Source, "+sessions") {
			what = "as session history (each turn sends the conversation so far)"
		}
	}
	cached := 0.0
	if s.InputTokens > 0 {
		cached = float64(s.CachedPromptTokens) / float64(s.InputTokens)
	}
	var w []string
	switch {
	case reusable > 0 && s.CachedReported > 0 && s.InputTokens > 0:
		w = append(w, fmt.Sprintf("the workload repeats %.1f%% of its prompt tokens %s; the server reported %.1f%% of prompt tokens cached (%d of %d)",
			100*reusable, what, 100*cached, s.CachedPromptTokens, s.InputTokens))
	case reusable > 0 && s.Completed > 0:
		w = append(w, fmt.Sprintf("the workload repeats %.1f%% of its prompt tokens %s; the server reported no cached tokens, so how much it reused is unknown", 100*reusable, what))
	}
	// a token or so per request (a shared BOS) is always cached; note past 5% of prompt tokens
	// more than the workload itself repeats
	if s.InputTokens > 0 && cached > reusable+0.05 {
		beyond := ""
		if reusable > 0 {
			beyond = fmt.Sprintf(", %.0f points more than the workload repeats", 100*(cached-reusable))
		}
		w = append(w, fmt.Sprintf("the server served %d of %d prompt tokens (%.0f%%) from its prefix cache%s: TTFT measures cache hits, not prefill. %s",
			s.CachedPromptTokens, s.InputTokens, 100*cached, beyond, cacheAdvice(h)))
	}
	return w
}

// cacheAdvice says where reuse the workload was not built for comes from, and what removes it.
func cacheAdvice(h *record.Header) string {
	const clear = "empty the server's cache before the run (--flush-cache on SGLang, --cache-salt per-run on vLLM, or a server restart)"
	switch {
	case h == nil:
	case h.Like != nil:
		return "This run replays its baseline's prompts (run --like), which the server has answered before: " + clear + " for both runs, or measure the baseline and this run on servers that had not seen them"
	case h.Config["prompts"] != nil && h.Config["prompts"] != "":
		return "A prompts file is sent as it is in every run and invocation: " + clear + ", or give each run prompts of its own"
	case h.Config["num_prompts"] != nil:
		return "--num-prompts cycles a fixed set of prompts, so requests repeat ones sent before: leave it out (every request then sends a prompt of its own), or " + clear
	}
	return "Every run of servebench sends prompts of its own, so the server had seen these before this invocation (an earlier one with the same --seed: give another --seed) or shares its cache with other traffic; or " + clear
}
