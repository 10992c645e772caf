package client

// ReasoningObserver is an Observer that also tells a reasoning model's thinking from its
// answer. A backend whose wire format separates the two (OpenAI-compatible chat with vLLM's
// or SGLang's reasoning parser: delta.reasoning or delta.reasoning_content beside
// delta.content) reports through it; an Observer without it sees every event as plain
// content, as before.
type ReasoningObserver interface {
	// Reasoning says that the next Content call is an event carrying reasoning text only (no
	// answer text, no tool call). It is called just before that Content call.
	Reasoning()
	// ReasoningTokens is the server's count of reasoning tokens
	// (usage.completion_tokens_details.reasoning_tokens; latest wins).
	ReasoningTokens(n int)
}

// ReportReasoning calls o.Reasoning when o is a ReasoningObserver.
func ReportReasoning(o Observer) {
	if r, ok := o.(ReasoningObserver); ok {
		r.Reasoning()
	}
}

// ReportReasoningTokens calls o.ReasoningTokens(n) when o is a ReasoningObserver.
func ReportReasoningTokens(o Observer, n int) {
	if r, ok := o.(ReasoningObserver); ok {
		r.ReasoningTokens(n)
	}
}

// Reasoning implements ReasoningObserver, passing the call on when the wrapped Observer
// takes it.
func (s *Serial) Reasoning() {
	if s.lock() {
		ReportReasoning(s.obs)
	}
	s.mu.Unlock()
}

// ReasoningTokens implements ReasoningObserver, passing the call on when the wrapped
// Observer takes it.
func (s *Serial) ReasoningTokens(n int) {
	if s.lock() {
		ReportReasoningTokens(s.obs, n)
	}
	s.mu.Unlock()
}

var _ ReasoningObserver = (*Serial)(nil)
