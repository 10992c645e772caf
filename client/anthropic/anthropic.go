// Package anthropic is the backend for the Anthropic Messages API: POST /v1/messages with
// "stream": true, an SSE stream of typed events, each named on its "event:" line and again
// in its payload's "type":
//
//	message_start         {"message":{"id":…,"usage":{"input_tokens":25,"output_tokens":1}}}
//	content_block_start   {"index":0,"content_block":{"type":"text","text":""}}
//	content_block_delta   {"index":0,"delta":{"type":"text_delta","text":"Hello"}}
//	content_block_stop    {"index":0}
//	message_delta         {"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}
//	message_stop          {}
//	ping                  {} (any time; carries nothing)
//	error                 {"type":"error","error":{"type":"overloaded_error","message":"…"}}
//
// llama.cpp's server (with --jinja) and Anthropic's own API serve it. The key goes in the
// x-api-key header, not Authorization, and every request carries anthropic-version.
//
// Content: a text_delta with text, a thinking_delta (reasoning: reported as such) and an
// input_json_delta (a tool call's arguments) are generated output; a signature_delta and
// empty deltas are not. Token counts: message_start's usage has the prompt's input_tokens
// (llama.cpp may report them, or the cache's share, only in message_delta); message_delta's
// usage has the cumulative output_tokens. The latest of each wins.
package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"

	"servebench/client"
	"servebench/record"
)

// API is the name accepted by --api.
const API = "anthropic-messages"

// Version is the anthropic-version header sent unless the user's --header sets one: the
// API's stable version, which llama.cpp ignores and Anthropic requires.
const Version = "2023-06-01"

// DefaultMaxTokens is max_tokens when the workload asks for no output length: the Messages
// API requires the field.
const DefaultMaxTokens = 1024

// Shape is the Messages API: its request body and event decoder.
var Shape = client.Shape{API: API, Path: "/v1/messages", Body: body, Decoder: func() client.EventDecoder { return &decoder{} }}

// New is the registry constructor: Shape's backend on t with the key in x-api-key and the
// anthropic-version header set.
func New(t client.Target, opt client.Options) (client.Backend, error) {
	t.KeyHeader = "x-api-key"
	h := t.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("anthropic-version") == "" {
		h.Set("anthropic-version", Version)
	}
	t.Header = h
	return Shape.Backend(t, opt)
}

// message is one entry of "messages"; system prompts go in the top-level "system".
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// body builds the request: the workload's chat messages (a prompt becomes one user
// message), system messages joined into "system", max_tokens from the output length.
// Anthropic has no ignore_eos; a fixed-output request sends llama.cpp's and vLLM's
// ignore_eos extension, which those servers honour.
func body(req *client.Request) ([]byte, error) {
	m := map[string]any{"model": req.Model, "stream": true}
	var sys string
	msgs := make([]message, 0, len(req.Messages)+1)
	for _, wm := range req.Messages {
		if wm.Role == "system" {
			if sys != "" {
				sys += "\n"
			}
			sys += wm.Content
			continue
		}
		msgs = append(msgs, message{Role: wm.Role, Content: wm.Content})
	}
	if len(req.Messages) == 0 {
		msgs = append(msgs, message{Role: "user", Content: req.Prompt})
	}
	m["messages"] = msgs
	if sys != "" {
		m["system"] = sys
	}
	m["max_tokens"] = DefaultMaxTokens
	if n := req.OutputTokens; n > 0 {
		m["max_tokens"] = n
		if req.FixedOutput {
			m["ignore_eos"] = true
		}
	}
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody(API, req, m)
}

// usage is the token counts of message_start's message and of message_delta.
type usage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

// event is one stream payload.
type event struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *usage `json:"usage"`
	} `json:"message"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events        int
	input, output int
	done          bool
}

// Event implements client.EventDecoder.
func (d *decoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	d.events++
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, client.DecodeError(d.events, err, data)
	}
	if ev.Type == "error" || len(ev.Error) > 0 && string(ev.Error) != "null" {
		return false, &client.Error{Class: record.ErrStreamErrorEvent, Msg: client.ErrorMessage(data)}
	}
	switch ev.Type {
	case "message_start":
		o.Choice() // the message exists: the Messages API's counterpart of a role-only chunk
		if ev.Message != nil {
			if err := d.usage(ev.Message.Usage, o, data); err != nil {
				return false, err
			}
		}
	case "content_block_delta":
		if ev.Delta == nil {
			return false, client.DecodeError(d.events, fmt.Errorf("content_block_delta without a delta"), data)
		}
		switch {
		case ev.Delta.Type == "thinking_delta" && ev.Delta.Thinking != "":
			client.ReportReasoning(o)
			o.Content(0)
		case ev.Delta.Type == "text_delta" && ev.Delta.Text != "",
			ev.Delta.Type == "input_json_delta" && ev.Delta.PartialJSON != "":
			o.Content(0)
		}
	case "message_delta":
		if err := d.usage(ev.Usage, o, data); err != nil {
			return false, err
		}
	case "message_stop":
		d.done = true
		return true, nil
	case "":
		return false, client.DecodeError(d.events, fmt.Errorf("payload has no type"), data)
	}
	return false, nil // ping, content_block_start/stop, and types added later carry nothing we time
}

// usage checks and reports the counts of u; each count present replaces the last one seen.
func (d *decoder) usage(u *usage, o client.Observer, data []byte) *client.Error {
	if u == nil {
		return nil
	}
	for _, c := range []struct {
		name string
		v    *int
		dst  *int
	}{{"usage.input_tokens", u.InputTokens, &d.input}, {"usage.output_tokens", u.OutputTokens, &d.output}} {
		if c.v == nil {
			continue
		}
		if *c.v < 0 || *c.v > client.MaxTokenCount {
			return client.DecodeError(d.events, fmt.Errorf("%s = %d is not a token count", c.name, *c.v), data)
		}
		*c.dst = *c.v
	}
	o.Usage(d.input, d.output)
	return nil
}

// Finished implements client.EventDecoder: only message_stop ends a message.
func (d *decoder) Finished() bool { return d.done }
