// Package workload builds the fixed, replayable set of requests a run sends.
package workload

import "time"

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message made (an agent's history: what the model
	// answered at its last step); ToolCallID names the call a "tool" message answers.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call in an assistant message, in OpenAI's shape.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is a called function's name and its arguments, a JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one materialised request of a workload: the prompt and the lengths it asks for.
// It holds no load settings (when to send) and no target (where to send).
type Request struct {
	ID       int       `json:"id"`
	Prompt   string    `json:"prompt,omitempty"`   // completions APIs
	Messages []Message `json:"messages,omitempty"` // chat APIs
	// InputTokens is the prompt length in tokens as measured by the tokenizer used to build
	// it (0 when unknown).
	InputTokens int `json:"input_tokens,omitempty"`
	// OutputTokens is the output length asked for (max_tokens; with FixedOutput also the minimum).
	OutputTokens int `json:"output_tokens"`
	// Session and Turn place the request in a multi-turn session (both count from 1; 0 is a
	// request of its own): a session's turns are sent in order, each after the last one's
	// answer and a think time, each with the whole history so far.
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// SessionKey is the session a replayed trace's row was recorded in (its session_id, the
	// key servebench capture recorded), sent as the request's session key as a multi-turn
	// session's own key is (client.Request.SessionKey); "" for none. Unlike Session it does
	// not make the request a turn the runner sends after an answer: a trace's turns keep
	// their arrivals (Trace, Follow).
	SessionKey string `json:"session_key,omitempty"`
	// Adapter is the LoRA adapter the request is sent to (its model field, as vLLM serves
	// LoRA); "" sends it to the run's model (lora.go).
	Adapter string `json:"adapter,omitempty"`
	// Media are the images and audio clips a chat request carries (media.go), as recipes.
	Media []Media `json:"media,omitempty"`
	// ToolTime, for a step of an agent trace, is the tool latency to wait before it (ns);
	// 0 draws it from the run's --tool-time.
	ToolTime time.Duration `json:"tool_time,omitempty"`
	// Answer is the right answer and how an output is scored against it (answers.go); nil
	// for a request that has none.
	Answer *Answer `json:"answer,omitempty"`
	// recipe, when set, stands for the prompt text (Lazy, Materialize: recipe.go)
	recipe *recipe
}
