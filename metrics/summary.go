package metrics

import (
	"math"
	"time"

	"servebench/record"
)

// Summary is every figure of docs/design/METRICS.md for one run, computed from its records. Times in
// Stat values are nanoseconds; rates are per second. Optional scalars are nil when undefined
// (an empty window, no SLO), so that renderers print null or "—", never a false 0.
type Summary struct {
	// Percentiles is the percentile set of every Stat.
	Percentiles []float64
	// Simulated is true when the header says the target was servebench's built-in simulator.
	Simulated bool

	// Requests.
	Measured        int            // measured records: Completed + Failed (cancelled ones aside)
	Completed       int            // measured requests without error
	Failed          int            // measured requests with an error class
	FailureRate     float64        // Failed / Measured (0 when Measured is 0)
	Errors          map[string]int // failed requests per error class
	WarmupDiscarded int            // warmup records, never in statistics
	// Cancelled counts measured requests that servebench cancelled when it stopped (still in
	// flight after the grace period, or a second Ctrl-C): ours, not the server's failures, and
	// outside every figure.
	Cancelled int
	// CooldownDiscarded counts records sent in the cooldown of a steady-state window.
	CooldownDiscarded int
	ShortOutputs      int // fixed-output requests that got fewer tokens than MaxTokens

	// Tokens, over completed requests.
	InputTokens        int64          // Σ prompt tokens (vLLM total_input_tokens)
	OutputTokens       int64          // Σ output tokens (vLLM total_output_tokens)
	PromptTokenSources map[string]int // completed requests per prompt-count source
	OutputTokenSources map[string]int // completed requests per output-count source
	PromptTokens       Stat           // server-reported prompt tokens
	PromptDelta        Stat           // server-reported prompt tokens − requested InputTokens
	PromptMismatches   int            // requests where that delta is not zero
	// CachedPromptTokens is how many prompt tokens of completed requests the server says it
	// served from its prefix cache (llama.cpp timings.cache_n, SGLang cached_tokens): TTFT then
	// measures cache hits, not prefill. It is only a figure when CachedReported > 0: a server
	// that reports nothing has not said that nothing was cached.
	CachedPromptTokens int64
	// CachedReported is how many completed requests carried a cached-token count from the
	// server (0: not reported, which is not the same as 0 cached).
	CachedReported int
	// CachedShare is CachedPromptTokens over the prompt tokens of the requests that reported a
	// cached count; nil when none did.
	CachedShare *float64
	// CachedBeyondOpening is the part of CachedPromptTokens beyond each request's opening:
	// the tokens the server adds itself (BOS, a chat template: its prompt count beyond the
	// text asked for, at least 1) and sharedOpening more, a phrase many texts begin with. A
	// prefix cache serves an opening on any workload; only what lies beyond it says a prompt
	// was seen before, and the cache note's threshold is judged on it.
	CachedBeyondOpening int64
	// RepeatedPromptTokens is the prompt tokens of the completed measured requests that repeat
	// the beginning of a prompt sent before them in the run, by design (Record.Repeats of each
	// times its prompt tokens, rounded): what a prefix cache may serve without a replay.
	RepeatedPromptTokens int64

	// Window: "from the first sent of a measured request to the last done of a measured
	// request". WindowStart and WindowEnd are ns since t0.
	WindowStart, WindowEnd int64
	Window                 time.Duration
	// Shards is how many shards of a merged split run sent requests (0 or 1: not a merge),
	// and ShardStartSkew the spread of their first sends, warmup included, on the merged
	// (wall) clock: the latest shard's first send − the earliest's (shards.go).
	Shards         int
	ShardStartSkew time.Duration
	// SteadyState is true when Window is a steady-state window's length (--duration less its
	// warmup and cooldown periods) rather than first sent → last done.
	SteadyState bool

	// Throughput (per second of Window; failed requests are not in the numerators).
	RequestThroughput    *float64 // Completed / window
	OutputThroughput     *float64 // Σ output tokens / window
	TotalTokenThroughput *float64 // Σ (prompt + output) tokens / window
	// PeakOutputTokensPerS is the most tokens in any 1 s bucket aligned to WindowStart, with
	// events placed to the millisecond: an event in a bucket's first millisecond but earlier
	// in it than WindowStart is in its millisecond counts in the next bucket; the window's
	// last whole second stands in for a partial last bucket (see tokenHist.peak).
	PeakOutputTokensPerS *int64
	// PeakUnknownEvents is how many events entered the peak as one token each because their
	// token count was unknown.
	PeakUnknownEvents int
	// WarmupOverlap is the share of the window in which warmup requests were still being
	// served (overlap.go); nil without a warmup.
	WarmupOverlap *float64

	// Goodput: "requests meeting every given SLO / window" (nil without SLOs).
	SLO            SLO
	GoodRequests   int
	RequestGoodput *float64
	// SLOAttainment is the share (0..1) of measured requests that met every SLO: GoodRequests
	// / Measured (which leaves out requests cancelled by our own stop: those are ours, not the
	// server's). Failed requests count as misses. Nil without SLOs or without requests.
	SLOAttainment *float64

	// Ends are the RunEnd lines of the runs in this summary (stop reason, load, measurement
	// quality), from the header as the records file's Reader found them.
	Ends []record.RunEnd

	// Load.
	MeanConcurrency *float64 // Σ (done − sent) / window (Little's law)
	MaxInFlight     int      // exact maximum of requests between sent and done
	AchievedRate    *float64 // measured sent requests / (last sent − first sent)
	Lateness        Stat     // dispatched − scheduled over every dispatched measured request

	// Per-request latency distributions (completed requests; ns unless noted).
	TTFT           Stat // first content event − sent
	TTFTDispatch   Stat // first content event − dispatched (vLLM's TTFT)
	TTFTFirstEvent Stat // first_event − sent (vLLM's choice of event)
	E2E            Stat // last content event − sent (vLLM e2el)
	E2EQueue       Stat // last content event − scheduled
	StreamTime     Stat // done − sent
	Queue          Stat // dispatched − scheduled
	TPOT           Stat // (E2E − TTFT)/(output_tokens − 1), ns
	DecodeRate     Stat // (output_tokens − 1)/(E2E − TTFT), tokens/s
	ITLChunk       Stat // pooled gaps between consecutive content events
	ITLToken       Stat // pooled gaps divided evenly among their later event's tokens
	Connect        Stat // DNS + dial + TLS of new connections
	ClientOverhead Stat // TTFT from dispatch − TTFT = sent − dispatched
	ClientOwnDelay Stat // ClientOverhead less connection set-up: servebench's own delay
	// TTFTMedianCI and E2EMedianCI are the distribution-free 95% intervals of the TTFT and
	// E2E medians (stat.MedianCI), ns: a run's own noise, against which RepeatCheck judges
	// whether the runs of a --repeat file disagree.
	TTFTMedianCI, E2EMedianCI Interval
	// TTFTSplit takes TTFT apart into to-headers, server prefill and the rest, where the
	// server reports each request's prefill time (ttftsplit.go); nil otherwise.
	TTFTSplit *TTFTSplit
	// Decomposition takes TTFT apart by the server's own spans joined to each request
	// (serverspans.go); nil when the run received none.
	Decomposition *Decomposition
	// Reasoning is the time to first output (answer) token, the reasoning and answer token
	// counts and each phase's ITL (reasoning.go); nil unless a request reasoned.
	Reasoning *Reasoning
	// Tools are the tool calls and agent tasks of a run that offered tools (agents.go); nil
	// otherwise.
	Tools *Tools
	// Answers are the accuracy and schema-validity figures of a run that judged its answers
	// (answers.go); nil otherwise.
	Answers *Answers

	// ITLTokenRequests and ITLTokenSkipped count requests (with ≥ 2 events) that did and did
	// not have per-event token counts for ITL (token).
	ITLTokenRequests, ITLTokenSkipped int

	// Sessions are a multi-turn run's per-session figures (sessions.go; per turn index, see
	// the "turn" breakdown); nil otherwise.
	Sessions *SessionSummary
	// Breakdowns are the summary grouped by each registered per-request key that any request
	// had (breakdown.go): per LoRA adapter, per load stage, ...; nil otherwise.
	Breakdowns []Breakdown
	// Media is what the requests' images and audio weighed (media.go); nil without media.
	Media *MediaSummary
	// Pooling are an embeddings or rerank run's figures (pooling.go); nil for generation.
	Pooling *Pooling
	// Steadiness is the steady-state check over the window (steady.go).
	Steadiness *Steadiness
	// LateWarmup, in a run whose --warmup auto stopped, names the first measured requests
	// when they ran slower than the rest: the warmup ended too early (latewarmup.go).
	LateWarmup *LateWarmup
	// Server is the server's own view of the window from its Prometheus samples (server.go);
	// nil when the file has none for this run.
	Server *Server

	// Warnings are notes for the reader, printed as footnotes: each with its level and next
	// step, the ones that invalidate a figure first, each said once.
	Warnings []Warning
}

