package client

import "encoding/json"

// Tools are the function tools a chat request offers the model (OpenAI's "tools" array, sent
// as given) and how it may use them ("tool_choice": "auto", "required", "none" or a tool's
// name; "" sends none).
type Tools struct {
	List   json.RawMessage
	Choice string
}

// ToolCallObserver is an Observer that also takes the pieces of streamed tool calls. A backend
// that reads delta.tool_calls (OpenAI-compatible chat: vLLM, SGLang, llama.cpp, Ollama) calls
// it once per piece, after EventRead and before that event's Content call: index is the
// call's place in the answer, id, name and args what this piece adds (any may be empty).
type ToolCallObserver interface {
	ToolCallDelta(index int, id, name, args string)
}

// ReportToolCall calls o.ToolCallDelta when o is a ToolCallObserver.
func ReportToolCall(o Observer, index int, id, name, args string) {
	if t, ok := o.(ToolCallObserver); ok {
		t.ToolCallDelta(index, id, name, args)
	}
}

// ToolCallDelta implements ToolCallObserver, passing the call on when the wrapped Observer
// takes it.
func (s *Serial) ToolCallDelta(index int, id, name, args string) {
	if s.lock() {
		ReportToolCall(s.obs, index, id, name, args)
	}
	s.mu.Unlock()
}

var _ ToolCallObserver = (*Serial)(nil)
