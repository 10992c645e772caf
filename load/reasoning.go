package load

import (
	"servebench/client"
	"servebench/record"
)

// reasonState is what a request's stamp keeps of a reasoning model's output (record's
// reasoning.go): which content events were reasoning only, and the server's count.
type reasonState struct {
	next      bool // the next content event carries reasoning only (client.ReasoningObserver)
	sum       int  // tokens of the reasoning events, by their per-event counts
	unknown   bool // a reasoning event had no per-event count
	server    int  // usage.completion_tokens_details.reasoning_tokens, latest
	hasServer bool
}

var _ client.ReasoningObserver = (*stamp)(nil)

// Reasoning implements client.ReasoningObserver: the next content event is reasoning only.
func (s *stamp) Reasoning() { s.reason.next = true }

// ReasoningTokens implements client.ReasoningObserver.
func (s *stamp) ReasoningTokens(n int) { s.reason.server, s.reason.hasServer = n, true }

// event places the content event just appended to r (carrying tokens) in its phase. While
// every event so far was reasoning only, a reasoning event extends the reasoning and the
// first other one is the first answer event; its time is kept only when reasoning came
// before it, so a record of a model that does not reason is unchanged.
func (rs *reasonState) event(r *record.Record, tokens int) {
	reasoning := rs.next
	rs.next = false
	if r.FirstAnswer != 0 || len(r.Events)-1 != r.ReasoningEvents {
		return // the answer has begun
	}
	switch {
	case reasoning:
		r.ReasoningEvents++
		rs.sum += tokens
		rs.unknown = rs.unknown || tokens <= 0
	case r.ReasoningEvents > 0:
		r.FirstAnswer = r.Events[len(r.Events)-1].T
	}
}

// finish fills the reasoning token count with its source: the server's count first, then
// the reasoning events' own counts when each had one, then one token per reasoning event.
func (rs *reasonState) finish(r *record.Record) {
	switch {
	case rs.hasServer && rs.server > 0:
		r.ReasoningTokens, r.ReasoningTokensSource = rs.server, record.SourceServer
	case r.ReasoningEvents == 0:
	case !rs.unknown:
		r.ReasoningTokens, r.ReasoningTokensSource = rs.sum, record.SourceEvents
	default:
		r.ReasoningTokens, r.ReasoningTokensSource = r.ReasoningEvents, record.SourceCount
	}
}
