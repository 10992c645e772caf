package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"

	"servebench/client"
	"servebench/client/sse"
	"servebench/record"
)

// streams recycles the per-request stream state: the 64 KiB read buffer and the decode
// buffers. At high concurrency, allocating them per request showed up as GC work in the
// load generator, which is exactly the client overhead a benchmark must keep small.
var streams = sync.Pool{New: func() any { return &streamState{r: sse.NewReader(nil)} }}

// streamState is what reading one response stream needs.
type streamState struct {
	r *sse.Reader
	d decoder
}

// stream reads the event stream in body until it ends, reporting to o.
func (b *Backend) stream(ctx context.Context, body io.Reader, o client.Observer) error {
	st := streams.Get().(*streamState)
	st.r.Reset(body)
	st.d.reset()
	defer func() {
		st.r.Reset(nil) // drop the body so the pool does not keep it alive
		streams.Put(st)
	}()
	for {
		data, err := st.r.Next()
		if err != nil {
			return b.end(ctx, &st.d, err, o)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue // an empty data field is a keep-alive, not an event
		}
		o.EventRead() // stamp first: decoding time is the client's, not the server's
		if string(st.r.Type()) == "error" {
			return &client.Error{Class: record.ErrStreamErrorEvent, Msg: b.target.Redact(client.ErrorMessage(data))}
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			o.Done()
			return nil
		}
		if err := st.d.event(data, o); err != nil {
			err.Msg = b.target.Redact(err.Msg)
			return err
		}
	}
}

// end decides what a stream that ended without [DONE] was. A clean EOF after a finish_reason
// is a complete answer from a server that omits the end marker; anything else before
// [DONE] is a cut stream (docs/design/METRICS.md: truncated), unless our own context ended it.
func (b *Backend) end(ctx context.Context, d *decoder, err error, o client.Observer) error {
	if e := client.ContextError(ctx, b.target, err); e != nil {
		return e
	}
	switch {
	case err == io.EOF && d.finished:
		o.Done()
		return nil
	case err == sse.ErrEventTooLarge:
		return &client.Error{Class: record.ErrDecode, Msg: fmt.Sprintf("after %d events: %v", d.events, err)}
	case err == io.EOF:
		return &client.Error{Class: record.ErrTruncated, Msg: fmt.Sprintf("stream ended after %d events without [DONE] or finish_reason", d.events)}
	default:
		return &client.Error{Class: record.ErrTruncated, Msg: b.target.Redact(fmt.Sprintf("stream cut after %d events: %v", d.events, err))}
	}
}

// decoder turns event payloads into Observer calls. Only the fields servebench needs are
// decoded, into reused storage: flag types record "non-empty" without allocating the text.
type decoder struct {
	src        bytes.Reader
	dec        *json.Decoder
	c          chunk
	attributed int  // completion_tokens already carried by content events (see report)
	finished   bool // a non-null finish_reason was seen
	events     int  // events decoded, for messages
	timings    map[string]any
	textTo     client.TextObserver // the observer that wants the answer text (text.go), or nil
}

// chunk is the subset of a streamed completion/chat chunk that matters.
type chunk struct {
	Choices []choice   `json:"choices"`
	Usage   usage      `json:"usage"`
	Error   rawValue   `json:"error"`
	Object  objectKind `json:"object"`
	Timings rawValue   `json:"timings"` // llama.cpp, on the final chunk
}

type choice struct {
	Text         flag   `json:"text"` // completions
	Delta        delta  `json:"delta"`
	FinishReason finish `json:"finish_reason"`
}

type delta struct {
	Content          flag `json:"content"`
	ReasoningContent flag `json:"reasoning_content"` // vLLM, SGLang, DeepSeek
	Reasoning        flag `json:"reasoning"`         // Ollama, OpenRouter, newer vLLM
	// ToolCalls is generated output too: a tool-calling model may answer with nothing but a
	// streamed call (vLLM, SGLang, llama.cpp and Ollama send its name and arguments in
	// pieces), and without it TTFT would be missing or wait for the first plain text.
	ToolCalls toolCalls `json:"tool_calls"`
}

type usage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
	// Details carries the prompt tokens the server took from its prefix cache (vLLM with
	// prefix caching, llama.cpp): servebench warns when a run measured cache hits.
	Details usageDetails `json:"prompt_tokens_details"`
	// Completion details carry the reasoning tokens of a reasoning model (reasoning.go).
	CompDetails completionDetails `json:"completion_tokens_details"`
}

// usageDetails is OpenAI's usage.prompt_tokens_details.
type usageDetails struct {
	Cached int `json:"cached_tokens"`
	// hasCached is true when the server sent cached_tokens at all: a vLLM started without
	// --enable-prompt-tokens-details sends no details, which is "not reported", not 0.
	hasCached bool
}