// Summary computes the summary of every record added so far. It sorts the stored values in
// place and may be called again after more Adds.
func (a *Accumulator) Summary() *Summary {
	ps := a.opt.percentiles()
	s := &Summary{
		Percentiles:       append([]float64(nil), ps...),
		Simulated:         a.hdr != nil && a.hdr.Target.Simulated,
		Measured:          a.n.measured,
		Completed:         a.n.completed,
		Failed:            a.n.failed,
		Cancelled:         a.n.cancelled,
		Errors:            copyMap(a.n.errors),
		WarmupDiscarded:   a.n.warmup,
		CooldownDiscarded: a.n.cooldown,
		ShortOutputs:      a.n.short,

		InputTokens:        a.n.inputTokens,
		OutputTokens:       a.n.outputTokens,
		PromptTokenSources: copyMap(a.n.promptSrc),
		OutputTokenSources: copyMap(a.n.outputSrc),
		PromptTokens:       a.promptServer.stat(ps),
		PromptDelta:        a.promptDelta.stat(ps),
		PromptMismatches:   a.n.promptMismatch,
		CachedPromptTokens: a.n.cachedPrompt, CachedReported: a.n.cachedReported, CachedBeyondOpening: a.n.cachedBeyond,
		RepeatedPromptTokens: int64(math.Round(a.n.repeated)),
		SLO:                  a.opt.SLO,
		GoodRequests:         a.n.good,
		Lateness:             a.lateness.stat(ps),
		ITLTokenRequests:     a.n.itlTokenReqs,
		ITLTokenSkipped:      a.n.itlTokenSkipped,
	}
	if s.Measured > 0 {
		s.FailureRate = float64(s.Failed) / float64(s.Measured)
	}
	a.distributions(s, ps)
	a.runLevel(s)
	a.attainment(s)
	s.Ends = a.ends()
	s.Server = a.server(s)
	s.Sessions = a.sessions.summary(ps)
	if a.n.cachedOf > 0 {
		s.CachedShare = ptr(float64(a.n.cachedPrompt) / float64(a.n.cachedOf))
	}
	s.Media = a.media.summary(ps)
	s.Tools = a.toolSummary(ps) // agents.go
	s.Pooling = a.pooling(s)
	s.Breakdowns = a.breakdowns(s)
	s.Answers = a.answers.summary()
	s.Steadiness = a.stagedSteadiness(a.steady.check(a.closedUsers(), a.openLoop(), a.health(), a.capped())) // stages.go
	s.LateWarmup = a.lateWarmup(s)
	s.Warnings = warnings(s, a.hdr)
	if s.LateWarmup != nil {
		s.Warnings = append(s.Warnings, lateWarmupWarning(s.LateWarmup))
	}
	if s.Streams() { // the steady check reads streamed figures: a pooling run is not checked
		s.Warnings = append(s.Warnings, note(steadyWarning(s.Steadiness)...)...)
		s.Warnings = append(s.Warnings, contentionNote(s.Steadiness)...) // steadycontention.go
	}
	s.Warnings = append(s.Warnings, a.loadWarnings(s)...)
	s.Warnings = append(s.Warnings, gpuWarnings(s)...)
	s.Warnings = append(s.Warnings, a.coldWarmWarnings(s)...)
	s.Shards, s.ShardStartSkew = a.shards.skew()
	s.Warnings = append(s.Warnings, shardWarnings(s)...)
	s.Warnings = ordered(s.Warnings)
	return s
}

