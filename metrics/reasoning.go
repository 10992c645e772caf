package metrics

import "servebench/record"

// Reasoning is a run's reasoning-model figures (record's reasoning.go says what a record
// keeps): when the answer began, how the output split between thinking and answer, and the
// inter-token latency of each phase. TTFT (Summary.TTFT) stays the time to the first token
// of any kind, reasoning included.
//
//   - TTFO, time to first output token (AIPerf's time_to_first_output_token, GuideLLM's
//     time_to_first_output_token_ms) = first answer event − sent: the first event carrying
//     answer text (delta.content, or a tool call) rather than reasoning only. For a request
//     that did not reason it is its TTFT. A request whose output ended while still reasoning
//     has none and is counted in NoAnswer.
//   - Reasoning time = first answer event − first content event: how long the user watched
//     the model think (requests that reasoned and answered).
//   - Reasoning tokens: the record's count (the server's usage.completion_tokens_details
//     .reasoning_tokens, else the reasoning events' counts); answer tokens = output tokens −
//     reasoning tokens. Both per completed request, 0 included.
//   - ITL (reasoning) and ITL (answer): ITL (chunk) split by the phase of the gap's later
//     event, pooled over requests: the gap that ends at the first answer event is the
//     answer's.
//
// It is nil unless some completed request reasoned, so a run without reasoning reads as before.
type Reasoning struct {
	Requests int // completed requests that reasoned
	Of       int // completed requests
	NoAnswer int // completed requests whose output ended while reasoning (no TTFO)

	TTFO, ReasoningTime           Stat // ns
	ReasoningTokens, AnswerTokens Stat // tokens per request
	TotalReasoning, TotalAnswer   int64
	ITLReasoning, ITLAnswer       Stat // ns
	// TokenSources counts reasoning requests per source of their reasoning token count.
	TokenSources map[string]int
	// Contradicted counts completed requests whose reasoning token count contradicts their
	// stream: more reasoning tokens than output tokens, or none left for the answer events
	// they streamed. Their answer tokens count as output − reasoning, floored at 0, so the
	// warning names the first of them (Example) with the figures; the records keep both.
	Contradicted int
	Example      Contradiction
}

// Contradiction is a request whose server counts contradict its stream, with the figures.
type Contradiction struct {
	ID, Run                               int
	ReasoningTokens, OutputTokens, Events int // Events: answer events streamed
	Source                                string
}

// contradicts reports whether r's reasoning token count contradicts its out output tokens and
// its stream: a part larger than the whole, or an answer streamed with no token left for it.
func contradicts(r *record.Record, out int) bool {
	answerEvents := len(r.Events) - r.ReasoningEvents
	return r.ReasoningTokens > out || (r.ReasoningTokens > 0 && r.ReasoningTokens >= out && answerEvents > 0 && r.Answered())
}

// reasoningAcc collects the reasoning figures of completed requests.
type reasoningAcc struct {
	requests, of, noAnswer  int
	ttfo, think, rTok, aTok sample
	totalR, totalA          int64
	itlR, itlA              sample
	sources                 map[string]int
	contradicted            int
	example                 Contradiction
}

// ttfo: first answer event − sent (the TTFT when the request did not reason).
func ttfo(r *record.Record) (int64, bool) {
	switch {
	case r.ReasoningEvents == 0:
		return ttft(r)
	case r.FirstAnswer == 0 || r.Sent == 0:
		return 0, false
	}
	return r.FirstAnswer - r.Sent, true
}

// reasoned reports whether the request shows any reasoning.
func reasoned(r *record.Record) bool { return r.ReasoningEvents > 0 || r.ReasoningTokens > 0 }

// add takes a completed request with out output tokens.
func (ra *reasoningAcc) add(r *record.Record, out int) {
	ra.of++
	if reasoned(r) {
		ra.requests++
		inc(&ra.sources, r.ReasoningTokensSource)
		if !r.Answered() {
			ra.noAnswer++
		}
	}
	if v, ok := ttfo(r); ok {
		ra.ttfo.add(float64(v))
	}
	if r.ReasoningEvents > 0 && r.FirstAnswer != 0 && len(r.Events) > 0 {
		ra.think.add(float64(r.FirstAnswer - r.Events[0].T))
	}
	if contradicts(r, out) {
		if ra.contradicted == 0 {
			ra.example = Contradiction{ID: r.ID, Run: r.Run, ReasoningTokens: r.ReasoningTokens, OutputTokens: out,
				Events: len(r.Events) - r.ReasoningEvents, Source: r.ReasoningTokensSource}
		}
		ra.contradicted++
	}
	rt := min(r.ReasoningTokens, out)
	ra.rTok.add(float64(rt))
	ra.aTok.add(float64(out - rt))
	ra.totalR += int64(rt)
	ra.totalA += int64(out - rt)
	for i := 1; i < len(r.Events); i++ {
		gap := float64(r.Events[i].T - r.Events[i-1].T)
		if i < r.ReasoningEvents {
			ra.itlR.add(gap)
		} else {
			ra.itlA.add(gap)
		}
	}
}

// summary is the reasoning section, nil when no completed request reasoned.
func (ra *reasoningAcc) summary(ps []float64) *Reasoning {
	if ra.requests == 0 {
		return nil
	}
	return &Reasoning{Requests: ra.requests, Of: ra.of, NoAnswer: ra.noAnswer,
		TTFO: ra.ttfo.stat(ps), ReasoningTime: ra.think.stat(ps),
		ReasoningTokens: ra.rTok.stat(ps), AnswerTokens: ra.aTok.stat(ps),
		TotalReasoning: ra.totalR, TotalAnswer: ra.totalA,
		ITLReasoning: ra.itlR.stat(ps), ITLAnswer: ra.itlA.stat(ps), TokenSources: copyMap(ra.sources),
		Contradicted: ra.contradicted, Example: ra.example}
}

// meetsTTFO reports whether r meets a TTFO objective of limit ns: a request with no answer
// does not.
func meetsTTFO(r *record.Record, limit int64) bool {
	v, ok := ttfo(r)
	return ok && v <= limit
}
