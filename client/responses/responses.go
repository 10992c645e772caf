// Package responses is the backend for the OpenAI Responses API: POST /v1/responses with
// "stream": true, as OpenAI, vLLM and SGLang serve it. The answer is an SSE stream of typed
// events, each named in the SSE "event:" line and again in the payload's "type":
//
//	event: response.created                   the response object, status in_progress (no output)
//	event: response.in_progress
//	event: response.output_item.added         an output item (message, reasoning) begins
//	event: response.content_part.added
//	event: response.output_text.delta         {"delta":" the", ...}: generated answer text
//	event: response.reasoning_text.delta      generated reasoning text (vLLM with a reasoning parser)
//	event: response.output_text.done …        the item's whole text, then the item closes
//	event: response.completed                 the final response object with "usage"
//
// llama.cpp (b11669) sends the same sequence without sequence numbers, with its "timings" beside
// the response in response.completed; they are reported as figures timings.*, as on chat.
//
// There is no [DONE]: response.completed (or response.incomplete, when max_output_tokens
// cut the answer) ends the stream. A failure mid-stream is an "error" event
// ({"type":"error","code":…,"message":…}) or response.failed, whose response.error holds
// the server's message; both are stream_error_event with the server's words. A stream that
// ends before a terminal event is truncated.
//
// Content events (docs/design/METRICS.md) are the deltas that carry generated text: output text,
// reasoning text, reasoning summary text, refusal text and function-call arguments. The
// Responses API has no per-event usage (vLLM's continuous_usage_stats is a chat and
// completions option), so per-event token counts are unknown: ITL (token) needs a tokenizer.
package responses

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"servebench/client"
	"servebench/record"
)

// API is the name accepted by --api.
const API = "openai-responses"

// Shape is the OpenAI Responses API, POST /v1/responses: its request body and its event decoder.
var Shape = client.Shape{API: API, Path: "/v1/responses", Body: body, Decoder: func() client.EventDecoder { return &decoder{} }}

// body builds the request. "store": false because a benchmark's answers are never fetched
// again: OpenAI stores responses by default, and vLLM keeps them in memory, unbounded, when
// VLLM_ENABLE_RESPONSES_API_STORE is set. A fixed output length is "ignore_eos" with
// max_output_tokens: vLLM's Responses endpoint accepts ignore_eos but has no min_tokens
// (OpenAI accepts neither, so --fixed-output is a cap there). Keys are sorted by
// encoding/json, so the bytes sent for a workload request are stable from run to run.
func body(req *client.Request) ([]byte, error) {
	m := map[string]any{"stream": true, "store": false, "input": input(req)}
	if req.Model != "" {
		m["model"] = req.Model
	}
	if n := req.OutputTokens; n > 0 {
		m["max_output_tokens"] = n
		if req.FixedOutput {
			m["ignore_eos"] = true
		}
	}
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("openai-responses", req, m)
}

