// Package sglang is the backend for SGLang's native API: POST /generate with
// "sampling_params", an SSE stream ended by [DONE]:
//
//	data: {"text":"Hello world","meta_info":{"prompt_tokens":5,"completion_tokens":2,"finish_reason":null}}
//
// "text" is cumulative (the whole output so far) and meta_info.completion_tokens is the
// running count, so each event's token count is the growth of that count. The final event's
// finish_reason is non-null; its numeric meta_info fields (e2e_latency, cached_tokens ...)
// are reported as server figures "meta_info.<key>".
package sglang

import (
	"encoding/json"
	"sort"

	"servebench/client"
)

// API is the name accepted by New.
const API = "sglang"

// Backend sends requests to SGLang's /generate: a client.EventBackend with this package's body and
// decoder.
type Backend = client.EventBackend

// New returns a backend on target t.
func New(t client.Target) (*Backend, error) {
	if err := t.CheckURL("sglang"); err != nil {
		return nil, err
	}
	return &Backend{Target: t, Path: "/generate", Accept: "text/event-stream", Body: body,
		Frames: client.SSEFrames, Decoder: func() client.EventDecoder { return &decoder{} }}, nil
}

// body builds the request; a fixed output uses ignore_eos and min_new_tokens.
func body(req *client.Request) ([]byte, error) {
	sp := map[string]any{}
	if n := req.OutputTokens; n > 0 {
		sp["max_new_tokens"] = n
		if req.FixedOutput {
			sp["ignore_eos"], sp["min_new_tokens"] = true, n
		}
	}
	req.Sampling.Put(sp)
	m := map[string]any{"text": client.PromptText(req), "sampling_params": sp, "stream": true}
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("sglang", req, m)
}

// event is one stream event.
type event struct {
	Text     *string         `json:"text"`
	MetaInfo map[string]any  `json:"meta_info"`
	Error    json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events     int
	textLen    int // length of the cumulative text so far
	completion int // running completion_tokens
	finished   bool
}

// Event implements client.EventDecoder.
func (d *decoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	d.events++
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, client.DecodeError(d.events, err, data)
	}
	if e := client.ErrorPayload(ev.Error, data); e != nil {
		return false, e
	}
	if ev.Text == nil && ev.MetaInfo == nil {
		return false, nil
	}
	o.Choice()
	prompt, _ := ev.MetaInfo["prompt_tokens"].(float64)
	completion, _ := ev.MetaInfo["completion_tokens"].(float64)
	n := 0
	if int(completion) > d.completion {
		n = int(completion) - d.completion
	}
	// the text is cumulative: new text is growth (stream_output servers send increments,
	// which also grow the seen length)
	if ev.Text != nil && len(*ev.Text) > 0 && (len(*ev.Text) != d.textLen || n > 0) {
		o.Content(n)
		d.textLen = len(*ev.Text)
	}
	d.completion = max(d.completion, int(completion))
	if completion > 0 {
		o.Usage(int(prompt), int(completion))
	}
	if fr, ok := ev.MetaInfo["finish_reason"]; ok && fr != nil {
		d.finished = true
		reportMeta(ev.MetaInfo, o)
	}
	return false, nil // the stream still ends with [DONE]
}

// reportMeta passes on every numeric meta_info field, in key order.
func reportMeta(m map[string]any, o client.Observer) {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Server("meta_info."+k, m[k].(float64))
	}
}

// Finished implements client.EventDecoder: an EOF after a finish_reason is complete.
func (d *decoder) Finished() bool { return d.finished }
