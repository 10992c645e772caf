package metrics

import (
	"servebench/record"
)

// Opt is an optional per-request figure: V is meaningful only when OK. An undefined figure
// (no content event, one output token) is printed empty, never as a false 0.
type Opt struct {
	V  float64
	OK bool
}

func optNS(v int64, ok bool) Opt { return Opt{V: float64(v), OK: ok} }

// RequestMetrics are the per-request figures of docs/design/METRICS.md for one record, computed by the
// same functions the Accumulator uses. Times are nanoseconds; DecodeRate is tokens/s.
type RequestMetrics struct {
	TTFT           Opt // first content event − sent
	TTFTFirstEvent Opt // first_event − sent
	TTFTDispatch   Opt // first content event − dispatched
	E2E            Opt // last content event − sent
	E2EQueue       Opt // last content event − scheduled
	StreamTime     Opt // done − sent
	Queue          Opt // dispatched − scheduled
	ClientOverhead Opt // sent − dispatched
	TPOT           Opt // (E2E − TTFT) / (output_tokens − 1), output_tokens > 1
	DecodeRate     Opt // (output_tokens − 1) / (E2E − TTFT), tokens/s
	// ITLMean is the mean of the request's ITL (chunk) gaps, (last − first event)/(events − 1):
	// the per-request average of the values the Accumulator pools.
	ITLMean Opt
	// ITLMax is the request's largest ITL (chunk) gap, the figure an ITL SLO is checked against.
	ITLMax Opt
	// TTFO is the time to first output (answer) token, first answer event − sent: TTFT when
	// the request did not reason (reasoning.go).
	TTFO Opt
	// ReasoningTokens is the reasoning part of OutputTokens (0 without reasoning).
	ReasoningTokens int

	PromptTokens       int    // prompt tokens, falling back to the requested length
	PromptTokensSource string // server | tokenizer | requested | ...
	OutputTokens       int    // output tokens, falling back to the events
	OutputTokensSource string // server | events | tokenizer | count
}

// PerRequest computes one record's figures. Unlike the Accumulator it does not look at the
// phase or the error class: a failed or warmup record gets every figure its timestamps
// allow, and the caller decides whether it counts (the Accumulator leaves failed and warmup
// requests out of every distribution).
func PerRequest(r *record.Record) RequestMetrics {
	var m RequestMetrics
	m.OutputTokens, m.OutputTokensSource = outputTokens(r)
	m.PromptTokens, m.PromptTokensSource = promptTokens(r)
	m.TTFT = optNS(ttft(r))
	m.TTFTFirstEvent = optNS(ttftFirstEvent(r))
	m.TTFTDispatch = optNS(ttftDispatch(r))
	m.TTFO, m.ReasoningTokens = optNS(ttfo(r)), min(r.ReasoningTokens, m.OutputTokens)
	m.E2E = optNS(e2eLatency(r))
	m.E2EQueue = optNS(e2eQueue(r))
	m.StreamTime = optNS(streamTime(r))
	m.Queue = optNS(queueTime(r))
	m.ClientOverhead = optNS(clientOverhead(r))
	if v, ok := tpotNS(r, m.OutputTokens); ok {
		m.TPOT = Opt{v, true}
	}
	if v, ok := decodeRate(r, m.OutputTokens); ok {
		m.DecodeRate = Opt{v, true}
	}
	if n := len(r.Events); n >= 2 {
		m.ITLMean = Opt{float64(r.Events[n-1].T-r.Events[0].T) / float64(n-1), true}
		m.ITLMax = Opt{float64(maxGap(r.Events)), true}
	}
	return m
}

// Span returns the interval in which a measured, sent request occupied the server, by the rule
// of the run-level figures (achieved concurrency, max in flight): from sent to done, or, when
// the stream never ended cleanly, to the latest moment it was observed. ok is false for a
// request that was never sent.
func Span(r *record.Record) (sent, end int64, ok bool) {
	if r.Sent == 0 {
		return 0, 0, false
	}
	return r.Sent, spanEnd(r), true
}
