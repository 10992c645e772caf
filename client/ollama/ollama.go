// Package ollama is the backend for Ollama's native API: POST /api/generate (prompt) and
// POST /api/chat (messages), streamed as NDJSON, one JSON object per line.
//
// Ollama's final object ("done": true) carries its own figures: prompt_eval_count and
// eval_count (the token counts, reported as usage) and durations in nanoseconds
// (total_duration, load_duration, prompt_eval_duration, eval_duration), reported as server
// figures in milliseconds so they can be checked against our own stamps.
package ollama

import (
	"encoding/json"
	"fmt"

	"servebench/client"
)

// API names accepted by New.
const (
	APIGenerate = "ollama"      // POST /api/generate with "prompt"
	APIChat     = "ollama-chat" // POST /api/chat with "messages"
)

// New returns a backend for api (APIGenerate or APIChat) on target t.
func New(t client.Target, api string) (*client.EventBackend, error) {
	if api != APIGenerate && api != APIChat {
		return nil, fmt.Errorf("ollama: unknown api %q (want %s or %s)", api, APIGenerate, APIChat)
	}
	chat := api == APIChat
	path := "/api/generate"
	if chat {
		path = "/api/chat"
	}
	return client.Shape{API: "ollama", Path: path, NDJSON: true,
		Body:    func(req *client.Request) ([]byte, error) { return body(req, chat) },
		Decoder: func() client.EventDecoder { return &decoder{} }}.New(t)
}

// body builds the request. Ollama has no ignore_eos; num_predict caps the output, so a
// fixed-output workload gets at most (usually exactly, for long answers) OutputTokens.
func body(req *client.Request, chat bool) ([]byte, error) {
	opts := map[string]any{}
	if req.OutputTokens > 0 {
		opts["num_predict"] = req.OutputTokens
	}
	req.Sampling.Put(opts)
	m := map[string]any{"model": req.Model, "stream": true, "options": opts}
	if chat {
		m["messages"] = chatMessages(req)
	} else {
		m["prompt"] = client.PromptText(req)
	}
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("ollama", req, m)
}

func chatMessages(req *client.Request) any {
	if len(req.Messages) > 0 || req.Prompt == "" {
		return req.Messages
	}
	return []map[string]string{{"role": "user", "content": req.Prompt}}
}

// object is one line of the stream.
type object struct {
	Response  string            `json:"response"`   // /api/generate
	Thinking  string            `json:"thinking"`   // /api/generate with think
	ToolCalls []json.RawMessage `json:"tool_calls"` // /api/generate of newer servers
	Message   struct {
		Content   string            `json:"content"`
		Thinking  string            `json:"thinking"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	} `json:"message"` // /api/chat
	Done               bool            `json:"done"`
	Error              json.RawMessage `json:"error"`
	PromptEvalCount    int             `json:"prompt_eval_count"`
	EvalCount          int             `json:"eval_count"`
	TotalDuration      int64           `json:"total_duration"`
	LoadDuration       int64           `json:"load_duration"`
	PromptEvalDuration int64           `json:"prompt_eval_duration"`
	EvalDuration       int64           `json:"eval_duration"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events int
	done   bool
}

// Event implements client.EventDecoder. Every object before the final one is a generation
// step; it carries output (Content with an unknown token count: Ollama does not say) or, for
// a chat's first step, nothing at all.
func (d *decoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	d.events++
	var obj object
	if err := json.Unmarshal(data, &obj); err != nil {
		return false, client.DecodeError(d.events, err, data)
	}
	if e := client.ErrorPayload(obj.Error, data); e != nil {
		return false, e
	}
	// Generated output is text, thinking or a tool call: a reasoning model may think for a
	// long time before its first word, and a tool-calling one may answer with nothing but a
	// call (Ollama sends each call whole, in one object); either is the first token's time.
	m := &obj.Message
	text := obj.Response != "" || obj.Thinking != "" || len(obj.ToolCalls) > 0 ||
		m.Content != "" || m.Thinking != "" || len(m.ToolCalls) > 0
	if !obj.Done || text {
		o.Choice()
	}
	if text {
		o.Content(0)
	}
	if !obj.Done {
		return false, nil
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"prompt_eval_count", obj.PromptEvalCount}, {"eval_count", obj.EvalCount}} {
		if c.v < 0 || c.v > client.MaxTokenCount {
			return false, client.DecodeError(d.events, fmt.Errorf("%s = %d is not a token count", c.name, c.v), data)
		}
	}
	d.done = true
	if obj.PromptEvalCount > 0 || obj.EvalCount > 0 {
		o.Usage(obj.PromptEvalCount, obj.EvalCount)
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	o.Server("ollama.eval_count", float64(obj.EvalCount))
	o.Server("ollama.eval_duration_ms", ms(obj.EvalDuration))
	o.Server("ollama.load_duration_ms", ms(obj.LoadDuration))
	o.Server("ollama.prompt_eval_count", float64(obj.PromptEvalCount))
	o.Server("ollama.prompt_eval_duration_ms", ms(obj.PromptEvalDuration))
	o.Server("ollama.total_duration_ms", ms(obj.TotalDuration))
	return true, nil
}

// Finished implements client.EventDecoder: only the final object ends a stream cleanly.
func (d *decoder) Finished() bool { return d.done }
