package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servebench/record"
)

// Thresholds of the client-overhead warning: servebench's own delay between dispatch and
// sent (connection set-up left out) at p99 above 1 ms and above 5% of the median TTFT means
// the load generator itself delays requests enough to matter.
const (
	overheadAbsNS = 1e6
	overheadRel   = 0.05
	latenessNS    = 10e6 // lateness p99 above 10 ms: requests left later than scheduled
)

// Level ranks a warning by what it does to the figures. The zero value is Distorts, the level
// of a warning that names none.
type Level int

// Warning levels, in the order a reader needs them: what makes a figure wrong first.
const (
	Distorts    Level = iota // a figure may be distorted: read it with the note in mind
	Invalidates              // a figure is wrong, missing or not the server's: fix before using it
	Info                     // information: the figures stand
)

// rank orders levels for output: invalidates, distorts, info.
func (l Level) rank() int {
	switch l {
	case Invalidates:
		return 0
	case Info:
		return 2
	}
	return 1
}

// String is the level's name in text and Markdown output.
func (l Level) String() string {
	switch l {
	case Invalidates:
		return "invalidates"
	case Info:
		return "info"
	}
	return "may distort"
}

// MarshalText is the level's name in JSON: invalidates, distorts or info.
func (l Level) MarshalText() ([]byte, error) {
	if l == Distorts {
		return []byte("distorts"), nil
	}
	return []byte(l.String()), nil
}

// Warning is one note for the reader (docs/design/STYLE.md "Warnings are data"): how much it matters, what
// was seen, and the next step that works.
type Warning struct {
	Level  Level  `json:"level"`
	Text   string `json:"text"`             // what was seen, said once
	Action string `json:"action,omitempty"` // the next step that works; "" when none is needed
}

// String is the warning as one line: its text, then its action.
func (w Warning) String() string {
	if w.Action == "" {
		return w.Text
	}
	return w.Text + ". Next: " + w.Action
}

// note makes a warning of the default level (Distorts) from a message that carries its own
// next step, for notes that name no level.
func note(msgs ...string) []Warning {
	out := make([]Warning, len(msgs))
	for i, m := range msgs {
		out[i] = Warning{Text: m}
	}
	return out
}

// warn formats a warning.
func warn(l Level, action, format string, args ...any) Warning {
	return Warning{Level: l, Text: fmt.Sprintf(format, args...), Action: action}
}