// UnmarshalJSON is encoding/json's path (the scanner's fallback) with the same presence rule.
func (d *usageDetails) UnmarshalJSON(b []byte) error {
	var v struct {
		Cached *int `json:"cached_tokens"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Cached != nil {
		d.Cached, d.hasCached = *v.Cached, true
	}
	return nil
}

// nonZero reports whether u is a real report: Ollama sends a zero-filled usage on every
// chunk, which is neither a count nor the final usage.
func (u usage) nonZero() bool { return u.Prompt != 0 || u.Completion != 0 || u.Total != 0 }

// flag is true when a JSON value is present and neither null nor "".
type flag bool

// UnmarshalJSON implements json.Unmarshaler without copying the value.
func (f *flag) UnmarshalJSON(b []byte) error {
	*f = flag(string(b) != "null" && string(b) != `""`)
	return nil
}

// list is true when a JSON value is present and neither null, "" nor an empty array.
type list bool

// UnmarshalJSON implements json.Unmarshaler without copying the value.
func (l *list) UnmarshalJSON(b []byte) error {
	*l = listOf(b)
	return nil
}

// listOf classifies one JSON value's bytes as list.UnmarshalJSON does; the fast path shares it.
func listOf(b []byte) list {
	if len(b) > 0 && b[0] == '[' {
		rest := bytes.TrimLeft(b[1:], " \t\r\n")
		return list(len(rest) > 0 && rest[0] != ']')
	}
	return list(string(b) != "null" && string(b) != `""`)
}

// finish is a choice's finish_reason: none (null or ""), a normal end, or "abort".
type finish uint8

const (
	finishNone finish = iota
	finishEnd
	// finishAbort: the server gave up on the request (SGLang's OpenAI routes when the
	// scheduler aborts it, vLLM when the engine does). The stream still ends in order, so
	// without this the failure would be counted as a complete, short answer.
	finishAbort
)

// UnmarshalJSON implements json.Unmarshaler without copying the value.
func (f *finish) UnmarshalJSON(b []byte) error {
	*f = finishOf(b)
	return nil
}

// finishOf classifies one JSON value's bytes as finish.UnmarshalJSON does; the fast path
// shares it.
func finishOf(b []byte) finish {
	switch string(b) {
	case "null", `""`:
		return finishNone
	case `"abort"`:
		return finishAbort
	}
	return finishEnd
}

// rawValue keeps a JSON value that is not null, in a buffer reused between events.
type rawValue struct {
	b   []byte
	set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *rawValue) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		r.b, r.set = append(r.b[:0], b...), true
	}
	return nil
}

// objectKind records whether "object" is "error" (an error sent as a bare error object).
type objectKind bool

// UnmarshalJSON implements json.Unmarshaler.
func (o *objectKind) UnmarshalJSON(b []byte) error {
	*o = objectKind(string(b) == `"error"`)
	return nil
}

// unmarshal decodes one event payload into d.c with the strictness of json.Unmarshal: one
// JSON value, nothing after it. It uses a long-lived json.Decoder because json.Unmarshal
// allocates its decode and scanner state on every call (7-8 allocations per event, measured)
// while a Decoder keeps them. A Decoder that failed may hold half-read input, so it is
// replaced after any error.
func (d *decoder) unmarshal(data []byte) error {
	data = bytes.TrimSpace(data)
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.src)
	}
	d.src.Reset(data)
	start := d.dec.InputOffset()
	err := d.dec.Decode(&d.c)
	// Every earlier payload was consumed exactly, so this one must end where its value ends.
	if n := d.dec.InputOffset() - start; err == nil && n != int64(len(data)) {
		err = fmt.Errorf("data after the JSON value at offset %d", n)
	}
	if err != nil {
		d.dec = nil
	}
	return err
}

func (d *decoder) reset() {
	d.attributed, d.finished, d.events = 0, false, 0
}

// event decodes one payload and reports it: Choice, then Content, then Usage, then server
// timings. It returns a decode or stream_error_event Error; the caller stops reading then.
func (d *decoder) event(data []byte, o client.Observer) *client.Error {
	d.events++
	c := &d.c
	if d.resetChunk(); !d.fast(bytes.TrimSpace(data)) { // scan.go; encoding/json when in doubt
		d.resetChunk()
		if err := d.unmarshal(data); err != nil {
			return &client.Error{Class: record.ErrDecode, Msg: fmt.Sprintf("event %d: %v: %s", d.events, err, excerpt(data))}
		}
	}
	if c.Error.set || bool(c.Object) {
		msg := client.ErrorMessage(data)
		if c.Error.set {
			msg = client.ErrorMessage(c.Error.b)
		}
		return &client.Error{Class: record.ErrStreamErrorEvent, Msg: msg}
	}
	if e := c.Usage.check(); e != "" {
		return &client.Error{Class: record.ErrDecode, Msg: fmt.Sprintf("event %d: %s: %s", d.events, e, excerpt(data))}
	}
	d.report(o)
	d.passText(data, o) // text.go
	for i := range c.Choices {
		if c.Choices[i].FinishReason == finishAbort {
			return &client.Error{Class: record.ErrStreamErrorEvent, Msg: fmt.Sprintf("event %d: the server aborted the request (finish_reason \"abort\")", d.events)}
		}
	}
	return nil
}

// check returns why u is not a usage report ("usage.completion_tokens = -100 is not a token
// count"), or "". encoding/json already refuses a string, fraction or exponent for these int
// fields and names the field; this catches what an int holds but a count cannot be.
func (u *usage) check() string {
	for _, f := range [...]struct {
		name string
		v    int
	}{{"prompt_tokens", u.Prompt}, {"completion_tokens", u.Completion}, {"total_tokens", u.Total},
		{"prompt_tokens_details.cached_tokens", u.Details.Cached},
		{"completion_tokens_details.reasoning_tokens", u.CompDetails.Reasoning}} {
		if f.v < 0 || f.v > client.MaxTokenCount {
			return fmt.Sprintf("usage.%s = %d is not a token count", f.name, f.v)
		}
	}
	return ""
}

// resetChunk empties d.c for the next payload, keeping its buffers.
func (d *decoder) resetChunk() {
	c := &d.c
	clear(c.Choices[:cap(c.Choices)]) // encoding/json does not zero reused slice elements
	c.Choices, c.Usage, c.Object = c.Choices[:0], usage{}, false
	c.Error.set, c.Timings.set = false, false
}

// report makes the Observer calls for the decoded chunk d.c.
func (d *decoder) report(o client.Observer) {
	c := &d.c
	content := false
	for i := range c.Choices {
		ch := &c.Choices[i]
		dl := &ch.Delta
		content = content || bool(ch.Text || dl.Content || dl.ReasoningContent || dl.Reasoning) || bool(dl.ToolCalls.any)
		d.finished = d.finished || ch.FinishReason != finishNone
	}
	if len(c.Choices) > 0 {
		o.Choice()
	}
	if content {
		d.reportToolCalls(o) // tools.go
		if c.reasoningOnly() {
			client.ReportReasoning(o)
		}
		o.Content(d.tokens())
	}
	if c.Usage.nonZero() {
		o.Usage(c.Usage.Prompt, c.Usage.Completion)
		if c.Usage.Details.hasCached {
			o.Server("usage.cached_tokens", float64(c.Usage.Details.Cached))
		}
		if c.Usage.CompDetails.hasReasoning {
			client.ReportReasoningTokens(o, c.Usage.CompDetails.Reasoning)
		}
	}
	if c.Timings.set {
		d.reportTimings(o)
	}
}

// tokens is the token count of the content event in d.c: with vLLM's
// continuous_usage_stats every chunk carries the running completion_tokens, and the event
// carries what that count grew by since the last content event. Chunks without text still
// advance the count (a special token, or bytes of a multi-byte character the detokenizer
// holds back until the character is whole); their tokens are carried to the next content
// event rather than dropped, so the per-event counts add up to completion_tokens and ITL
// (token) divides the whole gap among every token generated in it (docs/design/METRICS.md) instead of
// overstating it. Tokens after the last content event (an end-of-sequence token has no text)
// are in the usage only: no later event carries them, and TTFT and ITL need none. Without a
// count on the chunk the number is unknown (0).
func (d *decoder) tokens() int {
	u := &d.c.Usage
	if !u.nonZero() || u.Completion <= d.attributed {
		return 0
	}
	n := u.Completion - d.attributed
	d.attributed = u.Completion
	return n
}

// reportTimings passes on every numeric field of llama.cpp's "timings" object, in key order.
// It runs once per stream, so a generic decode is fine here.
func (d *decoder) reportTimings(o client.Observer) {
	clear(d.timings)
	if json.Unmarshal(d.c.Timings.b, &d.timings) != nil {
		return // not an object: nothing we know how to report
	}
	keys := make([]string, 0, len(d.timings))
	for k, v := range d.timings {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Server("timings."+k, d.timings[k].(float64))
	}
}

// excerpt returns the start of a payload for an error message.
func excerpt(data []byte) string {
	const n = 120
	if len(data) <= n {
		return string(data)
	}
	return string(data[:n]) + "…"
}
