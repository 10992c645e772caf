// Package triton is the backend for NVIDIA Triton's generate extension, as served for
// TensorRT-LLM: POST /v2/models/{model}/generate_stream with "text_input" and "max_tokens",
// an SSE stream of
//
//	data: {"model_name":"ensemble","model_version":"1","text_output":" the"}
//
// Triton reports no token counts and sends no end marker: a clean end of the body after at
// least one event is a complete answer, and output lengths are counted one per event
// (source "count") unless a tokenizer counts them.
package triton

import (
	"encoding/json"
	"errors"
	"net/url"

	"servebench/client"
)

// API is the name accepted by --api.
const API = "triton"

// New returns a backend for model on target t. Triton addresses models by name in the path,
// so the model is required.
func New(t client.Target, model string) (*client.EventBackend, error) {
	if model == "" {
		return nil, errors.New("triton: a model name is required (--model, e.g. ensemble)")
	}
	return client.Shape{API: API, Path: "/v2/models/" + url.PathEscape(model) + "/generate_stream", Body: body,
		Decoder: func() client.EventDecoder { return &decoder{} }}.New(t)
}

// body builds the request. The TensorRT-LLM ensemble takes ignore_eos for a fixed output.
func body(req *client.Request) ([]byte, error) {
	m := map[string]any{"text_input": client.PromptText(req), "stream": true}
	if n := req.OutputTokens; n > 0 {
		m["max_tokens"] = n
		if req.FixedOutput {
			m["ignore_eos"] = true
		}
	}
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("triton", req, m)
}

// event is one stream event.
type event struct {
	TextOutput *string         `json:"text_output"`
	Error      json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct{ events int }

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
	if ev.TextOutput != nil {
		o.Choice()
		if *ev.TextOutput != "" {
			o.Content(0)
		}
	}
	return false, nil
}

// Finished implements client.EventDecoder: Triton has no end marker, so a clean end after
// at least one event is complete. A body with no event at all is truncated.
func (d *decoder) Finished() bool { return d.events > 0 }