// input is the request's "input": its chat messages as a message list (role and string
// content, the easy input message every server accepts), or its prompt as a string, which
// the server takes as one user message.
func input(req *client.Request) any {
	if len(req.Messages) == 0 {
		return req.Prompt
	}
	msgs := make([]map[string]string, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	return msgs
}

// event is the subset of a streamed event that matters.
type event struct {
	Type     *string         `json:"type"`
	Delta    json.RawMessage `json:"delta"`
	Message  string          `json:"message"` // the "error" event's
	Code     json.RawMessage `json:"code"`
	Error    json.RawMessage `json:"error"`   // a bare {"error": {...}} object some proxies send
	Timings  json.RawMessage `json:"timings"` // llama.cpp, beside the response in response.completed
	Response *struct {
		Status string          `json:"status"`
		Error  json.RawMessage `json:"error"`
		Usage  *usage          `json:"usage"`
	} `json:"response"`
}

// usage is the Responses API's usage object.
type usage struct {
	Input        int `json:"input_tokens"`
	Output       int `json:"output_tokens"`
	InputDetails *struct {
		Cached *int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputDetails *struct {
		Reasoning *int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// contentTypes are the delta events that carry generated text. output_text and
// reasoning_text are what vLLM and SGLang send; the rest are OpenAI's, for reasoning
// summaries, refusals and function calls (a tool-calling answer may be nothing else, and
// without them TTFT would be missing).
var contentTypes = map[string]bool{
	"response.output_text.delta":             true,
	"response.reasoning_text.delta":          true,
	"response.reasoning_summary_text.delta":  true,
	"response.refusal.delta":                 true,
	"response.function_call_arguments.delta": true,
}

// reasoningTypes are the delta events whose text is a reasoning model's thinking, not its
// answer: reported as reasoning (client.ReasoningObserver) before their content event, so
// that the record knows the first answer event (TTFO), as on chat.
var reasoningTypes = map[string]bool{
	"response.reasoning_text.delta":         true,
	"response.reasoning_summary_text.delta": true,
}

// delta is what a content delta event carries: text at all, and whether it is reasoning.
type delta struct{ content, reasoning bool }

// deltaOf is the delta of an event of type typ (one of contentTypes) with delta raw.
func deltaOf(typ string, raw []byte) delta {
	return delta{content: text(raw), reasoning: reasoningTypes[typ]}
}

// report tells the observer of a delta event: output has begun, and when it has text, a
// content event, announced as reasoning first when it is thinking.
func (d delta) report(o client.Observer) {
	o.Choice()
	if d.content {
		if d.reasoning {
			client.ReportReasoning(o)
		}
		o.Content(0)
	}
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events int
	done   bool
}

// Event implements client.EventDecoder.
func (d *decoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	d.events++
	if dl, ok := fastDelta(data); ok { // scan.go
		dl.report(o)
		return false, nil
	}
	return d.decode(data, o)
}

// decode is Event with encoding/json: every event the fast path does not answer.
func (d *decoder) decode(data []byte, o client.Observer) (bool, *client.Error) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, client.DecodeError(d.events, err, data)
	}
	if e := client.ErrorPayload(ev.Error, data); e != nil {
		return false, e
	}
	if ev.Type == nil {
		return false, client.DecodeError(d.events, fmt.Errorf("no \"type\": not a Responses API event"), data)
	}
	typ := *ev.Type
	switch {
	case contentTypes[typ]:
		deltaOf(typ, ev.Delta).report(o)
	case typ == "error":
		return false, errorEvent(ev, data)
	case typ == "response.failed":
		return false, failed(ev, data)
	case typ == "response.completed" || typ == "response.incomplete":
		return d.final(ev, data, o)
	case isOutput(typ):
		o.Choice() // an output item or part opened or closed: output has begun, no text yet
	}
	return false, nil
}

// Finished implements client.EventDecoder: without a terminal event the stream was cut.
func (d *decoder) Finished() bool { return d.done }

// isOutput reports whether an event type is about the response's output (an item, a
// content part, a finished text) rather than the response's life cycle: the Responses
// counterpart of a chat chunk with a choices entry, which is what first_event counts.
func isOutput(typ string) bool {
	rest, ok := strings.CutPrefix(typ, "response.")
	return ok && rest != "created" && rest != "in_progress" && rest != "queued"
}

// text reports whether a delta is a non-empty JSON string: an empty delta is no content.
func text(raw json.RawMessage) bool {
	return len(raw) > 2 && raw[0] == '"'
}

// final reports the usage of a response.completed or response.incomplete event and ends the
// stream. A response the server cancelled or failed is a failure even in this envelope.
func (d *decoder) final(ev event, data []byte, o client.Observer) (bool, *client.Error) {
	r := ev.Response
	if r == nil {
		return false, client.DecodeError(d.events, fmt.Errorf("%s has no \"response\"", *ev.Type), data)
	}
	switch r.Status {
	case "failed", "cancelled":
		return false, failed(ev, data)
	}
	if u := r.Usage; u != nil {
		if e := d.report(u, data, o); e != nil {
			return false, e
		}
	}
	reportTimings(ev.Timings, o)
	d.done = true
	return true, nil
}

// report checks and reports a usage object: input and output tokens as usage, the cached
// input tokens under the name the chat backend uses (so the prefix-cache warning reads it),
// and the reasoning tokens as a server figure.
func (d *decoder) report(u *usage, data []byte, o client.Observer) *client.Error {
	var cached, reasoning *int
	if u.InputDetails != nil {
		cached = u.InputDetails.Cached
	}
	if u.OutputDetails != nil {
		reasoning = u.OutputDetails.Reasoning
	}
	for _, c := range []count{{"input_tokens", &u.Input}, {"output_tokens", &u.Output},
		{"input_tokens_details.cached_tokens", cached}, {"output_tokens_details.reasoning_tokens", reasoning}} {
		if c.v != nil && (*c.v < 0 || *c.v > client.MaxTokenCount) {
			return client.DecodeError(d.events, fmt.Errorf("usage.%s = %d is not a token count", c.name, *c.v), data)
		}
	}
	if u.Input != 0 || u.Output != 0 {
		o.Usage(u.Input, u.Output)
	}
	if cached != nil { // absent is "not reported", not 0
		o.Server("usage.cached_tokens", float64(*cached))
	}
	if reasoning != nil {
		o.Server("usage.reasoning_tokens", float64(*reasoning))
		client.ReportReasoningTokens(o, *reasoning)
	}
	return nil
}

// count is a reported token count and its field name, for messages; nil when absent.
type count struct {
	name string
	v    *int
}

// reportTimings passes on every numeric field of llama.cpp's "timings" object as a figure
// timings.NAME, in key order (the chat backend's names: the summary reads timings.cache_n).
func reportTimings(raw json.RawMessage, o client.Observer) {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return // absent, or not an object: nothing we know how to report
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Server("timings."+k, m[k].(float64))
	}
}

// errorEvent is the failure an "error" event stands for: its message, with its code.
func errorEvent(ev event, data []byte) *client.Error {
	msg := ev.Message
	if msg == "" {
		msg = client.ErrorMessage(data)
	}
	return &client.Error{Class: record.ErrStreamErrorEvent, Msg: withCode(msg, ev.Code)}
}

// failed is the failure a response.failed event (or a terminal event whose status is failed
// or cancelled) stands for: the response's error message with its code, or its status.
func failed(ev event, data []byte) *client.Error {
	r := ev.Response
	if r == nil {
		return &client.Error{Class: record.ErrStreamErrorEvent, Msg: "response.failed: " + client.ErrorMessage(data)}
	}
	var e struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		if json.Unmarshal(r.Error, &e) != nil || e.Message == "" {
			e.Message = client.ErrorMessage(r.Error)
		}
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("the server ended the response with status %q and no error message", r.Status)
	}
	return &client.Error{Class: record.ErrStreamErrorEvent, Msg: withCode(e.Message, e.Code)}
}

// withCode prefixes msg with an error code when there is one ("server_error: ...").
func withCode(msg string, code json.RawMessage) string {
	var s string
	if json.Unmarshal(code, &s) == nil && s != "" {
		return s + ": " + msg
	}
	if len(code) > 0 && string(code) != "null" && code[0] != '"' {
		return string(code) + ": " + msg
	}
	return msg
}