// Texts returns the warnings as lines (Warning.String), for outputs that keep plain strings.
func Texts(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// ordered sorts warnings by level (invalidates first), keeping their order within a level,
// and drops a repeat of a text already said.
func ordered(ws []Warning) []Warning {
	seen := map[string]bool{}
	out := ws[:0]
	for _, w := range ws {
		if !seen[w.Text] {
			seen[w.Text] = true
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b Warning) int { return a.Level.rank() - b.Level.rank() })
	return out
}

// warnings returns the notes for a summary in a fixed order, so that output is deterministic
// (Summary sorts them by level afterwards).
func warnings(s *Summary, h *record.Header) []Warning {
	var w []Warning
	add := func(l Level, action, format string, args ...any) { w = append(w, warn(l, action, format, args...)) }
	if s.Simulated {
		// information, not a flaw of the measurement: the figures are the simulator's, exactly
		// measured (the banner says so too), so it does not lower the run's quality
		add(Info, "give --url to measure a real server", "the target is servebench's built-in simulator: these are not a real server's figures")
	}
	if s.Measured == 0 {
		add(Invalidates, "check --requests or --duration", "no measured requests: nothing to summarise")
	} else if s.Completed == 0 {
		add(Invalidates, "read the first error in the records (error field) and fix the request or the server", "every measured request failed: there are no latency or throughput figures")
	}
	if s.Cancelled > 0 {
		switch cancelledBy(s.Ends) {
		case "second-stop":
			add(Info, "stop once (one Ctrl-C) to let them finish within --grace", "%d requests were still in flight at the second stop (Ctrl-C or SIGTERM twice) and were cancelled at once: they are not failures and are in no figure", s.Cancelled)
		case "grace":
			add(Info, "a longer --grace lets them finish", "%d requests were still in flight when sending stopped and were cancelled at the end of the grace period: they are not failures and are in no figure", s.Cancelled)
		default: // a file from before run-end lines said which
			add(Info, "", "%d requests were still in flight when the run stopped and were cancelled: they are not failures and are in no figure", s.Cancelled)
		}
	}
	if s.Failed > 0 {
		add(Distorts, "read their error field in the records; servebench report --format csv lists them", "%d of %d requests failed (%.1f%%: %s); failed requests are excluded from every latency figure and from throughput",
			s.Failed, s.Measured, 100*s.FailureRate, ClassList(s.Errors))
	}
	if s.ShortOutputs > 0 {
		add(Distorts, "check that the server honours ignore_eos/min_tokens, or run with --fixed-output=false and compare like with like", "%d fixed-length requests returned fewer tokens than max_tokens: the server stopped early, so the workload moved under the measurement",
			s.ShortOutputs)
	}
	if r := s.Reasoning; r != nil && r.Contradicted > 0 {
		x := r.Example
		add(Distorts, "check the server's usage counts; the records keep them as sent", "%d requests report reasoning token counts their streams contradict (the first, request %d of run %d: %d reasoning tokens (%s) of %d output tokens, with %d answer events streamed): their answer tokens are counted as output − reasoning, at least 0",
			r.Contradicted, x.ID, x.Run, x.ReasoningTokens, x.Source, x.OutputTokens, x.Events)
	}
	for _, e := range s.Ends {
		switch e.WarmupStop {
		case "max requests", "max time":
			add(Distorts, "raise --warmup-max or --warmup-timeout, or find what keeps the server moving", "--warmup auto stopped at its cap (%s) after %d warmup requests without the warmup settling: the server may not have been warm when measuring began", e.WarmupStop, e.WarmupRequests)
		case "not reached":
			add(Invalidates, "run longer (--requests or --duration)", "the run ended while still warming (--warmup auto, %d requests): nothing was measured warm", e.WarmupRequests)
		}
		if ra := e.RepeatAuto; ra != nil && ra.Stop == "cap" {
			add(Distorts, "raise --repeat-max, or find what makes the runs differ", "--repeat auto stopped at its cap of %d runs before every key metric's run-to-run 95%% interval was within ±%.3g%%: this baseline is less certain than asked", ra.Max, 100*ra.Target)
		}
	}
	w = append(w, tokenWarnings(s, h)...)
	w = append(w, clientWarnings(s)...)
	return w
}

// tokenWarnings say where token counts are estimates.
func tokenWarnings(s *Summary, h *record.Header) []Warning {
	var w []Warning
	add := func(l Level, action, format string, args ...any) { w = append(w, warn(l, action, format, args...)) }
	// one root cause, said once: without usage or per-event counts, the output counts, the
	// peak and ITL (token) all rest on one token per event
	perEvent := s.Completed > 0 && s.OutputTokenSources[record.SourceCount] == s.Completed
	if n := s.OutputTokenSources[record.SourceCount]; n > 0 {
		also := ""
		if perEvent {
			also = ", so the peak output tokens/s counts events and ITL (token) is empty"
		}
		add(Distorts, "ask the server for usage (stream_options.include_usage)", "output token counts for %d requests are estimates: one per event (the server sent no usage)%s", n, also)
	}
	if n := s.OutputTokenSources[record.SourceTokenizer]; n > 0 {
		add(Info, "", "output token counts for %d requests come from a client-side tokenizer, not the server", n)
	}
	switch {
	case h == nil || h.Workload.PromptLengths != "approximate":
	case h.Workload.Tokenizer != "":
		// a tokenizer measured them, and the builder could not reach some lengths: a trace's
		// blocks longer than a row (another --block-tokens), or words that ran out
		add(Distorts, "the run's \"built N prompts\" log line says how many; for a trace, replay it with the --block-tokens it was made with",
			"prompt lengths are approximate: %s measured the prompts, but some could not be built to the length the workload asks for: their input lengths are not all the workload's", h.Workload.Tokenizer)
	default:
		add(Distorts, "give --tokenizer a tokenizer.json, or a server with a tokenize endpoint", "prompt lengths are approximate (no tokenizer was reachable when the workload was built): input lengths requested are estimates")
	}
	if n := s.PromptTokenSources[record.SourceRequested]; n > 0 {
		add(Info, "", "input token counts for %d requests are the requested lengths: the server reported no prompt usage", n)
	}
	// Exactly one more token everywhere is the BOS token the server adds to a prompt that its
	// tokenize endpoint counted without it (llama.cpp): the prompts have the requested length,
	// nothing moved, and the summary's server prompt tokens already show it.
	bosOnly := s.PromptDelta.Min == 1 && s.PromptDelta.Max == 1
	if s.PromptMismatches > 0 && !bosOnly {
		add(Distorts, "build the workload with the server's own tokenizer (the default) or the model's tokenizer.json (--tokenizer)", "server-reported prompt tokens differ from the requested length for %d requests (mean %+.1f tokens): the chat template or tokenizer differs from the one that built the workload",
			s.PromptMismatches, s.PromptDelta.Mean)
	}
	w = append(w, cacheWarnings(s, h)...)
	if s.PeakUnknownEvents > 0 && !perEvent {
		add(Info, "", "peak output tokens/s counts one token per event for %d events whose token count was unknown", s.PeakUnknownEvents)
	}
	switch {
	case perEvent:
	case s.ITLTokenSkipped > 0 && s.ITLTokenRequests == 0:
		add(Info, "on vLLM, --continuous-usage-stats true", "ITL (token) is empty: the server's events carried no token counts and its usage did not show one token per event, so ITL is per event only (ITL (chunk))")
	case s.ITLTokenSkipped > 0:
		add(Info, "", "ITL (token) leaves out %d requests without per-event token counts (%d included)", s.ITLTokenSkipped, s.ITLTokenRequests)
	}
	return w
}

// cacheWarnings set the prompt tokens the server served from its prefix cache beside the
// reuse the workload was built for (repeatedShare), and name reuse it was not built for with
// an action that removes it. The tool's own runs never cause it (every run, warmup and sweep
// point sends prompts of its own), so what is left is a replay the user asked for or a server
// that saw the prompts elsewhere.
func cacheWarnings(s *Summary, h *record.Header) []Warning {
	reusable, what := repeatedShare(s, h)
	cached, beyond := 0.0, 0.0
	if s.InputTokens > 0 {
		cached = float64(s.CachedPromptTokens) / float64(s.InputTokens)
		beyond = float64(s.CachedBeyondOpening) / float64(s.InputTokens)
	}
	var w []Warning
	switch {
	case reusable > 0 && s.CachedReported > 0 && s.InputTokens > 0:
		w = append(w, warn(Info, "", "the workload repeats %.1f%% of its prompt tokens by design%s; the server served %.1f%% from its prefix cache (%d of %d)",
			100*reusable, what, 100*cached, s.CachedPromptTokens, s.InputTokens))
	case reusable > 0 && s.Completed > 0:
		w = append(w, warn(Info, "", "the workload repeats %.1f%% of its prompt tokens by design%s; the server reported no cached tokens, so how much it reused is unknown", 100*reusable, what))
	}
	w = append(w, reuseCheck(s, h, reusable, cached)...)
	// each request's opening (a BOS, a chat template, a common first phrase) is cached on any
	// workload; warn when what lies beyond the openings passes 5% of prompt tokens more than
	// the workload itself repeats
	if s.InputTokens > 0 && beyond > reusable+0.05 {
		design := ""
		if reusable > 0 {
			design = fmt.Sprintf(", %.0f points more than the workload repeats by design (%.1f%%)", 100*(cached-reusable), 100*reusable)
		}
		where, action := cacheAdvice(h)
		first, _ := s.firstFigure()
		w = append(w, warn(Invalidates, action, "the server served %d of %d prompt tokens (%.0f%%) from its prefix cache%s: %s measures cache hits, not prefill. %s",
			s.CachedPromptTokens, s.InputTokens, 100*cached, design, first, where))
	}
	if s.Completed > 0 && s.CachedReported == 0 && !s.Simulated && h != nil && strings.HasPrefix(h.Target.API, "openai") && s.Streams() {
		w = append(w, warn(Info, "start vLLM with --enable-prompt-tokens-details (usage.prompt_tokens_details.cached_tokens); llama.cpp and SGLang report them by default",
			"the server reported no cached prompt tokens, so whether TTFT measured prefix-cache hits is unknown (not 0)"))
	}
	return w
}

// reuseGap is how far apart, in points, the reuse a run set (--reuse), the share its workload
// repeats by design and the share the server served from its cache may be and still agree.
const reuseGap = 0.05

// reuseCheck sets the reuse the run set (--reuse) against the share its workload repeats by
// design (reusable) and the share the server served from its cache (cached): within reuseGap
// of each other it says so; beyond, it says which side moved — the workload (its share is not
// the one set) or the server (its cache served less, or more, than the workload repeats).
func reuseCheck(s *Summary, h *record.Header, reusable, cached float64) []Warning {
	set, ok := reuseSet(h)
	switch {
	case !ok || s.Completed == 0 || s.InputTokens == 0:
		return nil
	case s.CachedReported == 0:
		return []Warning{warn(Info, "start vLLM with --enable-prompt-tokens-details; llama.cpp and SGLang report them by default",
			"--reuse %.0f%% is not checked: the server reported no cached tokens", 100*set)}
	}
	figures := fmt.Sprintf("--reuse %.0f%%: the workload repeats %.1f%% of its prompt tokens by design, the server served %.1f%% from its prefix cache",
		100*set, 100*reusable, 100*cached)
	var moved []string
	if d := reusable - set; math.Abs(d) > reuseGap {
		moved = append(moved, fmt.Sprintf("the workload moved: it repeats %.0f points %s than set (the lengths or the count it was laid out for changed)", 100*math.Abs(d), moreLess(d)))
	}
	switch d := cached - reusable; {
	case d < -reuseGap:
		moved = append(moved, fmt.Sprintf("the server moved: it served %.0f points less than the workload repeats (its cache is off, too small for the prefixes in flight, or evicted them)", -100*d))
	case d > reuseGap:
		moved = append(moved, fmt.Sprintf("the server moved: it served %.0f points more than the workload repeats (it had seen these prompts before)", 100*d))
	}
	if len(moved) == 0 {
		return []Warning{warn(Info, "", "%s: within %.0f points, as set", figures, 100*reuseGap)}
	}
	return []Warning{warn(Distorts, "", "%s: %s", figures, strings.Join(moved, "; "))}
}

func moreLess(d float64) string {
	if d > 0 {
		return "more"
	}
	return "less"
}

// reuseSet is the reuse the run's configuration set (--reuse), if it set one.
func reuseSet(h *record.Header) (float64, bool) {
	if h == nil || h.Config == nil {
		return 0, false
	}
	v, ok := h.Config["reuse"].(string)
	if !ok || v == "" {
		return 0, false
	}
	share, err := ParseShare("--reuse", v)
	return share, err == nil
}

// repeatedShare is the share of the run's prompt tokens its workload repeats by design, and
// how ("" or a clause): the prompt tokens of its measured requests that begin as a prompt
// sent before them in the run (Record.Repeats: shared prefixes, a session's history, a prompt
// sent again, the warmup's included); for a file from before records carried it, the header's
// share, computed for shared-prefix groups, traces' hash ids and sessions only.
func repeatedShare(s *Summary, h *record.Header) (share float64, what string) {
	if h == nil {
		return 0, ""
	}
	if strings.HasSuffix(h.Workload.Source, "+sessions") {
		what = ", as session history (each turn sends the conversation so far)"
	}
	if !h.Workload.RepeatsRecorded {
		return h.Workload.ReusableShare, what
	}
	if s.InputTokens > 0 {
		share = float64(s.RepeatedPromptTokens) / float64(s.InputTokens)
	}
	return share, what
}

// clientWarnings say when the load generator, not the server, shaped the figures. TTFT starts
// at sent, so the client's delay before it (and connection set-up) is outside TTFT: it only
// matters when it is a visible share of TTFT (TTFT from dispatch, a slower send rate).
func clientWarnings(s *Summary) []Warning {
	var w []Warning
	first, st := s.firstFigure()
	own, ok := s.ClientOwnDelay.Percentile(99)
	if ok && st.Valid() && own > overheadAbsNS && own > overheadRel*st.Median {
		w = append(w, warn(Distorts, "give servebench more CPU, or split the load over processes (--shard)",
			"servebench's own delay between dispatch and sent is %.2f ms at p99 (%.0f%% of %s p50; connection set-up left out): the load generator may be the bottleneck",
			own/1e6, 100*own/st.Median, first))
	}
	// More new connections than requests ever in flight: the server closed kept-alive
	// connections (llama.cpp's HTTP server does), so requests paid for a new one.
	if cp, ok := s.Connect.Percentile(99); ok && s.Connect.N > s.MaxInFlight && s.MaxInFlight > 0 {
		l := Info
		if st.Valid() && cp > overheadRel*st.Median {
			l = Distorts
		}
		w = append(w, warn(l, fmt.Sprintf("compare %[1]s from dispatch only between runs against the same server; %[1]s itself is unaffected", first),
			"%d of %d requests opened a new connection (%.2f ms at p99) though at most %d were in flight: the server closed kept-alive connections; %s starts after it, %s from dispatch includes it",
			s.Connect.N, s.Completed, cp/1e6, s.MaxInFlight, first, first))
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

// cacheAdvice says where reuse the workload was not built for comes from, and what removes it.
func cacheAdvice(h *record.Header) (where, action string) {
	const clear = "empty the server's cache before the run (--flush-cache on SGLang, --cache-salt per-run on vLLM, or a server restart)"
	switch {
	case h == nil:
	case h.Like != nil:
		return "This run replays its baseline's prompts (run --like), which the server has answered before", "add --nonce fresh (the baseline's lengths and settings, text of this run's own), or " + clear
	case h.Config["prompts"] != nil && h.Config["prompts"] != "":
		return "A prompts file is sent as it is in every run and invocation", clear + ", or give each run prompts of its own"
	case h.Config["num_prompts"] != nil:
		return "--num-prompts cycles a fixed set of prompts, so requests repeat ones sent before", "leave --num-prompts out (every request then sends a prompt of its own), or " + clear
	case h.Workload.Nonce == "" && h.Workload.Source == "synthetic":
		return "The prompts are the seed's alone (--nonce off or a shard), so an earlier invocation with the same --seed sent the same text", "leave --nonce at fresh (the default), give another --seed, or " + clear
	}
	return "Every run of servebench sends prompts of its own, and every invocation text of its own (--nonce fresh), so the server had seen these elsewhere or shares its cache with other traffic", clear
}

// WarningTexts returns the summary's warnings as lines (Warning.String).
func (s *Summary) WarningTexts() []string { return Texts(s.Warnings) }

// cancelledBy is what cancelled the runs' requests in flight: "second-stop" when any run's
// were cancelled by a second stop, else "grace" when any run's grace period ran out, else "".
func cancelledBy(ends []record.RunEnd) string {
	by := ""
	for _, e := range ends {
		switch e.CancelledBy {
		case "second-stop":
			return e.CancelledBy
		case "grace":
			by = e.CancelledBy
		}
	}
	return by
}