// lateWarmup is the late-warmup check (latewarmup.go) for a file of one run whose --warmup
// auto stopped; it reads the steady check's requests, sorted by its check.
func (a *Accumulator) lateWarmup(s *Summary) *LateWarmup {
	if len(s.Ends) != 1 || s.Ends[0].WarmupStop == "" || s.Ends[0].WarmupStop == "not reached" || s.Steadiness == nil || !s.Streams() {
		return nil
	}
	tol := 0.1
	if a.hdr != nil {
		if v, ok := a.hdr.Config["warmup_tolerance"].(float64); ok && v > 0 {
			tol = v
		}
	}
	return a.steady.lateWarmup(tol, s.Ends[0].WarmupRequests)
}

// closedUsers is a closed loop's user count from the header (0: an open loop or unknown).
func (a *Accumulator) closedUsers() int {
	if a.hdr == nil || a.openLoop() {
		return 0
	}
	c, _ := a.hdr.Config["concurrency"].(float64)
	return int(c)
}

// openLoop reports whether the header's run was an open loop (an arrival schedule).
func (a *Accumulator) openLoop() bool {
	if a.hdr == nil {
		return false
	}
	if a.hdr.Load != nil && a.hdr.Sweep == "" {
		return a.hdr.Load.Open // the spec's own answer (a trace dataset is an open loop too)
	}
	c := a.hdr.Config
	rate, _ := c["rate"].(float64)
	ramp, _ := c["ramp"].(string)
	trace, _ := c["trace"].(string)
	return rate > 0 || ramp != "" || trace != "" || a.hdr.Sweep == "rate"
}

func (a *Accumulator) distributions(s *Summary, ps []float64) {
	s.TTFT = a.ttft.stat(ps)
	s.TTFTDispatch = a.ttftDispatch.stat(ps)
	s.TTFTFirstEvent = a.ttftFirst.stat(ps)
	s.E2E = a.e2e.stat(ps)
	s.TTFTMedianCI, s.E2EMedianCI = medianInterval(a.ttft), medianInterval(a.e2e) // sorted by stat
	s.E2EQueue = a.e2eQueue.stat(ps)
	s.StreamTime = a.stream.stat(ps)
	s.Queue = a.queue.stat(ps)
	s.TPOT = a.tpot.stat(ps)
	s.DecodeRate = a.decode.stat(ps)
	s.ITLChunk, s.ITLToken = a.itl.stats(ps)
	s.Connect = a.connect.stat(ps)
	s.ClientOverhead = a.overhead.stat(ps)
	s.ClientOwnDelay = a.ownDelay.stat(ps)
	s.TTFTSplit = a.split.summary(ps)
	s.Decomposition = a.decomposition()
	s.Reasoning = a.reason.summary(ps)
}

// runLevel fills the window, throughput, goodput and load figures.
func (a *Accumulator) runLevel(s *Summary) {
	start, end, ok := a.run.window()
	if !ok {
		return
	}
	s.WindowStart, s.WindowEnd, s.Window = start, end, time.Duration(end-start)
	s.MaxInFlight = a.run.maxInFlight()
	if first, last := a.run.sentSpan(); last > first {
		// Achieved rate = measured requests / (last sent − first sent); "measured requests"
		// are those that were sent.
		s.AchievedRate = ptr(float64(len(a.run.starts)) / seconds(last-first))
	}
	if peak, ok := a.run.peakTokens(start, end); ok {
		s.PeakOutputTokensPerS = &peak
		s.PeakUnknownEvents = a.run.unknownEvents()
	}
	if share, ok := a.warmEnd.overlap(start, end); ok {
		s.WarmupOverlap = &share
	}
	if end <= start {
		return
	}
	w := seconds(end - start)
	if a.opt.Window > 0 {
		// steady state: the window's length is the divisor (docs/design/METRICS.md)
		w, s.Window, s.SteadyState = a.opt.Window.Seconds(), a.opt.Window, true
	}
	s.RequestThroughput = ptr(float64(s.Completed) / w)
	s.OutputThroughput = ptr(float64(s.OutputTokens) / w)
	s.TotalTokenThroughput = ptr(float64(s.InputTokens+s.OutputTokens) / w)
	s.MeanConcurrency = ptr(float64(a.run.busy) / 1e9 / w)
	if s.SLO.Any() {
		s.RequestGoodput = ptr(float64(s.GoodRequests) / w)
	}
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

func ptr[T any](v T) *T { return &v }

func copyMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// health is the load generator's health windows of the runs added (record.Quality).
func (a *Accumulator) health() []record.HealthWindow {
	var out []record.HealthWindow
	for _, e := range a.ends() {
		if e.Quality != nil {
			out = append(out, e.Quality.Windows...)
		}
	}
	return out
}

// capped reports whether the header's load had a concurrency cap on an open loop
// (--max-concurrency): a send then waits for a slot, and its lateness is not the client's.
func (a *Accumulator) capped() bool {
	if a.hdr == nil {
		return false
	}
	c, _ := a.hdr.Config["max_concurrency"].(float64)
	return c > 0
}
